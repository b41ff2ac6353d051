#!/bin/bash
# Concurrency (issue 8.4, 14.6): 4 writer threads setting 50 variables
# each, 4 reader threads on variable files, env_file and a config-set
# variable, and the config rewritten every 10 ms (in place and by rename),
# for STRESS_SECONDS (10 by default), and on until enough writes over
# enough variables were acknowledged (a sanitizer build on a loaded
# machine makes fewer in that time). No value read is torn (every read is
# exactly one written value, and fstat's size agrees with the bytes), none
# is older than a write whose close() had returned when the read began,
# the config's variable is never missing, and after a remount with the
# same --state every variable holds its last acknowledged write. Then the
# readers and the rewriter again on a -o ro mount (STRESS_RO_SECONDS, 5 by
# default), where reads come without an open. The threads are
# tests/mount/stress.py.
. "$(dirname "$0")/lib.sh"

SECONDS_RUN=${STRESS_SECONDS:-10}
# Under ThreadSanitizer a write costs several times as much: 10 s saw
# 54 writes there, so 40 acknowledged writes over 30 variables prove it.
if [ -z "${STRESS_SECONDS:-}" ] && grep -qa __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	export STRESS_MIN_WRITES=${STRESS_MIN_WRITES:-40}
	export STRESS_MIN_VARS=${STRESS_MIN_VARS:-30}
fi
cfg="$TMP/exp.yaml"
state="$TMP/run.state.yaml"
result="$TMP/stress.json"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$ENVFS_SPECS" --config "$cfg" --state "$state")
# The config stress.py writes, its version 0.
"$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import stress
stress.write_config(sys.argv[2], 0)' "$(dirname "$0")" "$cfg"

envfs_mount "${IN[@]}"
"$PYTHON" "$(dirname "$0")/stress.py" run "$dir" "$cfg" "$SECONDS_RUN" "$result" ||
	fail "stress run (see above)"

# The last config rewrite is served, under the overrides.
last_cfg=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["config_last"])' "$result")
want_cfg=$("$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import stress
print(stress.cfg_value(int(sys.argv[2])))' "$(dirname "$0")" "$last_cfg")
wait_for_value "$dir/MOUNT_STRESS_CFG" "$want_cfg" 1000 >/dev/null
! grep -q '^W[01]_[01]=from-config' "$dir/env_file" || fail "the config shadows an override"
gen1=$(sed -n 's/^generation: //p' "$MNT/status")
envfs_umount

envfs_mount "${IN[@]}"
"$PYTHON" "$(dirname "$0")/stress.py" verify "$dir" "$result" ||
	fail "a variable lost its last acknowledged write across the remount"
"$PYTHON" -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$state" ||
	fail "the state file is not YAML"
envfs_umount

envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" -o ro
"$PYTHON" "$(dirname "$0")/stress.py" ro "$dir" "$cfg" "${STRESS_RO_SECONDS:-5}" ||
	fail "stress run on -o ro (see above)"
envfs_umount
note "generation reached $gen1"
echo "stress: ok"

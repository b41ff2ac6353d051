#!/bin/bash
# Concurrency (issue 8.4): 4 writer threads setting 50 variables each, 4
# reader threads on variable files and env_file, and the config replaced
# every 100 ms, for STRESS_SECONDS (10 by default). No value read is torn,
# none is older than a write whose close() had returned when the read
# began, and after a remount with the same --state every variable holds
# its last acknowledged write. The threads are tests/mount/stress.py.
. "$(dirname "$0")/lib.sh"

SECONDS_RUN=${STRESS_SECONDS:-10}
cfg="$TMP/exp.yaml"
state="$TMP/run.state.yaml"
result="$TMP/stress.json"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$ENVFS_SPECS" --config "$cfg" --state "$state")
printf 'env:\n  MOUNT_STRESS_CFG: "c0"\n  W0_0: "from-config-0"\n  W1_1: "from-config-0"\n' >"$cfg"

envfs_mount "${IN[@]}"
"$PYTHON" "$(dirname "$0")/stress.py" run "$dir" "$cfg" "$SECONDS_RUN" "$result" ||
	fail "stress run (see above)"

# The last config rewrite is served, under the overrides.
last_cfg=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["config_last"])' "$result")
wait_for_value "$dir/MOUNT_STRESS_CFG" "c$last_cfg" 1000 >/dev/null
! grep -q '^W[01]_[01]=from-config' "$dir/env_file" || fail "the config shadows an override"
gen1=$(sed -n 's/^generation: //p' "$MNT/status")
envfs_umount

envfs_mount "${IN[@]}"
"$PYTHON" "$(dirname "$0")/stress.py" verify "$dir" "$result" ||
	fail "a variable lost its last acknowledged write across the remount"
"$PYTHON" -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$state" ||
	fail "the state file is not YAML"
envfs_umount
note "generation reached $gen1"
echo "stress: ok"

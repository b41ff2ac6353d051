#!/bin/bash
# The mount's history: every change is a generation with its time, cause
# and writer (uid and pid of the process, as FUSE gives them) and each
# changed variable's value and layer before and after; a secret's values
# are never kept; the last history=N are kept; `primus-envfs history`
# prints one directory's, text and JSON (valid against its schema);
# explain shows an overridden variable's last change; diff of a record
# against the mount after a change names the change.
. "$(dirname "$0")/lib.sh"

cfg="$TMP/exp.yaml"
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" -o history=5
dir="$MNT/env/maxtext/gfx950"
SCHEMA="$ENVFS_SPECS/schemas/history.schema.json"
hist() { "$ENVFS_BIN" history --mount "$MNT" "$@"; }

[ "$(stat -c %a "$MNT/history")" = 444 ] || fail "history mode $(stat -c %a "$MNT/history")"
grep -q '"cause":"start"' "$MNT/history" || fail "no start generation: $(cat "$MNT/history")"

# A write, as a process whose pid we know.
bash -c 'echo 7 >"$1"; echo $$ >"$2"' _ "$dir/NNODES" "$TMP/pid"
pid=$(cat "$TMP/pid")
hist maxtext/gfx950 NNODES >"$TMP/h1"
grep -qE "^gen [0-9]+  [0-9T:.-]+Z  write  uid $(id -u) pid $pid\$" "$TMP/h1" ||
	fail "the write's generation does not name its writer (pid $pid): $(cat "$TMP/h1")"
grep -qx '  maxtext/gfx950 NNODES: "1" runner -> "7" override' "$TMP/h1" ||
	fail "the write's change: $(cat "$TMP/h1")"
# The derived values changed in the same generation (NNODES > 1).
hist maxtext/gfx950 JAX_COORDINATOR_IP | grep >/dev/null -x '  maxtext/gfx950 JAX_COORDINATOR_IP: (unset) -> "localhost" backend' ||
	fail "a value derived from the write is not in its generation"
# explain shows the override's last change.
grep -q "override last changed .*through the mount by uid $(id -u) pid $pid" "$dir/explain" ||
	fail "explain does not show NNODES' last change: $(grep -A8 '^NNODES' "$dir/explain")"

# mv, rm, and a reload, each one generation with its cause.
mv "$dir/NNODES" "$dir/NNODES_MOVED"
rm "$dir/NNODES_MOVED"
printf 'env:\n  NCCL_DEBUG: "WARN"\n' >"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$dir/NCCL_DEBUG" WARN "$(scaled_ms 10000)" >/dev/null
hist maxtext/gfx950 >"$TMP/h2"
for c in write mv rm reload; do
	grep -qE "^gen [0-9]+  [^ ]+  $c( |\$)" "$TMP/h2" || fail "no $c generation: $(cat "$TMP/h2")"
done
grep -qx '  maxtext/gfx950 NNODES_MOVED: "7" override -> (unset)' "$TMP/h2" || fail "rm's change: $(cat "$TMP/h2")"
grep -qx '  maxtext/gfx950 NCCL_DEBUG: "INFO" config -> "WARN" config' "$TMP/h2" || fail "reload's change: $(cat "$TMP/h2")"
grep -E '^gen [0-9]+  [^ ]+  reload' "$TMP/h2" | grep >/dev/null ' uid ' && fail "a reload names a writer"
# diff against a generation: the mount as it was at its start.
start=$(sed -n 's/^gen \([0-9]*\) .* start$/\1/p' "$TMP/h2" | head -1)
[ -n "$start" ] || fail "no start generation in the text: $(head -3 "$TMP/h2")"
set +e
"$ENVFS_BIN" diff "gen:$start" "mount:$MNT" -b maxtext -a gfx950 >"$TMP/dg" 2>"$TMP/dg.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diff gen:$start mount: exit $rc: $(cat "$TMP/dg" "$TMP/dg.err")"
grep -qx 'changed NCCL_DEBUG' "$TMP/dg" && grep -qxF "  a: \"INFO\"  config  $cfg:2" "$TMP/dg" &&
	grep -qxF "  b: \"WARN\"  config  $cfg:2" "$TMP/dg" || fail "diff gen:$start: $(cat "$TMP/dg")"
grep -q 'NNODES' "$TMP/dg" && fail "NNODES is back as it was, yet diff names it: $(cat "$TMP/dg")"
last=$(sed -n 's/^gen \([0-9]*\) .*$/\1/p' "$TMP/h2" | tail -1)
"$ENVFS_BIN" diff "mount:$MNT" "gen:$last" -b maxtext -a gfx950 >/dev/null ||
	fail "the mount differs from its last generation"
# Reading a history needs no sync module (the etcd client, libcurl): both
# work where none is installed.
PRIMUS_ENVFS_SYNC_MODULE="$TMP/no-module.so" "$ENVFS_BIN" diff "mount:$MNT" "gen:$last" \
	-b maxtext -a gfx950 >/dev/null 2>"$TMP/nm.err" || fail "diff gen: needs the sync module: $(cat "$TMP/nm.err")"
PRIMUS_ENVFS_SYNC_MODULE="$TMP/no-module.so" hist maxtext/gfx950 >"$TMP/nm.out" 2>"$TMP/nm.err" &&
	cmp -s "$TMP/nm.out" "$TMP/h2" || fail "history needs the sync module: $(cat "$TMP/nm.err")"
set +e
"$ENVFS_BIN" diff "mount:$MNT" gen:99999 -b maxtext -a gfx950 >/dev/null 2>"$TMP/dg.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q 'keeps no generation 99999' "$TMP/dg.err" || fail "gen:99999: exit $rc, $(cat "$TMP/dg.err")"
# Writing the value a variable already has pins it (an override now):
# a change of layer, in the history (it left none).
[ "$(cat "$dir/GPUS_PER_NODE")" = 8 ] || fail "GPUS_PER_NODE is $(cat "$dir/GPUS_PER_NODE"), not 8"
echo 8 >"$dir/GPUS_PER_NODE"
hist maxtext/gfx950 GPUS_PER_NODE | tail -1 | grep -qx '  maxtext/gfx950 GPUS_PER_NODE: "8" runner -> "8" override' ||
	fail "a same-value write: $(hist maxtext/gfx950 GPUS_PER_NODE)"
rm "$dir/GPUS_PER_NODE"
# Against a generation, XLA_FLAGS is compared flag by flag too: one
# flag appended shows as that flag alone (every flag was shown removed,
# the generation's side having no flags).
g=$(sed -n 's/^generation: //p' "$MNT/status")
echo "--xla_hist_extra=1" >"$dir/XLA_FLAGS_APPEND"
set +e
"$ENVFS_BIN" diff "mount:$MNT" "gen:$g" -b maxtext -a gfx950 >"$TMP/dx" 2>"$TMP/dx.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diff gen:$g after an append: exit $rc: $(cat "$TMP/dx" "$TMP/dx.err")"
grep -qx '  removed --xla_hist_extra: "--xla_hist_extra=1" override' "$TMP/dx" ||
	fail "diff gen:$g: the appended flag: $(cat "$TMP/dx")"
[ "$(grep -c '^  removed --\|^  added --\|^  changed --' "$TMP/dx")" -eq 1 ] ||
	fail "diff gen:$g names other flags than the appended one: $(cat "$TMP/dx")"
rm "$dir/XLA_FLAGS_APPEND"
# Another directory's history does not show these.
hist maxtext/gfx942 NNODES | grep >/dev/null 'NNODES' && fail "maxtext/gfx942 shows gfx950's change"
# A directory the mount has not and no generation names is an error (it
# listed the start alone and exited 0, as if nothing had changed there).
for bad in maxtext/nosuch nosuch/gfx950; do
	set +e
	hist "$bad" >"$TMP/hbad" 2>"$TMP/hbad.err"
	rc=$?
	set -e
	[ "$rc" -eq 2 ] && [ ! -s "$TMP/hbad" ] && grep -q "$bad: no such directory in the mount" "$TMP/hbad.err" ||
		fail "history $bad: exit $rc: $(cat "$TMP/hbad" "$TMP/hbad.err")"
done
for bad in maxtext/. maxtext/.. ../env; do
	set +e
	hist "$bad" >"$TMP/hbad" 2>"$TMP/hbad.err"
	rc=$?
	set -e
	[ "$rc" -eq 64 ] && [ ! -s "$TMP/hbad" ] || fail "history $bad: exit $rc: $(cat "$TMP/hbad" "$TMP/hbad.err")"
done

# JSON, valid against the shipped schema, filtered the same way.
hist maxtext/gfx950 NNODES --format json >"$TMP/h.json"
"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$SCHEMA" "$TMP/h.json" || fail "history --format json is not valid"
"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$SCHEMA" "$MNT/history" || fail "the history file is not valid"

# A secret: only whether it was set, never its value.
py_errno "put('$dir/HF_TOKEN', 'tok-history-1\n')" >/dev/null
py_errno "put('$dir/HF_TOKEN', 'tok-history-2\n')" >/dev/null
hist maxtext/gfx950 HF_TOKEN >"$TMP/hs"
grep -qx '  maxtext/gfx950 HF_TOKEN: (secret) override -> (secret) override' "$TMP/hs" ||
	fail "a secret's change: $(cat "$TMP/hs")"
! grep -q 'tok-history' "$MNT/history" "$TMP/hs" || fail "the history holds the secret"
# An override made private (chmod 600) after its write loses its values
# in the generations kept, at once: they stayed readable in the 0444
# history until the next reload.
echo chmod-sekrit-1 >"$dir/ENVFS_HIST_KEY"
echo chmod-sekrit-2 >"$dir/ENVFS_HIST_KEY"
grep -q chmod-sekrit-1 "$MNT/history" || fail "the control: the history lacks a public write"
chmod 600 "$dir/ENVFS_HIST_KEY"
! grep -q chmod-sekrit "$MNT/history" || fail "the history keeps a value made private by chmod 600"
hist maxtext/gfx950 ENVFS_HIST_KEY | grep -qx '  maxtext/gfx950 ENVFS_HIST_KEY: (secret) override -> (secret) override' ||
	fail "a value made private: $(hist maxtext/gfx950 ENVFS_HIST_KEY)"

# history=5: only the last five generations are kept.
for v in 11 12 13 14 15 16; do echo "$v" >"$dir/GPUS_PER_NODE"; done
n=$(grep -o '"generation":' "$MNT/history" | wc -l)
[ "$n" -eq 5 ] || fail "history=5 keeps $n generations"
grep -q '"after":{"set":true,"value":"16"' "$MNT/history" || fail "the last write is not kept"
envfs_umount

# Bad option values and a missing history are refused.
set +e
"$ENVFS_BIN" --specs "$ENVFS_SPECS" -o history=abc -f "$MNT" 2>"$TMP/bad.err"
rc=$?
set -e
[ "$rc" -eq 64 ] && grep -q 'history=abc: expected a number of generations' "$TMP/bad.err" ||
	fail "-o history=abc: exit $rc, $(cat "$TMP/bad.err")"
set +e
"$ENVFS_BIN" history --mount "$TMP" maxtext/gfx950 2>"$TMP/none.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q 'not a primus-envfs mount' "$TMP/none.err" || fail "history of no mount: exit $rc, $(cat "$TMP/none.err")"
echo "ok: history"

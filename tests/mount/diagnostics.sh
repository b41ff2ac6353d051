#!/bin/bash
# MOUNT/diagnostics lists each diagnostic once, with the directories it
# applies to (issue 15): a warning of every directory once, marked
# [every directory]; one of some directories with their names; one of an
# input with no label. The same after a write commits (the file is
# rebuilt then) and after a reload.
. "$(dirname "$0")/lib.sh"

cfg="$TMP/exp.yaml"
cat >"$cfg" <<'YAML'
env:
  DUMP_HLO_DIR: "${OUTPUT_DIR:output}"
  XLA_FLAGS: "--xla_gpu_autotune_level=2"
  XLA_PYTHON_CLIENT_MEM_FRACTION: 0.96
YAML
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"

# check_diags WHEN: the expectations above hold for MOUNT/diagnostics now.
check_diags() {
	local d="$TMP/diags"
	cp "$MNT/diagnostics" "$d"
	[ -z "$(sort "$d" | uniq -d)" ] || fail "$1: repeated lines: $(sort "$d" | uniq -d | head -3)"
	[ "$(grep -c 'DUMP_HLO_DIR' "$d")" -eq 1 ] || fail "$1: DUMP_HLO_DIR's warning not once: $(cat "$d")"
	grep -q 'DUMP_HLO_DIR: .* \[every directory\]$' "$d" ||
		fail "$1: the every-directory warning is not marked so: $(grep DUMP_HLO_DIR "$d")"
	[ "$(grep -c 'XLA_FLAGS is set in the config' "$d")" -eq 1 ] ||
		fail "$1: the XLA_FLAGS warning not once: $(cat "$d")"
	grep -q 'XLA_FLAGS is set in the config.* \[maxtext/gfx942 maxtext/gfx950\]$' "$d" ||
		fail "$1: the maxtext warning does not name its two directories: $(grep XLA_FLAGS "$d")"
	[ "$(grep -c 'unquoted 0.96 is a float' "$d")" -eq 1 ] || fail "$1: the config's warning not once"
	grep 'unquoted 0.96 is a float' "$d" >"$TMP/input.diag"
	# Its line ends with its code: no directory label after it.
	grep -qE ' \[PE104\]$' "$TMP/input.diag" || fail "$1: an input's warning has a directory label, or no code: $(cat "$TMP/input.diag")"
	[ "$(grep -c "^$cfg:" "$d")" -eq "$(wc -l <"$d")" ] || fail "$1: a line is not FILE:LINE:COL first: $(cat "$d")"
}
check_diags "at mount"
# A multi-node count with the localhost rendezvous is a warning of its own
# (the launcher's); a rendezvous host keeps this list to the config's lines.
echo node0 >"$MNT/env/maxtext/gfx950/MASTER_ADDR"
echo 3 >"$MNT/env/maxtext/gfx950/NNODES"
check_diags "after a commit"
cp "$cfg" "$cfg.new"
printf '  ANOTHER: "1"\n' >>"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$MNT/env/maxtext/gfx950/ANOTHER" 1 5000 >/dev/null
check_diags "after a reload"
envfs_umount

# -o ignore=CODE[:CODE] silences: diagnostics shows the line as silenced,
# status names the codes, explain lists it as silenced too.
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" -o ignore=PE104:PE405
grep -qE 'unquoted 0\.96 is a float.* \[PE104, silenced\]$' "$MNT/diagnostics" ||
	fail "ignore=: the silenced warning is not marked so: $(cat "$MNT/diagnostics")"
grep -qE 'DUMP_HLO_DIR: .* \[PE115\] \[every directory\]$' "$MNT/diagnostics" ||
	fail "ignore=: a warning of another code changed: $(grep DUMP_HLO_DIR "$MNT/diagnostics")"
grep -qx 'ignore: PE104 PE405' "$MNT/status" || fail "status does not name the ignored codes: $(grep ^ignore "$MNT/status")"
grep -qE '^  .*unquoted 0\.96 is a float.*\[PE104, silenced\]$' "$MNT/env/megatron/gfx942/explain" ||
	fail "explain does not list the silenced warning"
envfs_umount
"$ENVFS_BIN" --specs "$ENVFS_SPECS" -o ignore=PE999 -f "$MNT" 2>"$TMP/bad.err" && fail "ignore=PE999 mounted"
grep -q 'PE999.*not a diagnostic code' "$TMP/bad.err" || fail "ignore=PE999: $(cat "$TMP/bad.err")"
# A name written on the mount is checked like one a config sets: a
# misspelling gets its did-you-mean, placed at the override layer.
envfs_mount --specs "$ENVFS_SPECS"
! grep -q 'NCCL_IB_GID_INDX' "$MNT/diagnostics" || fail "a misspelling before any write"
echo 3 >"$MNT/env/maxtext/gfx950/NCCL_IB_GID_INDX"
grep -qxF 'override: warning: NCCL_IB_GID_INDX: nothing reads this name; did you mean NCCL_IB_GID_INDEX? [PE601] [maxtext/gfx950]' \
	"$MNT/diagnostics" || fail "a misspelled name written on the mount: $(grep GID "$MNT/diagnostics")"
rm "$MNT/env/maxtext/gfx950/NCCL_IB_GID_INDX"
! grep -q 'NCCL_IB_GID_INDX' "$MNT/diagnostics" || fail "the warning stays after the override is removed"
envfs_umount
echo "ok: diagnostics"

#!/usr/bin/env bash
# primus-envfs set|unset|get with INPUTS --state FILE (no mount): the state
# file is edited directly, with the rules a write through the mount has
# and its atomic save; every failure is one line on stderr and a non-zero
# exit (1: refused or not saved, nothing changed; 64: the command line).
set -eu

: "${ENVFS_BIN:?}" "${ENVFS_SPECS:?}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
st="$tmp/run.state.yaml"

# run EXPECTED_RC CMD...: stdout in $tmp/out, stderr in $tmp/err.
run() {
	local want=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want: $(cat "$tmp/err")"
}
one_line() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: want one line on stderr, got: $(cat "$tmp/err")"
	grep -q '^primus-envfs: ' "$tmp/err" || fail "$1: the line does not start with primus-envfs: "
}

# set, then get reads it back, and the file holds it.
run 0 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 NCCL_DEBUG INFO
# ... and the history beside it tells the change, as a write through a
# mount would be told (the next mount lists it and numbers on after it).
grep -qE "^gen 1 [0-9]+ [0-9]+ write $(id -u) [0-9]+ -\$" "$st.history" &&
	grep -q '^var =maxtext =gfx950 =NCCL_DEBUG 0 1 ' "$st.history" ||
	fail "the history of an offline set: $(cat "$st.history" 2>&1)"
[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "set printed something: $(cat "$tmp/out" "$tmp/err")"
grep -q 'name: "NCCL_DEBUG", value: "INFO"' "$st" || fail "the state file lacks the override: $(cat "$st")"
[ "$(stat -c %a "$st")" = 600 ] || fail "the state file is not mode 0600"
run 0 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 NCCL_DEBUG
[ "$(cat "$tmp/out")" = INFO ] || fail "get printed '$(cat "$tmp/out")', want INFO"
# A value may look like an option; derived values follow (templates).
run 0 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 XLA_FLAGS --xla_dump_to=/tmp/x
run 0 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 XLA_FLAGS
[ "$(cat "$tmp/out")" = --xla_dump_to=/tmp/x ] || fail "get XLA_FLAGS: $(cat "$tmp/out")"
run 0 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 GPUS_PER_NODE 4
run 0 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 HIP_VISIBLE_DEVICES
[ "$(cat "$tmp/out")" = 0,1,2,3 ] || fail "HIP_VISIBLE_DEVICES does not follow GPUS_PER_NODE: $(cat "$tmp/out")"
# Without VALUE, standard input is the value (one trailing newline is
# the line's end), so a secret never shows in ps.
printf 'hf_secret\n' | "$ENVFS_BIN" set --state "$st" maxtext/gfx950 HF_TOKEN ||
	fail "set from standard input failed"
run 0 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 HF_TOKEN
[ "$(cat "$tmp/out")" = hf_secret ] || fail "the value from stdin is '$(cat "$tmp/out")'"
# The file's other overrides are kept (the whole set is saved each time).
grep -q 'NCCL_DEBUG' "$st" || fail "a later set lost NCCL_DEBUG"

# unset: the resolved value comes back after an override; a value of the
# specs is unset for the run; get then exits 1.
run 0 "$ENVFS_BIN" unset --state "$st" maxtext/gfx950 NCCL_DEBUG
run 0 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 NCCL_DEBUG
[ "$(cat "$tmp/out")" = "" ] || fail "NCCL_DEBUG after unset: '$(cat "$tmp/out")', want the runner's empty value"
run 0 "$ENVFS_BIN" unset --state "$st" maxtext/gfx950 NCCL_DEBUG
run 1 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 NCCL_DEBUG
one_line "get of an unset variable"
grep -q 'NCCL_DEBUG.*not set' "$tmp/err" || fail "get: $(cat "$tmp/err")"
grep -q 'name: "NCCL_DEBUG", unset: true' "$st" || fail "the unset is not recorded: $(cat "$st")"
run 1 "$ENVFS_BIN" unset --state "$st" maxtext/gfx950 NCCL_DEBUG
one_line "unset of an unset variable"

# What the rules refuse: nothing changes, one line, exit 1.
cp "$st" "$tmp/before"
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 1BAD x
one_line "a bad name"
grep -q "1BAD" "$tmp/err" || fail "the message does not name 1BAD: $(cat "$tmp/err")"
printf 'a\0b' >"$tmp/nul"
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 NCCL_DEBUG <"$tmp/nul"
one_line "a NUL byte"
grep -q "NUL" "$tmp/err" || fail "the message does not say NUL: $(cat "$tmp/err")"
head -c 131073 /dev/zero | tr '\0' x >"$tmp/big"
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 NCCL_DEBUG <"$tmp/big"
one_line "a value too large"
grep -q "131072" "$tmp/err" || fail "the message does not give the bound: $(cat "$tmp/err")"
head -c 131072 /dev/zero | tr '\0' x >"$tmp/max"
run 0 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 BIG_ONE <"$tmp/max"
run 0 "$ENVFS_BIN" unset --state "$st" maxtext/gfx950 BIG_ONE
cmp -s "$st" "$tmp/before" || fail "a refused set changed the state file"

# A state file that cannot be saved: exit 1, named, the file untouched.
run 1 "$ENVFS_BIN" set --state "$tmp/no-such-dir/s.yaml" maxtext/gfx950 NCCL_DEBUG x
one_line "a state file in a missing directory"
grep -q "no-such-dir/s.yaml" "$tmp/err" || fail "the message does not name the file: $(cat "$tmp/err")"
# A state file on a read-only filesystem (where this test may mount one):
# the save fails, nothing changes.
mkdir "$tmp/ro"
if mount -t tmpfs -o size=1m tmpfs "$tmp/ro" 2>/dev/null; then
	trap 'umount "$tmp/ro" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	cp "$tmp/before" "$tmp/ro/s.yaml"
	chmod 600 "$tmp/ro/s.yaml"
	mount -o remount,ro "$tmp/ro"
	run 1 "$ENVFS_BIN" set --state "$tmp/ro/s.yaml" maxtext/gfx950 NCCL_DEBUG y
	one_line "a state file on a read-only filesystem"
	grep -q -e "cannot save" -e "Read-only" "$tmp/err" || fail "the message does not say it was not saved: $(cat "$tmp/err")"
	cmp -s "$tmp/ro/s.yaml" "$tmp/before" || fail "a failed save changed the state file"
	umount "$tmp/ro"
fi
# A state file that does not parse is never overwritten.
printf 'version: 1\noverrides: [\n' >"$tmp/broken.yaml"
run 2 "$ENVFS_BIN" set --state "$tmp/broken.yaml" maxtext/gfx950 NCCL_DEBUG x
grep -q "broken.yaml" "$tmp/err" || fail "a broken state file is not named: $(cat "$tmp/err")"
[ "$(cat "$tmp/broken.yaml")" = "$(printf 'version: 1\noverrides: [\n')" ] || fail "a broken state file was overwritten"

# The command line.
run 64 "$ENVFS_BIN" set --state "$st" maxtext/gfx950
run 64 "$ENVFS_BIN" set maxtext/gfx950 NCCL_DEBUG x
grep -q -- "--mount DIR or --state FILE" "$tmp/err" || fail "no --mount/--state: $(cat "$tmp/err")"
run 64 "$ENVFS_BIN" set --state "$st" maxtext NCCL_DEBUG x
run 64 "$ENVFS_BIN" set --state "$st" maxtext/nosuch NCCL_DEBUG x
run 64 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 NCCL_DEBUG extra
run 64 "$ENVFS_BIN" set --mount "$tmp" --state "$st" maxtext/gfx950 NCCL_DEBUG x
# --mount on a directory that is no primus-envfs mount: exit 2.
run 2 "$ENVFS_BIN" set --mount "$tmp" maxtext/gfx950 NCCL_DEBUG x
one_line "--mount of a plain directory"
run 0 "$ENVFS_BIN" set --help
grep -q "Exit status" "$tmp/out" || fail "set --help gives no exit statuses"
# A hostile name or directory is echoed escaped and cut short: still one
# line, no terminal escape, and a bounded message (the last attack: a
# newline made two lines, a 100,000-byte name a 100,072-byte message).
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 $'A\nB\e[2J' v
one_line "a name with a newline and an escape"
! grep -q "$(printf '\033')" "$tmp/err" || fail "the message carries a raw ESC: $(od -c "$tmp/err" | head -3)"
grep -q 'A\\nB\\x1b\[2J' "$tmp/err" || fail "the name is not shown escaped: $(cat "$tmp/err")"
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 "$(printf 'A\377\376B')" v
one_line "a name that is not UTF-8"
grep -q 'A\\xff\\xfeB' "$tmp/err" || fail "a byte that is not UTF-8 is not escaped: $(od -c "$tmp/err" | head -3)"
run 1 "$ENVFS_BIN" set --state "$st" maxtext/gfx950 "$(head -c 100000 /dev/zero | tr '\0' A)" v
one_line "a name of 100,000 bytes"
[ "$(wc -c <"$tmp/err")" -lt 1024 ] || fail "a 100,000-byte name gives a message of $(wc -c <"$tmp/err") bytes"
run 1 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 1BAD
! grep -q "nothing changed" "$tmp/err" || fail "get of a bad name says it changed nothing: $(cat "$tmp/err")"
# get reads any name a directory shows: a config may set MY-VAR, which
# no shell exports but the training process gets (set and unset refuse
# it, as the mount's file of it is read-only).
printf 'env:\n  MY-VAR: "dash"\n' >"$tmp/dash.yaml"
run 0 "$ENVFS_BIN" get --config "$tmp/dash.yaml" --state "$tmp/dash.state" maxtext/gfx950 MY-VAR
[ "$(cat "$tmp/out")" = dash ] || fail "get MY-VAR printed '$(cat "$tmp/out")'"
run 1 "$ENVFS_BIN" set --config "$tmp/dash.yaml" --state "$tmp/dash.state" maxtext/gfx950 MY-VAR v
grep -q 'not a variable name' "$tmp/err" || fail "set MY-VAR: $(cat "$tmp/err")"
run 1 "$ENVFS_BIN" get --state "$st" maxtext/gfx950 'a/b'
one_line "get of a name with a slash"
run 64 "$ENVFS_BIN" set --state "$st" $'max\ntext/gfx\e[2J' X v
one_line "a directory with a newline and an escape"
! grep -q "$(printf '\033')" "$tmp/err" || fail "the usage message carries a raw ESC: $(od -c "$tmp/err" | head -3)"
echo "set: all checks passed"

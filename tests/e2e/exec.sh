#!/usr/bin/env bash
# primus-envfs exec (SPEC 8): the command runs with exactly the resolved
# environment, byte for byte the environ view, with nothing of the caller's
# environment leaking in; its exit status is passed through; a missing
# command gives 127 and one error line.
set -eu

: "${ENVFS_BIN:?}" "${ENVFS_SPECS:?}" "${ENVFS_FIXTURES:?}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

# Canaries: a variable no spec knows, one with a prefix the container
# launcher does not forward (TE_), and HOME.
export ENVFS_EXEC_CANARY=leaked
export TE_CANARY=CANARY_TE
export HOME="$tmp/canary-home"
# The launcher forwards every non-empty NCCL_* variable (layer host).
export NCCL_DEBUG=INFO
# A name the runner spec passes through from the host is part of the
# resolved environment (layer `host`), so it must arrive: in both views.
export MASTER_ADDR=10.9.8.7
env_bin=$(command -v env) || fail "no env(1)"

"$ENVFS_BIN" resolve -b maxtext -a gfx950 --format environ >"$tmp/environ" ||
	fail "resolve --format environ failed"
[ -s "$tmp/environ" ] || fail "the environ view of maxtext/gfx950 is empty"

# 1. env -0 prints exactly the environ view (both sorted by name; env -0
#    prints environ in the order execve received it).
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- env -0 >"$tmp/exec.out" 2>"$tmp/exec.err" ||
	fail "exec -- env -0 exited $?: $(cat "$tmp/exec.err")"
if ! cmp -s "$tmp/environ" "$tmp/exec.out"; then
	diff <(tr '\0' '\n' <"$tmp/environ") <(tr '\0' '\n' <"$tmp/exec.out") >&2 || true
	fail "exec -- env -0 differs from resolve --format environ"
fi
[ ! -s "$tmp/exec.err" ] || fail "exec printed on stderr: $(cat "$tmp/exec.err")"

# 2. Nothing of the caller leaks in.
for v in ENVFS_EXEC_CANARY CANARY_TE canary-home; do
	if tr '\0' '\n' <"$tmp/exec.out" | grep -q -- "$v"; then
		fail "the caller's environment leaked into exec: $v"
	fi
done

tr '\0' '\n' <"$tmp/exec.out" | grep -qx 'NCCL_DEBUG=INFO' ||
	fail "the host's non-empty NCCL_DEBUG was not forwarded (prefix passthrough)"
tr '\0' '\n' <"$tmp/exec.out" | grep -qx 'MASTER_ADDR=10.9.8.7' ||
	fail "the passthrough variable MASTER_ADDR did not reach the command"

# Same by absolute path, and with inputs: --env reaches the command exactly.
"$ENVFS_BIN" exec -b maxtext -a gfx950 --env 'EXEC_ODD= a=b $x "q" '"'s'"' ' -- \
	"$env_bin" -0 >"$tmp/exec2.out" || fail "exec with --env failed"
"$ENVFS_BIN" resolve -b maxtext -a gfx950 --env 'EXEC_ODD= a=b $x "q" '"'s'"' ' \
	--format environ >"$tmp/environ2" || fail "resolve with --env failed"
cmp -s "$tmp/environ2" "$tmp/exec2.out" || fail "exec --env ... -- $env_bin -0 differs from the environ view"
tr '\0' '\n' <"$tmp/exec2.out" | grep -qxF 'EXEC_ODD= a=b $x "q" '"'s'"' ' ||
	fail "EXEC_ODD did not reach the command exactly"

# Arguments reach the command untouched, including ones that look like options.
out=$("$ENVFS_BIN" exec -b maxtext -a gfx950 -- sh -c 'printf "%s|" "$@"' sh -b --config 'a b' '') ||
	fail "exec -- sh -c with arguments failed"
[ "$out" = "-b|--config|a b||" ] || fail "arguments not passed through: got '$out'"

# 3. Exit status passed through.
set +e
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- sh -c 'exit 7'
rc=$?
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- true
rc0=$?
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- sh -c 'exit 0'
rc00=$?
set -e
[ "$rc" -eq 7 ] || fail "exec -- sh -c 'exit 7' exited $rc, expected 7"
[ "$rc0" -eq 0 ] || fail "exec -- true exited $rc0, expected 0"
[ "$rc00" -eq 0 ] || fail "exec -- sh -c 'exit 0' exited $rc00, expected 0"

# 4. A missing command: 127 and exactly one error line, nothing on stdout.
set +e
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- primus-envfs-no-such-command-xyz \
	>"$tmp/missing.out" 2>"$tmp/missing.err"
rc=$?
set -e
[ "$rc" -eq 127 ] || fail "a missing command exited $rc, expected 127"
[ ! -s "$tmp/missing.out" ] || fail "a missing command printed on stdout"
[ "$(wc -l <"$tmp/missing.err")" -eq 1 ] ||
	fail "a missing command should give one error line, got: $(cat "$tmp/missing.err")"
grep -q 'primus-envfs-no-such-command-xyz' "$tmp/missing.err" ||
	fail "the error line does not name the command: $(cat "$tmp/missing.err")"

# Bad use is an error, not a crash: no command, unknown backend.
set +e
"$ENVFS_BIN" exec -b maxtext -a gfx950 >/dev/null 2>"$tmp/nocmd.err"
rc=$?
"$ENVFS_BIN" exec -b no_such_backend -a gfx950 -- true >/dev/null 2>"$tmp/nobackend.err"
rc2=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && [ -s "$tmp/nocmd.err" ] ||
	fail "exec without a command: exit $rc, stderr '$(cat "$tmp/nocmd.err")'"
[ "$rc2" -ne 0 ] && [ "$rc2" -lt 128 ] && [ -s "$tmp/nobackend.err" ] ||
	fail "exec with an unknown backend: exit $rc2, stderr '$(cat "$tmp/nobackend.err")'"

echo "exec: all checks passed"

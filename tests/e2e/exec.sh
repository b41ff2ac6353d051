#!/usr/bin/env bash
# primus-envfs exec: without --inherit it takes its own environment as the
# image layer, as env(1) and envconsul do (PATH and HOME stay), so it runs
# what resolve --inherit-env prints; with --clean (or --inherit FILE) the
# command gets exactly the resolved environment, byte for byte the environ
# view, with nothing else of the caller's leaking in; its exit status is
# passed through; a missing command gives 127 and one error line.
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

# 0. Without --inherit the caller's own environment is the image: PATH,
#    HOME and the canary arrive, and the bytes are what resolve prints with
#    --inherit-env (the same on purpose).
"$ENVFS_BIN" exec -b maxtext -a gfx950 -- env -0 >"$tmp/own.out" 2>"$tmp/own.err" ||
	fail "exec -- env -0 exited $?: $(cat "$tmp/own.err")"
for v in "PATH=$PATH" "HOME=$HOME" ENVFS_EXEC_CANARY=leaked; do
	tr '\0' '\n' <"$tmp/own.out" | grep >/dev/null -xF -- "$v" ||
		fail "exec without --inherit lost the caller's $v"
done
tr '\0' '\n' <"$tmp/own.out" | grep >/dev/null -x 'NCCL_DEBUG=INFO' ||
	fail "exec without --inherit: the resolved NCCL_DEBUG is not the host's"
"$ENVFS_BIN" resolve -b maxtext -a gfx950 --inherit-env --format environ >"$tmp/inh.environ" ||
	fail "resolve --inherit-env failed"
cmp -s "$tmp/inh.environ" "$tmp/own.out" ||
	fail "exec without --inherit differs from resolve --inherit-env --format environ"
# The image layer: a variable only the caller has says so.
"$ENVFS_BIN" resolve -b maxtext -a gfx950 --inherit-env --format explain >"$tmp/inh.explain" ||
	fail "resolve --inherit-env --format explain failed"
grep -A3 '^ENVFS_EXEC_CANARY' "$tmp/inh.explain" | grep >/dev/null 'image' ||
	fail "--inherit-env: the caller's variable is not in layer image: $(grep -A3 '^ENVFS_EXEC_CANARY' "$tmp/inh.explain")"
# --inherit-env is an input of every command (check and list too).
"$ENVFS_BIN" check -b maxtext -a gfx950 --inherit-env -q >/dev/null 2>&1 || [ $? -le 2 ] ||
	fail "check --inherit-env refused"
"$ENVFS_BIN" list --inherit-env >/dev/null || fail "list --inherit-env refused"

# 1. --clean: env -0 prints exactly the environ view (both sorted by
#    name; env -0 prints environ in the order execve received it).
"$ENVFS_BIN" exec --clean -b maxtext -a gfx950 -- env -0 >"$tmp/exec.out" 2>"$tmp/exec.err" ||
	fail "exec --clean -- env -0 exited $?: $(cat "$tmp/exec.err")"
if ! cmp -s "$tmp/environ" "$tmp/exec.out"; then
	diff <(tr '\0' '\n' <"$tmp/environ") <(tr '\0' '\n' <"$tmp/exec.out") >&2 || true
	fail "exec -- env -0 differs from resolve --format environ"
fi
[ ! -s "$tmp/exec.err" ] || fail "exec printed on stderr: $(cat "$tmp/exec.err")"

# 2. With --clean nothing of the caller leaks in: no PATH, no HOME.
for v in ENVFS_EXEC_CANARY CANARY_TE canary-home '^PATH=' '^HOME='; do
	if tr '\0' '\n' <"$tmp/exec.out" | grep >/dev/null -- "$v"; then
		fail "the caller's environment leaked into exec --clean: $v"
	fi
done
# An --inherit file is the image instead of the caller's environment.
printf 'FROM_IMAGE=1\n' >"$tmp/image.env"
"$ENVFS_BIN" exec --inherit "$tmp/image.env" -b maxtext -a gfx950 -- env -0 >"$tmp/img.out" ||
	fail "exec --inherit FILE failed"
tr '\0' '\n' <"$tmp/img.out" | grep >/dev/null -x FROM_IMAGE=1 || fail "exec --inherit FILE lost the file's value"
if tr '\0' '\n' <"$tmp/img.out" | grep >/dev/null -e ENVFS_EXEC_CANARY -e '^HOME='; then
	fail "exec --inherit FILE took the caller's environment too"
fi

tr '\0' '\n' <"$tmp/exec.out" | grep >/dev/null -x 'NCCL_DEBUG=INFO' ||
	fail "the host's non-empty NCCL_DEBUG was not forwarded (prefix passthrough)"
tr '\0' '\n' <"$tmp/exec.out" | grep >/dev/null -x 'MASTER_ADDR=10.9.8.7' ||
	fail "the passthrough variable MASTER_ADDR did not reach the command"

# Same by absolute path, and with inputs: --env reaches the command exactly.
"$ENVFS_BIN" exec --clean -b maxtext -a gfx950 --env 'EXEC_ODD= a=b $x "q" '"'s'"' ' -- \
	"$env_bin" -0 >"$tmp/exec2.out" || fail "exec with --env failed"
"$ENVFS_BIN" resolve -b maxtext -a gfx950 --env 'EXEC_ODD= a=b $x "q" '"'s'"' ' \
	--format environ >"$tmp/environ2" || fail "resolve with --env failed"
cmp -s "$tmp/environ2" "$tmp/exec2.out" || fail "exec --clean --env ... -- $env_bin -0 differs from the environ view"
tr '\0' '\n' <"$tmp/exec2.out" | grep >/dev/null -xF 'EXEC_ODD= a=b $x "q" '"'s'"' ' ||
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

# ... but not "." or "..", which no mount can show as a file.
env '.=dot' '..=dotdot' "$ENVFS_BIN" resolve --inherit-env -b maxtext -a gfx950 --format env_file \
	>"$tmp/dots.out" 2>"$tmp/dots.err" || fail "resolve with . and .. in the environment: $(cat "$tmp/dots.err")"
! grep -q '^\.\.*=' "$tmp/dots.out" || fail "the env_file view holds . or ..: $(grep '^\.' "$tmp/dots.out")"
# A caller's name no shell can read (MY-VAR) is passed on, as the
# launcher's bash passes it to the training process (exec dropped it).
env 'MY-VAR=odd' 'a.b=dot' "$ENVFS_BIN" exec -b maxtext -a gfx950 -- env -0 >"$tmp/odd.out" 2>"$tmp/odd.err" ||
	fail "exec with odd names in the environment: $(cat "$tmp/odd.err")"
tr '\0' '\n' <"$tmp/odd.out" | grep -qx 'MY-VAR=odd' && tr '\0' '\n' <"$tmp/odd.out" | grep -qx 'a.b=dot' ||
	fail "exec dropped the caller's MY-VAR or a.b: $(tr '\0' '\n' <"$tmp/odd.out" | grep -E 'MY|a\.b')"

echo "exec: all checks passed"

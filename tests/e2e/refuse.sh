# End-to-end: resolve and exec never hand out an environment an error
# says is wrong (SPEC 8, issue 13): exit 2, nothing printed or run, the
# errors on stderr; --force goes on and still prints them; warnings never
# stop them; explain is printed (it is the report of the errors).
set -eu
. "$(dirname "$0")/lib.sh"

CFG="$ENVFS_FIXTURES/config"
LIST="$CFG/env_is_list.yaml"
ERRLINE="env_is_list.yaml:6:3: error: env: must be a mapping"

# exec: the command does not run
marker="$TMP/ran"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec --config "$LIST" -b maxtext -a gfx950 -- touch "$marker"
assert_no_crash "exec with an erroneous config" "$TMP/err"
[ "$rc" -eq 2 ] || { cat "$TMP/err" >&2; fail "exec with an erroneous config: exit $rc, want 2"; }
[ ! -e "$marker" ] || fail "exec ran the command although the config has an error"
[ ! -s "$TMP/out" ] || fail "exec printed on stdout"
grep -qF "$ERRLINE" "$TMP/err" || { cat "$TMP/err" >&2; fail "exec: the error is not on stderr"; }
grep -q -- '--force' "$TMP/err" || fail "exec: the refusal does not say how to go on"

# exec --force: runs it, and still says what is wrong
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec --force --config "$LIST" -b maxtext -a gfx950 -- touch "$marker"
[ "$rc" -eq 0 ] || fail "exec --force: exit $rc, want the command's 0"
[ -e "$marker" ] || fail "exec --force did not run the command"
grep -qF "$ERRLINE" "$TMP/err" || fail "exec --force: the error is not on stderr"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec --config "$LIST" -b maxtext -a gfx950 --force -- sh -c 'exit 5'
[ "$rc" -eq 5 ] || fail "exec --force: the command's exit status 5 became $rc"

# resolve: nothing printed, in every format handing out an environment
for fmt in env_file environ sh json compose digest; do
	run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --config "$LIST" -b maxtext -a gfx950 --format "$fmt"
	[ "$rc" -eq 2 ] || fail "resolve --format $fmt with an erroneous config: exit $rc, want 2"
	[ ! -s "$TMP/out" ] || fail "resolve --format $fmt printed despite the error"
	grep -qF "$ERRLINE" "$TMP/err" || fail "resolve --format $fmt: the error is not on stderr"
done
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --config "$LIST" -b maxtext -a gfx950 --force
[ "$rc" -eq 0 ] || fail "resolve --force: exit $rc"
grep -q '^NNODES=1$' "$TMP/out" || fail "resolve --force printed no env_file"
grep -qF "$ERRLINE" "$TMP/err" || fail "resolve --force: the error is not on stderr"
# The forced env_file is the environment without the refused block.
clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 >"$TMP/plain"
cmp -s "$TMP/out" "$TMP/plain" || fail "resolve --force: not the environment without the list"
# explain hands out nothing: it shows the errors, exit 0
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --config "$LIST" -b maxtext -a gfx950 --format explain
[ "$rc" -eq 0 ] && grep -qF "$ERRLINE" "$TMP/out" || fail "resolve --format explain: exit $rc, errors not shown"

# An input that does not load: one line, exit 2, --force goes on where it can
printf 'env:\n  A: [unclosed\n' >"$TMP/broken.yaml"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --config "$TMP/broken.yaml" -b maxtext -a gfx950
[ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] || fail "resolve with a YAML syntax error: exit $rc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q 'broken.yaml:[0-9]*:[0-9]*: error' "$TMP/err" ||
	fail "resolve with a YAML syntax error: want one line: $(cat "$TMP/err")"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --force --config "$TMP/broken.yaml" -b maxtext -a gfx950
[ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/plain" || fail "resolve --force past a YAML syntax error: exit $rc"

# An error in a directory (not the inputs): a value outside its range
printf 'env:\n  MASTER_PORT: "80"\n' >"$TMP/port.yaml"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec --config "$TMP/port.yaml" -b maxtext -a gfx950 -- touch "$TMP/ran2"
[ "$rc" -eq 2 ] && [ ! -e "$TMP/ran2" ] || fail "exec with MASTER_PORT=80: exit $rc, or the command ran"
grep -q 'MASTER_PORT=80 is outside' "$TMP/err" || fail "exec with MASTER_PORT=80: error not shown"

# Warnings never stop them
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check --config "$CFG/owns_xla_flags.yaml" -b maxtext -a gfx950
[ "$rc" -eq 1 ] || fail "owns_xla_flags.yaml should give warnings only (check exit $rc)"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --config "$CFG/owns_xla_flags.yaml" -b maxtext -a gfx950
[ "$rc" -eq 0 ] && [ -s "$TMP/out" ] && [ ! -s "$TMP/err" ] ||
	fail "resolve refused or complained about a config with warnings only (exit $rc)"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec --config "$CFG/owns_xla_flags.yaml" -b maxtext -a gfx950 -- true
[ "$rc" -eq 0 ] || fail "exec refused a config with warnings only (exit $rc)"

echo "ok: refuse"

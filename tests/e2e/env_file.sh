# End-to-end: secrets off the command line (issue 14, item 13).
# --env-file FILE reads docker's env-file rules (values literal, # comments,
# a bare NAME from the caller's environment), each entry layer cli with
# FILE:LINE as its source; --env NAME takes the caller's value as docker
# -e NAME does (nothing when unset); a secret written inline as --env
# NAME=VALUE draws a warning naming it, never its value; --env-file and
# --env NAME draw none.
set -eu
. "$(dirname "$0")/lib.sh"

SECRET='hf_Ab$cd "q" Tail  '
printf '# secrets for the run\n\nHF_TOKEN=%s\nQUOTED="kept"\n  LEAD=x\nFROM_CALLER\nNOT_SET_HERE\nNNODES=2\nMASTER_ADDR=node0\n' \
	"$SECRET" >"$TMP/run.env"

# the values, literally
run "$TMP/out" "$TMP/err" clean FROM_CALLER='c a l l' "$ENVFS_BIN" resolve --env-file "$TMP/run.env" \
	-b maxtext -a gfx950 --format json
[ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] || fail "resolve --env-file: exit $rc: $(cat "$TMP/err")"
python3 - "$TMP/out" "$SECRET" <<'PY' || fail "--env-file values are not docker's"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["HF_TOKEN"] == sys.argv[2], repr(d.get("HF_TOKEN"))
assert d["QUOTED"] == '"kept"', d["QUOTED"]
assert d["LEAD"] == "x"
assert d["FROM_CALLER"] == "c a l l"
assert "NOT_SET_HERE" not in d
assert d["NNODES"] == "2"
PY
# layer cli, source FILE:LINE
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --env-file "$TMP/run.env" -b maxtext -a gfx950 --format explain
sed -n '/^NNODES$/,/^$/p' "$TMP/out" >"$TMP/nnodes"
grep -qx '  layer: cli' "$TMP/nnodes" || fail "--env-file entry is not layer cli: $(cat "$TMP/nnodes")"
grep -qx "  source: $TMP/run.env:8" "$TMP/nnodes" || fail "--env-file entry's source: $(cat "$TMP/nnodes")"
! grep -qF 'hf_Ab' "$TMP/out" || fail "explain shows the secret from the env-file"
# --env after --env-file wins
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --env NNODES=4 --env-file "$TMP/run.env" -b maxtext -a gfx950
grep -qx 'NNODES=4' "$TMP/out" || fail "--env NNODES=4 did not win over the env-file's NNODES=2"

# --env NAME: the caller's value, or nothing
run "$TMP/out" "$TMP/err" clean HF_TOKEN="$SECRET" "$ENVFS_BIN" resolve --env HF_TOKEN -b maxtext -a gfx950 --format json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["HF_TOKEN"] == sys.argv[2]' "$TMP/out" "$SECRET" ||
	fail "--env HF_TOKEN did not take the caller's value"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --env HF_TOKEN -b maxtext -a gfx950
[ "$rc" -eq 0 ] && ! grep -q '^HF_TOKEN=' "$TMP/out" || fail "--env HF_TOKEN, unset: exit $rc or set anyway"

# check warns about an inline secret, by name only
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --env "HF_TOKEN=$SECRET" --env NNODES=2 --env MASTER_ADDR=node0
[ "$rc" -eq 1 ] || fail "check with an inline secret: exit $rc, want 1 (a warning)"
grep -q 'warning: HF_TOKEN is a secret given as --env HF_TOKEN=\.\.\. on the command line' "$TMP/err" ||
	fail "check: no warning for the inline secret: $(cat "$TMP/err")"
grep -q -- '--env-file' "$TMP/err" || fail "check: the warning does not say what to use"
! grep -qF 'hf_Ab' "$TMP/out" "$TMP/err" || fail "check printed the secret"
! grep -q NNODES "$TMP/err" || fail "check warned about a variable that is no secret"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --format json --env "HF_TOKEN=$SECRET"
python3 -m json.tool "$TMP/out" >/dev/null || fail "check --format json with an inline secret: not JSON"
! grep -qF 'hf_Ab' "$TMP/out" || fail "check --format json printed the secret"
for how in "--env-file $TMP/run.env" "--env HF_TOKEN"; do
	run "$TMP/out" "$TMP/err" clean HF_TOKEN=x "$ENVFS_BIN" check -b maxtext -a gfx950 $how
	[ "$rc" -eq 0 ] || fail "check $how: exit $rc, want 0: $(cat "$TMP/err")"
done
# resolve and exec warn too (a warning never stops them)
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" exec -b maxtext -a gfx950 --env "HF_TOKEN=$SECRET" -- true
[ "$rc" -eq 0 ] || fail "exec with an inline secret: exit $rc"

# a bad line stops the command, as docker refuses the file
printf 'GOOD=1\nBAD NAME=2\n' >"$TMP/bad.env"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" resolve --env-file "$TMP/bad.env" -b maxtext -a gfx950
[ "$rc" -eq 2 ] && [ ! -s "$TMP/out" ] || fail "a bad --env-file line: exit $rc"
grep -q "bad.env:2:4: error: the text before '=' holds whitespace at column 4 (it starts 'BAD'" "$TMP/err" ||
	fail "a bad --env-file line: $(cat "$TMP/err")"

echo "ok: env_file"

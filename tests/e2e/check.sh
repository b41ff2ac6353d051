# End-to-end: `primus-envfs check` exit codes and places (issue 2,
# acceptance 4): 0 clean, 1 warnings, 2 errors, with file:line:col.
set -eu
. "$(dirname "$0")/lib.sh"

CFG="$ENVFS_FIXTURES/config"

# The summary line's counts match the diagnostics printed above it.
expect_counts_match() {
	_s=$(grep -E '^[0-9]+ error\(s\), [0-9]+ warning\(s\), [0-9]+ info$' "$TMP/$1") ||
		{ cat "$TMP/$1" >&2; fail "$1: no 'N error(s), N warning(s), N info' summary"; }
	_e=$(grep -c ': error: ' "$TMP/$1" || true)
	_w=$(grep -c ': warning: ' "$TMP/$1" || true)
	[ "$_s" = "$_e error(s), $_w warning(s), ${_s##*, }" ] ||
		{ cat "$TMP/$1" >&2; fail "$1: summary '$_s' does not count the $_e error(s) and $_w warning(s) printed"; }
}

# --- clean: exit 0 ---
check_to clean_all
expect_rc 0 clean_all
grep -qE ': (error|warning): ' "$TMP/clean_all" && fail "clean check printed a warning or error"
check_to clean_dir -b maxtext -a gfx950
expect_rc 0 clean_dir
check_to clean_specs --specs "$ENVFS_SPECS"
expect_rc 0 clean_specs
check_to clean_recipe --config "$CFG/collective_timeouts.yaml"
expect_rc 0 clean_recipe

# --- warnings only: exit 1 ---
check_to warn --config "$CFG/owns_xla_flags.yaml" -b maxtext -a gfx950
expect_rc 1 warn
grep -qE 'owns_xla_flags\.yaml:[0-9]+:[0-9]+: warning: ' "$TMP/warn" ||
	fail "warning without file:line:col"
expect_counts_match warn
check_to warn_nested --config "$CFG/env_under_module.yaml" -b maxtext -a gfx950
expect_rc 1 warn_nested
expect_counts_match warn_nested
# an info diagnostic alone (a repeated flag) is still clean
check_to info_only --config "$CFG/append_one_flag.yaml" -b maxtext -a gfx950
expect_rc 0 info_only

# --- a YAML syntax error in the config: exit 2 with file:line:col ---
check_to syntax --config "$CFG/syntax_error.yaml"
expect_rc 2 syntax
grep -qE "syntax_error\.yaml:7:[0-9]+: error: " "$TMP/syntax" ||
	{ cat "$TMP/syntax" >&2; fail "YAML syntax error must be reported at syntax_error.yaml:7:COL"; }
check_to syntax_dir --config "$CFG/syntax_error.yaml" -b maxtext -a gfx950
expect_rc 2 syntax_dir
expect_counts_match syntax_dir

# --- a config whose env: is a list: exit 2 with file:line:col ---
check_to envlist --config "$CFG/env_is_list.yaml"
expect_rc 2 envlist
grep -qE "env_is_list\.yaml:[56]:[0-9]+: error: .*env" "$TMP/envlist" ||
	{ cat "$TMP/envlist" >&2; fail "a list env: must be an error at env_is_list.yaml:5 or 6:COL"; }
check_to envlist_dir --config "$CFG/env_is_list.yaml" -b maxtext -a gfx950
expect_rc 2 envlist_dir
expect_counts_match envlist_dir

# --- a spec with an unknown field: exit 2 with file:line:col ---
cp -R "$ENVFS_SPECS" "$TMP/specs"
# the line after `backend: maxtext` gets a misspelled top-level key
line=$(grep -n '^backend: maxtext$' "$TMP/specs/maxtext.yaml" | cut -d: -f1)
[ -n "$line" ] || fail "shipped maxtext.yaml has no 'backend: maxtext' line"
sed -i "${line}a\\
archs: [gfx950]" "$TMP/specs/maxtext.yaml"
want=$((line + 1))
check_to badspec --specs "$TMP/specs"
expect_rc 2 badspec
grep -qE "maxtext\.yaml:$want:1: error: .*archs" "$TMP/badspec" ||
	{ cat "$TMP/badspec" >&2; fail "unknown spec key must be an error at maxtext.yaml:$want:1 naming 'archs'"; }

# an unknown key inside a variable entry
cp -R "$ENVFS_SPECS" "$TMP/specs2"
line=$(grep -n 'name: TF_CPP_MIN_LOG_LEVEL' "$TMP/specs2/maxtext.yaml" | cut -d: -f1)
[ -n "$line" ] || fail "shipped maxtext.yaml has no TF_CPP_MIN_LOG_LEVEL entry"
sed -i "${line}a\\
    defualt: \"3\"" "$TMP/specs2/maxtext.yaml"
want=$((line + 1))
check_to badvar --specs "$TMP/specs2"
expect_rc 2 badvar
grep -qE "maxtext\.yaml:$want:5: error: .*defualt" "$TMP/badvar" ||
	{ cat "$TMP/badvar" >&2; fail "unknown variable key must be an error at maxtext.yaml:$want:5 naming 'defualt'"; }
# resolve refuses the broken specs too, with one line and a non-zero exit
run "$TMP/badvar.resolve" "$TMP/badvar.resolve.err" clean "$ENVFS_BIN" resolve --specs "$TMP/specs2" -b maxtext -a gfx950
assert_no_crash "resolve with a bad spec" "$TMP/badvar.resolve.err"
[ "$rc" -ne 0 ] || fail "resolve with a bad spec must fail"

# --- a YAML syntax error in a spec: exit 2 with file:line:col ---
cp -R "$ENVFS_SPECS" "$TMP/specs3"
printf 'variables:\n  - name: "unterminated\n' >"$TMP/specs3/broken.yaml"
check_to badyaml --specs "$TMP/specs3"
expect_rc 2 badyaml
grep -qE "broken\.yaml:[0-9]+:[0-9]+: error: " "$TMP/badyaml" ||
	{ cat "$TMP/badyaml" >&2; fail "spec YAML syntax error must carry broken.yaml:LINE:COL"; }

# --- check -b limits to one backend; a config's framework: selects backends ---
check_to one -b maxdiffusion
expect_rc 0 one

# --- --format json: one object per diagnostic and directory, on stdout ---
printf 'env:\n  XLA_FLAGS: "--xla_gpu_autotune_level=2"\n  XLA_PYTHON_CLIENT_MEM_FRACTION: 0.96\n' >"$TMP/j.yaml"
run "$TMP/j.json" "$TMP/j.err" clean "$ENVFS_BIN" check --config "$TMP/j.yaml" --format json
expect_rc 1 j.err
[ ! -s "$TMP/j.err" ] || fail "check --format json wrote on stderr: $(cat "$TMP/j.err")"
python3 -m json.tool "$TMP/j.json" >/dev/null || fail "check --format json is not JSON: $(cat "$TMP/j.json")"
python3 - "$TMP/j.json" "$TMP/j.yaml" <<'PY' || fail "check --format json: wrong objects: $(cat "$TMP/j.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and d, d
for o in d:
    assert sorted(o) == ["code", "column", "directory", "file", "line", "message",
                         "severity", "silenced"], o
    assert o["silenced"] is False, o
owns = [o for o in d if "XLA_FLAGS is set in the config" in o["message"]]
assert sorted(o["directory"] for o in owns) == ["maxtext/gfx942", "maxtext/gfx950"], owns
assert all(o["severity"] == "warning" and o["file"] == sys.argv[2] and o["line"] == 2
           and o["column"] == 14 and o["code"] == "PE116" for o in owns), owns
flt = [o for o in d if "unquoted 0.96 is a float" in o["message"]]
assert len(flt) == 1 and flt[0]["directory"] is None and flt[0]["line"] == 3, flt
assert flt[0]["code"] == "PE104", flt
PY
run "$TMP/j.json" "$TMP/j.err" clean "$ENVFS_BIN" check --format=json
expect_rc 0 j.err
[ "$(cat "$TMP/j.json")" = "[]" ] || fail "a clean check --format json is not []: $(cat "$TMP/j.json")"
run "$TMP/j.json" "$TMP/j.err" clean "$ENVFS_BIN" check --config "$CFG/syntax_error.yaml" --format json
expect_rc 2 j.err
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["severity"]=="error" and d[0]["directory"] is None, d' \
	"$TMP/j.json" || fail "check --format json of a syntax error"

# --- the text lists a directory's diagnostic once, with its directories ---
run "$TMP/t.out" "$TMP/t.err" clean "$ENVFS_BIN" check --config "$TMP/j.yaml"
[ "$(grep -c 'XLA_FLAGS is set in the config' "$TMP/t.err")" -eq 1 ] &&
	grep -q 'XLA_FLAGS is set in the config.* \[maxtext/gfx942 maxtext/gfx950\]$' "$TMP/t.err" ||
	fail "check's text does not list the maxtext warning once with its directories: $(cat "$TMP/t.err")"

# --- -q/--quiet: nothing printed, the exit status tells ---
for q in -q --quiet; do
	run "$TMP/q.out" "$TMP/q.err" clean "$ENVFS_BIN" check $q --config "$TMP/j.yaml"
	expect_rc 1 q.err
	[ ! -s "$TMP/q.out" ] && [ ! -s "$TMP/q.err" ] || fail "check $q printed something"
	run "$TMP/q.out" "$TMP/q.err" clean "$ENVFS_BIN" check $q --config "$CFG/env_is_list.yaml"
	expect_rc 2 q.err
	[ ! -s "$TMP/q.out" ] && [ ! -s "$TMP/q.err" ] || fail "check $q printed something on errors"
done

# --- codes and silencing: --ignore, a config line's comment, explain ---
# A MaxText config: an XLA_ name in the backends that run no XLA would
# warn too (PE603).
printf 'env:\n  XLA_PYTHON_CLIENT_MEM_FRACTION: 0.96\n  MY_FLAG: on\nmodules:\n  pre_trainer:\n    framework: maxtext\n' >"$TMP/s.yaml"
check_to codes --config "$TMP/s.yaml"
expect_rc 1 codes
grep -qE 's\.yaml:2:[0-9]+: warning: .*unquoted 0\.96 .* \[PE104\]$' "$TMP/codes" ||
	fail "check's text does not end a diagnostic with its code: $(cat "$TMP/codes")"
for ign in "--ignore PE104" "--ignore=pe104" "--ignore PE002,PE104" "--ignore PE002 --ignore PE104"; do
	check_to ign --config "$TMP/s.yaml" $ign
	expect_rc 0 ign
	grep -q 'warning: ' "$TMP/ign" && fail "check $ign printed a silenced warning: $(cat "$TMP/ign")"
	grep -qx '0 error(s), 0 warning(s), 0 info, 2 silenced' "$TMP/ign" ||
		fail "check $ign: the summary does not count the silenced: $(cat "$TMP/ign")"
done
run "$TMP/ign.json" "$TMP/ign.err" clean "$ENVFS_BIN" check --config "$TMP/s.yaml" --ignore PE104 --format json
expect_rc 0 ign.err
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) == 2 and all(o["silenced"] and o["code"] == "PE104" for o in d), d' \
	"$TMP/ign.json" || fail "check --format json does not mark silenced diagnostics: $(cat "$TMP/ign.json")"
for bad in PE999 PE10 XLA_FLAGS "PE104,"; do
	run "$TMP/bad.out" "$TMP/bad.err" clean "$ENVFS_BIN" check --config "$TMP/s.yaml" --ignore "$bad"
	[ "$rc" -eq 64 ] && grep -qF -- "--ignore $bad" "$TMP/bad.err" && grep -q "not a diagnostic code" "$TMP/bad.err" ||
		fail "check --ignore $bad: want exit 64 naming it, got $rc: $(cat "$TMP/bad.err")"
done
# A trailing comment silences the codes it names on its own line only.
printf 'env:\n  XLA_PYTHON_CLIENT_MEM_FRACTION: 0.96  # primus-envfs: ignore=PE104\n  MY_FLAG: on # primus-envfs: ignore=PE107, PE104\n  OTHER: 010\nmodules:\n  pre_trainer:\n    framework: maxtext\n' >"$TMP/c.yaml"
check_to cmt --config "$TMP/c.yaml"
expect_rc 1 cmt
[ "$(grep -c 'warning: ' "$TMP/cmt")" -eq 1 ] && grep -qE 'c\.yaml:4:[0-9]+: warning: OTHER: .*\[PE104\]$' "$TMP/cmt" ||
	fail "a comment did not silence its own line only: $(cat "$TMP/cmt")"
printf 'env:\n  A: 0.96  # primus-envfs: ignore=PE104\n' >"$TMP/c1.yaml"
check_to cmt1 --config "$TMP/c1.yaml"
expect_rc 0 cmt1
run "$TMP/x.out" "$TMP/x.err" clean "$ENVFS_BIN" resolve --config "$TMP/c1.yaml" -b megatron -a gfx942 --format explain
grep -qE '^  .*c1\.yaml:2:[0-9]+: warning: A: unquoted 0\.96 .*\[PE104, silenced\]$' "$TMP/x.out" ||
	fail "explain does not list the silenced diagnostic as silenced: $(grep -A5 '^diagnostics' "$TMP/x.out")"
printf 'env:\n  A: 0.96  # primus-envfs: ignore=PE104,PE9\n' >"$TMP/c2.yaml"
check_to cmt2 --config "$TMP/c2.yaml"
expect_rc 1 cmt2
grep -qE 'c2\.yaml:2:[0-9]+: warning: .*PE9.* is not a diagnostic code.*\[PE118\]$' "$TMP/cmt2" ||
	fail "a bad code in a comment is not reported: $(cat "$TMP/cmt2")"

# A module's framework that names no backend: a warning at its place,
# with the closest backend (it was silent, and check took every backend).
printf 'modules:\n  pre_trainer:\n    framework: megatorn\n  other:\n    framework: megatron\n' >"$TMP/fw.yaml"
check_to fw --config "$TMP/fw.yaml" -b megatron -a gfx950
expect_rc 1 fw
grep -qE "fw\.yaml:3:[0-9]+: warning: modules\.pre_trainer\.framework: megatorn is no backend the specs know; did you mean megatron\? \[PE119\]" "$TMP/fw" ||
	fail "a misspelled framework: $(cat "$TMP/fw")"
grep -q "framework: megatron is" "$TMP/fw" && fail "a known framework is warned: $(cat "$TMP/fw")"
# resolve of one backend (which reads no other spec) says the same, as
# the mount's explain does; a framework naming another backend is known.
clean "$ENVFS_BIN" resolve --config "$TMP/fw.yaml" -b maxtext -a gfx950 --format explain >"$TMP/fwx"
grep -q "modules\.pre_trainer\.framework: megatorn is no backend the specs know; did you mean megatron?" "$TMP/fwx" ||
	fail "resolve -b maxtext does not say what check says of the framework: $(grep PE119 "$TMP/fwx")"
[ "$(grep -c PE119 "$TMP/fwx")" -eq 1 ] || fail "resolve -b maxtext warns of a known framework: $(grep PE119 "$TMP/fwx")"

# --format json when an input cannot be read: stdout is still the array,
# the input an error in it (stdout was empty, the reason on stderr only).
printf 'GOOD=1\nBAD NAME=2\n' >"$TMP/badline.env"
for how in "--config $TMP/no-such.yaml" "--env-file $TMP/badline.env"; do
	run "$TMP/unread.json" "$TMP/unread.err" clean "$ENVFS_BIN" check $how --format json
	[ "$rc" -eq 2 ] || fail "check $how --format json: exit $rc, want 2"
	python3 "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$ENVFS_SPECS/schemas/check.schema.json" \
		"$TMP/unread.json" || fail "check $how --format json: not valid: $(cat "$TMP/unread.json")"
	python3 - "$TMP/unread.json" <<'PY' || fail "check $how --format json: $(cat "$TMP/unread.json" "$TMP/unread.err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 1 and d[0]["severity"] == "error" and d[0]["code"] in ("PE001", "PE204"), d
PY
done

# --ignore silences the diagnostic of an input that did not load, not the
# failure: resolve printed an environment made without the config (exit
# 0), which no silence makes right; check counted 0 errors and exited 2
# without saying why.
printf 'env: [1\n' >"$TMP/broken.yaml"
run "$TMP/rb" "$TMP/rb.err" clean "$ENVFS_BIN" resolve --config "$TMP/broken.yaml" --ignore PE002 -b maxtext -a gfx950
[ "$rc" -eq 2 ] && [ ! -s "$TMP/rb" ] || fail "resolve of a config that did not load, --ignore PE002: exit $rc, $(head -3 "$TMP/rb")"
grep -q "broken.yaml: the input did not load" "$TMP/rb.err" || fail "resolve does not say the input did not load: $(cat "$TMP/rb.err")"
run "$TMP/cb" "$TMP/cb.err" clean "$ENVFS_BIN" check --config "$TMP/broken.yaml" --ignore PE002 -b maxtext -a gfx950
[ "$rc" -eq 2 ] && grep -q "broken.yaml: the input did not load" "$TMP/cb.err" ||
	fail "check of a config that did not load, --ignore PE002: exit $rc: $(cat "$TMP/cb.err")"
# ... and of the selected backend's own spec (it exited 2 saying nothing).
cp -R "$ENVFS_SPECS" "$TMP/brokenspecs"
printf 'backend: torchtitan\nenv: [\n' >"$TMP/brokenspecs/torchtitan.yaml"
run "$TMP/rs" "$TMP/rs.err" clean "$ENVFS_BIN" resolve --specs "$TMP/brokenspecs" --ignore PE002 -b torchtitan -a gfx950
[ "$rc" -eq 2 ] && grep -q "torchtitan.yaml: the input did not load" "$TMP/rs.err" ||
	fail "resolve of a broken spec, --ignore PE002: exit $rc: $(cat "$TMP/rs.err")"

echo "ok: check"

# End-to-end: env.sh sourced in sh and bash, and environ read back,
# reproduce awkward values byte for byte (issue 2, acceptance 3).
set -eu
. "$(dirname "$0")/lib.sh"

# NAME and the printf format of its exact bytes: from the config fixture
# (YAML escapes) and from --env arguments.
cat >"$TMP/table" <<'EOF'
T_SPACES a  b   c
T_LEADTRAIL   lead and trail  
T_SQUOTE it's 'quoted'
T_DQUOTE say "hi"
T_DOLLAR $NOT_SET_ANYWHERE ${NOT_SET_EITHER} $(id) `id` $$ $
T_BACKSLASH back\\slash \\n \\\\ end\\
T_NEWLINE line1\nline2\n\nline4
T_TRAILNL ends with newline\n
T_MIX '"$\\\n\t x '\\''
T_EMPTY 
T_UTF8 h\303\251llo \342\234\223
C_SPACES a  b   c
C_QUOTES it's "double" and 'single'
C_DOLLAR $HOME ${PATH} $(id) `id`
C_BACKSLASH a\\b\\\\c\\
C_NEWLINE x\ny\n
C_MIX '"$\\\n\t x '\\''
C_EQUALS a=b=c
EOF
mkdir "$TMP/want"
while IFS= read -r row; do
	name=${row%% *}
	fmt=${row#* }
	# shellcheck disable=SC2059  # the format is the point
	printf "$fmt" >"$TMP/want/$name"
done <"$TMP/table"

args="--config $ENVFS_FIXTURES/e2e/tricky_values.yaml"
set -- \
	--env "C_SPACES=a  b   c" \
	--env "C_QUOTES=it's \"double\" and 'single'" \
	--env 'C_DOLLAR=$HOME ${PATH} $(id) `id`' \
	--env 'C_BACKSLASH=a\b\\c\' \
	--env "C_EQUALS=a=b=c" \
	--inherit "$TMP/newlines.environ"
# Values with a newline come from the image: the launcher splits an --env
# value at its newlines when it exports --env again after the runner.
# C_NEWLINE: a trailing newline cannot survive $(...); carry it with a marker
{
	printf 'C_NEWLINE=x\ny\nEND\0'
	printf 'C_MIX=%s\0' "$(printf '%s' "'\"\$\\")$(printf '\n\t x ')'\\''"
} >"$TMP/newlines.environ"
# shellcheck disable=SC2086
for fmt in sh environ env_file; do
	run "$TMP/out.$fmt" "$TMP/err.$fmt" clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 \
		--format "$fmt" $args "$@"
	assert_no_crash "resolve --format $fmt" "$TMP/err.$fmt"
	[ "$rc" -eq 0 ] || { cat "$TMP/err.$fmt" >&2; fail "resolve --format $fmt exited $rc"; }
done
printf 'x\ny\nEND' >"$TMP/want/C_NEWLINE"

names=$(cut -d' ' -f1 "$TMP/table")

# env.sh in each shell: every value written back with printf %s
for shell in sh bash zsh; do
	command -v "$shell" >/dev/null 2>&1 || { [ "$shell" = zsh ] && continue; fail "no $shell"; }
	mkdir "$TMP/got.$shell"
	# shellcheck disable=SC2016
	env -i PATH="$PATH" "$shell" -c '
		. "$1/out.sh" || exit 3
		shift
		out=$1
		shift
		for n in "$@"; do
			eval "printf %s \"\${$n}\"" >"$out/$n" || exit 4
			eval "[ -n \"\${$n+x}\" ]" || echo "$n" >>"$out/.unset"
		done' "$shell" "$TMP" "$TMP/got.$shell" $names ||
		fail "$shell: sourcing env.sh failed"
	[ -e "$TMP/got.$shell/.unset" ] && fail "$shell: env.sh left unset: $(cat "$TMP/got.$shell/.unset")"
	for n in $names; do
		cmp -s "$TMP/want/$n" "$TMP/got.$shell/$n" || {
			echo "want:" >&2; od -c "$TMP/want/$n" >&2
			echo "got:" >&2; od -c "$TMP/got.$shell/$n" >&2
			fail "$shell: env.sh does not reproduce $n"
		}
	done
	# the variables are exported, not just set
	env -i PATH="$PATH" "$shell" -c '. "$1/out.sh"; exec env' "$shell" "$TMP" >"$TMP/exported.$shell"
	grep -q '^T_SPACES=a  b   c$' "$TMP/exported.$shell" || fail "$shell: env.sh does not export"
done

# environ read back: split on NUL, exact bytes
mkdir "$TMP/got.environ"
python3 - "$TMP/out.environ" "$TMP/got.environ" <<'EOF'
import os, sys
data = open(sys.argv[1], "rb").read()
assert data.endswith(b"\0"), "environ must end with NUL"
seen = set()
for e in data.split(b"\0")[:-1]:
    n, eq, v = e.partition(b"=")
    assert eq, e
    assert n not in seen, n
    seen.add(n)
    open(os.path.join(sys.argv[2], n.decode()), "wb").write(v)
EOF
for n in $names; do
	[ -e "$TMP/got.environ/$n" ] || fail "environ: $n missing"
	cmp -s "$TMP/want/$n" "$TMP/got.environ/$n" || {
		od -c "$TMP/got.environ/$n" >&2
		fail "environ does not reproduce $n"
	}
done

# env_file: docker cannot carry a newline: the value is left out with a
# comment; every other value is one literal NAME=value line
for n in $names; do
	if [ "$(wc -l <"$TMP/want/$n")" -gt 0 ]; then
		grep -q "^$n=" "$TMP/out.env_file" && fail "env_file: $n holds a newline and must be omitted"
		grep -q "^# $n omitted: " "$TMP/out.env_file" || fail "env_file: no '# $n omitted: …' comment"
	else
		{ printf '%s=' "$n"; cat "$TMP/want/$n"; printf '\n'; } >"$TMP/line"
		grep -qxF -f "$TMP/line" "$TMP/out.env_file" || fail "env_file: no literal line for $n"
	fi
done

echo "ok: sh_roundtrip"

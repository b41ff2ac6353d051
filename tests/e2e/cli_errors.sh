# End-to-end: bad command lines get exactly one line on stderr naming the
# problem and a non-zero exit, never a crash (SPEC section 8).
set -eu
. "$(dirname "$0")/lib.sh"

clean() {
	env -i PATH="$PATH" ${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} "$@"
}

n=0
# bad WORD ARGS...: the run fails with one stderr line containing WORD.
bad() {
	word=$1
	shift
	n=$((n + 1))
	run "$TMP/out.$n" "$TMP/err.$n" clean "$ENVFS_BIN" "$@"
	assert_no_crash "primus-envfs $*" "$TMP/err.$n"
	[ "$rc" -ne 0 ] || fail "primus-envfs $*: must fail, exited 0"
	lines=$(wc -l <"$TMP/err.$n")
	[ "$lines" -eq 1 ] || { cat "$TMP/err.$n" >&2; fail "primus-envfs $*: want one line on stderr, got $lines"; }
	grep -qF -- "$word" "$TMP/err.$n" || { cat "$TMP/err.$n" >&2; fail "primus-envfs $*: the error must name '$word'"; }
	[ ! -s "$TMP/out.$n" ] || { cat "$TMP/out.$n" >&2; fail "primus-envfs $*: printed output despite the error"; }
}

# bad arguments
bad --no-such-option resolve --no-such-option -b maxtext -a gfx950
bad --no-such-option check --no-such-option
bad -b resolve -a gfx950
bad -a resolve -b maxtext
bad -b resolve -a gfx950 -b
bad stray resolve -b maxtext -a gfx950 stray

# missing or unreadable inputs
bad /nonexistent/exp.yaml resolve --config /nonexistent/exp.yaml -b maxtext -a gfx950
bad /nonexistent/exp.yaml check --config /nonexistent/exp.yaml
bad /nonexistent/image.env resolve --inherit /nonexistent/image.env -b maxtext -a gfx950
bad /nonexistent/specs resolve --specs /nonexistent/specs -b maxtext -a gfx950
mkdir "$TMP/unreadable.yaml"
bad "$TMP/unreadable.yaml" resolve --config "$TMP/unreadable.yaml" -b maxtext -a gfx950

# unknown backend, arch, format
bad nosuchbackend resolve -b nosuchbackend -a gfx950
bad nosuchbackend check -b nosuchbackend
bad gfx1 resolve -b maxtext -a gfx1
bad gfx1 check -b maxtext -a gfx1
bad cuda resolve -b maxtext -a cuda
bad yaml resolve -b maxtext -a gfx950 --format yaml

# --env without '=' (and with a name that is not a name)
bad NNODES resolve -b maxtext -a gfx950 --env NNODES
bad NNODES check --env NNODES
bad '1BAD' resolve -b maxtext -a gfx950 --env 1BAD=x

# a good command line still works after all that
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" resolve -b maxtext -a gfx950
[ "$rc" -eq 0 ] || fail "resolve -b maxtext -a gfx950 must succeed"
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" --version
[ "$rc" -eq 0 ] && [ -s "$TMP/ok" ] || fail "--version must print and exit 0"
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" --help
[ "$rc" -eq 0 ] && grep -q resolve "$TMP/ok" || fail "--help must print the usage and exit 0"

echo "ok: cli_errors"

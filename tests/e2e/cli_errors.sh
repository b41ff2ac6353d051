# End-to-end: bad command lines get exactly one line on stderr naming the
# problem and a non-zero exit, never a crash (SPEC section 8): 64 for a
# command line that is wrong, 2 for an input that cannot be read.
set -eu
. "$(dirname "$0")/lib.sh"

n=0
# bad RC WORD ARGS...: the run exits RC with one stderr line containing WORD.
bad() {
	want=$1 word=$2
	shift 2
	n=$((n + 1))
	run "$TMP/out.$n" "$TMP/err.$n" clean "$ENVFS_BIN" "$@"
	assert_no_crash "primus-envfs $*" "$TMP/err.$n"
	[ "$rc" -eq "$want" ] || { cat "$TMP/err.$n" >&2; fail "primus-envfs $*: must exit $want, exited $rc"; }
	lines=$(wc -l <"$TMP/err.$n")
	[ "$lines" -eq 1 ] || { cat "$TMP/err.$n" >&2; fail "primus-envfs $*: want one line on stderr, got $lines"; }
	grep -qF -- "$word" "$TMP/err.$n" || { cat "$TMP/err.$n" >&2; fail "primus-envfs $*: the error must name '$word'"; }
	[ ! -s "$TMP/out.$n" ] || { cat "$TMP/out.$n" >&2; fail "primus-envfs $*: printed output despite the error"; }
}

# bad arguments
bad 64 --no-such-option resolve --no-such-option -b maxtext -a gfx950
bad 64 --no-such-option check --no-such-option
bad 64 -b resolve -a gfx950
bad 64 -a resolve -b maxtext
bad 64 -b resolve -a gfx950 -b
bad 64 stray resolve -b maxtext -a gfx950 stray

# missing or unreadable inputs
bad 2 /nonexistent/exp.yaml resolve --config /nonexistent/exp.yaml -b maxtext -a gfx950
bad 2 /nonexistent/exp.yaml check --config /nonexistent/exp.yaml
bad 2 /nonexistent/image.env resolve --inherit /nonexistent/image.env -b maxtext -a gfx950
bad 2 /nonexistent/specs resolve --specs /nonexistent/specs -b maxtext -a gfx950
mkdir "$TMP/unreadable.yaml"
bad 2 "$TMP/unreadable.yaml" resolve --config "$TMP/unreadable.yaml" -b maxtext -a gfx950

# unknown backend, arch, format
bad 64 nosuchbackend resolve -b nosuchbackend -a gfx950
bad 64 nosuchbackend check -b nosuchbackend
bad 64 gfx1 resolve -b maxtext -a gfx1
bad 64 gfx1 check -b maxtext -a gfx1
bad 64 cuda resolve -b maxtext -a cuda
bad 64 yaml resolve -b maxtext -a gfx950 --format yaml

# --env with a name that is not a name (--env NAME alone is docker's -e
# NAME: the caller's value)
bad 64 '1BAD' resolve -b maxtext -a gfx950 --env 1BAD=x
bad 64 "'--env' needs an argument" check --env
bad 2 /nonexistent/secrets.env resolve --env-file /nonexistent/secrets.env -b maxtext -a gfx950

# a good command line still works after all that
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" resolve -b maxtext -a gfx950
[ "$rc" -eq 0 ] || fail "resolve -b maxtext -a gfx950 must succeed"
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" --version
[ "$rc" -eq 0 ] && [ -s "$TMP/ok" ] || fail "--version must print and exit 0"
run "$TMP/ok" "$TMP/ok.err" clean "$ENVFS_BIN" --help
[ "$rc" -eq 0 ] && grep -q resolve "$TMP/ok" || fail "--help must print the usage and exit 0"

echo "ok: cli_errors"

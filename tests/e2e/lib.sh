# Shared helpers of the end-to-end tests (sourced; the caller runs `set -eu`).
# meson sets ENVFS_BIN (the built primus-envfs), ENVFS_SPECS (shipped specs)
# and ENVFS_FIXTURES (tests/fixtures).

: "${ENVFS_BIN:?ENVFS_BIN must name the primus-envfs binary}"
: "${ENVFS_SPECS:?ENVFS_SPECS must name the shipped specs directory}"
: "${ENVFS_FIXTURES:?ENVFS_FIXTURES must name tests/fixtures}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# clean CMD...: CMD with nothing of this environment but PATH (and the
# sanitizers' options): the specs pass names such as MASTER_ADDR and
# NNODES through from the host, so the caller's must not leak in.
clean() {
	env -i PATH="$PATH" ${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} "$@"
}

# A temporary directory removed on exit, in $TMP.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/envfs-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# run OUT ERR CMD...: runs CMD with stdout/stderr to files; sets $rc.
run() {
	_out=$1 _err=$2
	shift 2
	set +e
	"$@" >"$_out" 2>"$_err"
	rc=$?
	set -e
}

# A crash is a signal (exit >= 128) or a sanitizer report.
assert_no_crash() {
	[ "$rc" -lt 128 ] || fail "$1: killed by a signal (exit $rc)"
	if grep -q -e 'AddressSanitizer' -e 'runtime error:' -e 'LeakSanitizer' "$2"; then
		cat "$2" >&2
		fail "$1: sanitizer report"
	fi
}

# has_line FILE LINE: FILE holds LINE exactly as a whole line.
has_line() {
	grep -qxF -- "$2" "$1"
}

expect_line() {
	has_line "$1" "$2" || { cat "$1" >&2; fail "$3: missing line '$2'"; }
}

expect_no_line_starting() {
	if grep -q "^$2" "$1"; then
		grep "^$2" "$1" >&2
		fail "$3: unexpected line starting '$2'"
	fi
}

# The value of NAME in an env_file (first NAME= line), or exit status 1.
env_file_value() {
	awk -v n="$2" 'index($0, n "=") == 1 { print substr($0, length(n) + 2); f = 1; exit } END { exit !f }' "$1"
}

# check_to NAME ARGS...: runs check, stdout and stderr together in $TMP/NAME.
check_to() {
	_n=$1
	shift
	run "$TMP/$_n" "$TMP/$_n.err" clean "$ENVFS_BIN" check "$@"
	cat "$TMP/$_n.err" >>"$TMP/$_n"
	assert_no_crash "check $_n" "$TMP/$_n"
}

# expect_rc RC NAME: the last run exited RC, else NAME's output is shown.
expect_rc() {
	[ "$rc" -eq "$1" ] || { cat "$TMP/$2" >&2; fail "$2: check must exit $1, got $rc"; }
}

# stderr_check FILE [ALLOW_ERE]: fails (returns 1, saying why on stderr)
# when a daemon's stderr FILE holds a sanitizer report, or any line that
# ALLOW_ERE (an extended regex of the lines a test expects) does not
# match. Sourced by tests/mount/lib.sh and tests/sync/mountlib.sh.
# A reload that fails says so in one line, whatever the test: a broken
# input is the user's, and the tests that break one assert its reason
# in status and diagnostics, where it is served.
RELOAD_FAILED_ERE='^primus-envfs: the inputs did not load: .*; still serving generation [0-9]+$'
stderr_check() {
	local f=$1 allow=${2:-} bad
	allow="$RELOAD_FAILED_ERE${allow:+|$allow}"
	[ -s "$f" ] || return 0
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer|ThreadSanitizer' "$f"; then
		cat "$f" >&2
		echo "FAIL: sanitizer report in daemon stderr ($f)" >&2
		return 1
	fi
	bad=$(grep -vE "$allow" "$f" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: unexpected daemon stderr ($f):" >&2
		echo "$bad" >&2
		return 1
	fi
}

# stderr_check FILE [ALLOW_ERE]: fails (returns 1, saying why on stderr)
# when a daemon's stderr FILE holds a sanitizer report, or any line that
# ALLOW_ERE (an extended regex of the lines a test expects) does not
# match. Sourced by tests/mount/lib.sh and tests/sync/mountlib.sh.
stderr_check() {
	local f=$1 allow=${2:-} bad
	[ -s "$f" ] || return 0
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer|ThreadSanitizer' "$f"; then
		cat "$f" >&2
		echo "FAIL: sanitizer report in daemon stderr ($f)" >&2
		return 1
	fi
	if [ -n "$allow" ]; then
		bad=$(grep -vE "$allow" "$f" || true)
	else
		bad=$(cat "$f")
	fi
	if [ -n "$bad" ]; then
		echo "FAIL: unexpected daemon stderr ($f):" >&2
		echo "$bad" >&2
		return 1
	fi
}

# End-to-end: a run record too large to parse in the memory allowed is
# refused as that ("out of memory"), never as "not a JSON object": the
# file is valid JSON, and telling the user it is not sends them looking
# for a fault that is not there. Each JSON value costs far more memory
# than its two bytes of text, so a 24 MB array of zeros does not fit in a
# 400 MB address space.
set -eu
. "$(dirname "$0")/lib.sh"

# The sanitizers reserve terabytes of address space: ulimit -v cannot
# apply to them.
if grep -qa -e __asan_init -e __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	echo "1..0 # SKIP ulimit -v under a sanitizer"
	exit 77
fi
cd "$TMP"
python3 -c '
import sys
with open("big.json", "w") as f:
    f.write("{\"format\": \"primus-envfs-record\", \"pad\": [")
    f.write("0," * (12 * 1000 * 1000))
    f.write("0]}")
'
printf '{"format": "primus-envfs-record"}\n' >small.json
rc=0
(ulimit -v 400000; exec "$ENVFS_BIN" diff -b maxtext -a gfx950 record:big.json record:small.json) \
	>out 2>err || rc=$?
assert_no_crash "diff record:big.json" err
[ "$rc" -ne 0 ] || fail "diff of a record it could not read exited 0"
grep -q 'big.json: out of memory' err || { cat err >&2; fail "the refusal does not say out of memory"; }
! grep -q 'not a JSON object' err || fail "a valid JSON file called not a JSON object: $(cat err)"
echo "ok record_nomem"

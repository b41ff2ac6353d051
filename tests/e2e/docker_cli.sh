#!/usr/bin/env bash
# The env_file view as the real docker client reads it (SPEC 6.3).
#
# No docker engine runs here, so the docker CLI talks to a stub Engine API
# on a unix socket in the temp dir (tests/e2e/docker_stub.py). `docker
# create --env-file FILE` parses FILE in the client and posts the result as
# the container-create request's "Env" list; the stub saves that list, and
# this test asserts it equals, entry for entry and byte for byte, the
# resolved environment (`resolve --format environ`) minus exactly the values
# SPEC 6.3 says docker cannot carry (a '\n' or '\r', not valid UTF-8, a
# NAME=value line over 65,535 bytes), and that those are exactly the ones
# the env_file view names in "# NAME omitted: <reason>" comments.
#
# Cases: every shipped backend and arch, and tests/fixtures/docker/
# awkward.yaml (+ --env values YAML cannot hold), whose expected outcome is
# written out independently in tests/fixtures/docker/awkward.json.
#
# Skips (exit 77) where the docker client or python3 is absent.
set -eu

: "${ENVFS_BIN:?}" "${ENVFS_SPECS:?}" "${ENVFS_FIXTURES:?}"
here=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

if ! command -v docker >/dev/null 2>&1; then
	echo "docker client not installed: skipping the docker --env-file test"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "python3 not installed (needed for the stub Docker API): skipping"
	exit 77
fi

tmp=$(mktemp -d)
# A unix socket path must fit in sun_path (108 bytes).
if [ "${#tmp}" -gt 80 ]; then
	rmdir "$tmp"
	tmp=$(mktemp -d /tmp/envfs-docker.XXXXXX)
fi
stub_pid=
cleanup() {
	if [ -n "$stub_pid" ]; then
		kill "$stub_pid" 2>/dev/null || true
		wait "$stub_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

sock=$tmp/docker.sock
posted=$tmp/posted.environ
python3 "$here/docker_stub.py" "$sock" "$posted" "$tmp/requests.log" 2>"$tmp/stub.err" &
stub_pid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	kill -0 "$stub_pid" 2>/dev/null || fail "stub Docker API did not start: $(cat "$tmp/stub.err")"
	sleep 0.05
done
[ -S "$sock" ] || fail "stub Docker API socket $sock did not appear"

# The client must see only the stub: no user config, context, TLS, pinned
# API version or content trust (which would add registry lookups).
export DOCKER_HOST="unix://$sock"
export DOCKER_CONFIG="$tmp/docker-config"
unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH DOCKER_API_VERSION \
	DOCKER_CONTENT_TRUST DOCKER_DEFAULT_PLATFORM DOCKER_CLI_HINTS 2>/dev/null || true
to=
command -v timeout >/dev/null 2>&1 && to="timeout 60"

# expect ENVIRON EXPECTED OMITTED: EXPECTED gets ENVIRON's entries docker
# can carry (NUL-terminated), OMITTED the names of the rest, one a line.
# Written from SPEC 6.3, independently of the view's own code.
split_expected() {
	python3 - "$@" <<'EOF'
import sys
src, keep_path, omit_path = sys.argv[1:4]
data = open(src, "rb").read()
if data and not data.endswith(b"\0"):
    sys.exit("environ view does not end with a NUL byte")
keep, omit = [], []
for entry in data.split(b"\0")[:-1]:
    name = entry.split(b"=", 1)[0]
    value = entry[len(name) + 1:]
    try:
        value.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    if b"\n" in value or b"\r" in value or not utf8 or len(entry) > 65535:
        omit.append(name)
    else:
        keep.append(entry)
open(keep_path, "wb").write(b"".join(e + b"\0" for e in keep))
open(omit_path, "wb").write(b"".join(n + b"\n" for n in omit))
EOF
}

# check_case LABEL RESOLVE-ARGS...: the env_file of RESOLVE-ARGS through
# docker equals the environ view minus what SPEC 6.3 omits.
ncases=0
check_case() {
	local label=$1 d
	shift
	d=$tmp/case$ncases
	ncases=$((ncases + 1))
	mkdir "$d"
	"$ENVFS_BIN" resolve "$@" --format env_file >"$d/env_file" 2>"$d/resolve.err" ||
		fail "$label: resolve --format env_file failed: $(cat "$d/resolve.err")"
	"$ENVFS_BIN" resolve "$@" --format environ >"$d/environ" 2>"$d/resolve.err" ||
		fail "$label: resolve --format environ failed: $(cat "$d/resolve.err")"
	split_expected "$d/environ" "$d/expected" "$d/omitted"
	[ -s "$d/expected" ] || fail "$label: the resolved environment is empty"

	rm -f "$posted"
	$to docker create --pull never --env-file "$d/env_file" busybox \
		>"$d/docker.out" 2>"$d/docker.err" ||
		fail "$label: docker create --env-file failed: $(cat "$d/docker.err")"
	[ -f "$posted" ] ||
		fail "$label: docker posted no container-create request (requests: $(cat "$tmp/requests.log"))"
	if ! cmp -s "$d/expected" "$posted"; then
		echo "--- expected (environ minus SPEC 6.3 omissions) vs +++ posted by docker:" >&2
		diff <(tr '\0' '\n' <"$d/expected") <(tr '\0' '\n' <"$posted") | cut -c1-200 >&2 || true
		fail "$label: the Env docker posted differs from the resolved environment"
	fi
	# The view's comments name exactly the omitted values, in order.
	sed -n 's/^# \([^ ]*\) omitted: .*/\1/p' "$d/env_file" >"$d/commented"
	cmp -s "$d/omitted" "$d/commented" ||
		fail "$label: omitted values [$(tr '\n' ' ' <"$d/omitted")] but the env_file comments name [$(tr '\n' ' ' <"$d/commented")]"
	echo "ok: $label: $(tr -cd '\0' <"$posted" | wc -c) variables through docker, $(wc -l <"$d/omitted") omitted"
	last_case=$d
}

# --- Every shipped backend and arch ---------------------------------------
# Backends are the spec files with a top-level `backend:`; their arches are
# their own `arches: [...]`, else the runner's (the spec with `runner: true`).
flow_list() {
	sed -n 's/^arches:[[:space:]]*\[\(.*\)\][[:space:]]*\(#.*\)\{0,1\}$/\1/p' "$1" | tr ',' ' '
}
runner_arches=
for f in "$ENVFS_SPECS"/*.yaml; do
	grep -q '^runner:[[:space:]]*true' "$f" && runner_arches=$(flow_list "$f")
done
npairs=0
for f in "$ENVFS_SPECS"/*.yaml; do
	backend=$(sed -n 's/^backend:[[:space:]]*\([A-Za-z0-9_.-]*\).*/\1/p' "$f")
	[ -n "$backend" ] || continue
	arches=$(flow_list "$f")
	[ -n "$arches" ] || arches=$runner_arches
	[ -n "$arches" ] || fail "$f: no arches found (expected an 'arches: [...]' line here or in the runner spec)"
	for arch in $arches; do
		check_case "$backend/$arch" -b "$backend" -a "$arch"
		npairs=$((npairs + 1))
	done
done
[ "$npairs" -ge 2 ] || fail "found only $npairs backend/arch pairs in $ENVFS_SPECS"
grep -q 'POST /v[0-9.]*/containers/create' "$tmp/requests.log" ||
	fail "the stub never saw a versioned POST /containers/create"

# --- Awkward values ---------------------------------------------------------
# YAML holds the printable ones; --env adds what it cannot (bytes that are
# not UTF-8) and the line-length boundary: NAME=value of exactly 65,535
# bytes is carried, 65,536 is not.
repeat() { head -c "$2" /dev/zero | tr '\0' "$1"; }
check_case "awkward values" --config "$ENVFS_FIXTURES/docker/awkward.yaml" \
	-b maxtext -a gfx950 \
	--env "AWK_NONUTF8=$(printf 'caf\351 \377')" \
	--env "AWK_CLI_QUOTED=\"\$x\" 'y' \\z " \
	--env "AWK_AT_LIMIT=$(repeat x 65522)" \
	--env "AWK_OVER_LIMIT=$(repeat x 65521)" \
	--env "AWK_BIG=$(repeat y 70000)"
d=$last_case

# The comparison above trusts the environ view; this one does not: every
# AWK_ value docker posted is the one awkward.json spells out, and the
# omitted ones are exactly those it lists.
python3 - "$ENVFS_FIXTURES/docker/awkward.json" "$posted" "$d/omitted" <<'EOF' ||
import json, sys
spec = json.load(open(sys.argv[1], encoding="utf-8"))
want = {}
for k, v in spec["carried"].items():
    want[k] = v["repeat"] * v["count"] if isinstance(v, dict) else v
got = {}
for e in open(sys.argv[2], "rb").read().split(b"\0")[:-1]:
    k, _, v = e.decode("utf-8").partition("=")
    if k.startswith("AWK_"):
        got[k] = v
bad = False
for k in sorted(set(want) | set(got)):
    if want.get(k) != got.get(k):
        print("  %s: expected %r, docker posted %r" % (k, (want.get(k) or "")[:80] if k in want else None,
              (got.get(k) or "")[:80] if k in got else None), file=sys.stderr)
        bad = True
omitted = [l for l in open(sys.argv[3], encoding="utf-8").read().split("\n") if l]
if sorted(omitted) != sorted(spec["omitted"]):
    print("  omitted %s, expected %s" % (sorted(omitted), sorted(spec["omitted"])), file=sys.stderr)
    bad = True
sys.exit(1 if bad else 0)
EOF
	fail "awkward values: docker did not receive exactly the values of tests/fixtures/docker/awkward.json"
echo "ok: awkward values match tests/fixtures/docker/awkward.json"

echo "docker --env-file: $ncases cases passed ($npairs backend/arch pairs)"

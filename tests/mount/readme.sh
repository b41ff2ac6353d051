#!/bin/bash
# The README's commands, run as written (issue 15): the first quick-start
# command's build and install steps are the test suite's own, so its mount
# step is run against an install into a temporary destdir; then every
# command of the README shown after a "$ " prompt, in order, from the
# clone, with /mnt/primus and the state file moved into this test's
# temporary directory. Each must exit 0 and print every line the README
# shows after it ("..." stands for lines left out; a shown line may be the
# start of a longer one). Lines without a prompt (docker, sbatch,
# systemctl) are not run here.
. "$(dirname "$0")/lib.sh"

: "${ENVFS_SOURCE_ROOT:?}"
readme="$ENVFS_SOURCE_ROOT/README.md"
build=$(cd "$(dirname "$ENVFS_BIN")/.." && pwd)
bindir=$(meson introspect --buildoptions "$build" | "$PYTHON" -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(os.path.join(o["prefix"], o["bindir"]))')
dest="$TMP/dest"
meson install -C "$build" --no-rebuild --destdir "$dest" >"$TMP/install.log" 2>&1 ||
	fail "meson install --destdir: $(tail -5 "$TMP/install.log")"
export PATH="$dest$bindir:$PATH"
[ "$(command -v primus-envfs)" = "$dest$bindir/primus-envfs" ] || fail "the installed binary is not first on PATH"

# The two quick-start commands: present, one line each, valid shell.
quick=$(grep -E '^    apt-get update && apt-get install -y \$\(cat \.ci/packages\) && meson setup build && ' "$readme") ||
	fail "README: no quick-start commands"
[ "$(printf '%s\n' "$quick" | wc -l)" -eq 2 ] || fail "README: want exactly two quick-start commands"
printf '%s\n' "$quick" | bash -n || fail "README: a quick-start command is not valid shell"
grep -q ' && meson test -C build --print-errorlogs$' <<<"$quick" || fail "README: no test command"
mount_step=$(printf '%s\n' "$quick" | sed -n 's/^.* && meson install -C build && \(mkdir -p \/mnt\/primus && primus-envfs .*\)$/\1/p')
[ -n "$mount_step" ] || fail "README: the first command does not install and then mount"
[ -s "$ENVFS_SOURCE_ROOT/.ci/packages" ] || fail ".ci/packages is empty"

state="$TMP/primus-envfs.state"
subst() {
	sed -e "s|/mnt/primus|$MNT|g" -e "s|/var/lib/primus-envfs.state|$state|g" \
		-e "s|/tmp/good-run.json|$TMP/good-run.json|g"
}

cd "$ENVFS_SOURCE_ROOT"
rmdir "$MNT"
bash -c "$(printf '%s\n' "$mount_step" | subst)" || fail "the quick start's mount step failed"
mountpoint -q "$MNT" || fail "the quick start's mount step mounted nothing"

# The "$ " commands and their shown output, as NUL-separated records.
"$PYTHON" - "$readme" >"$TMP/cmds" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
out, i = [], 0
while i < len(lines):
    l = lines[i]
    if not l.startswith("    $ "):
        i += 1
        continue
    cmd = l[6:]
    while cmd.endswith("\\"):
        i += 1
        cmd = cmd[:-1] + " " + lines[i].strip()
    i += 1
    shown = []
    while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
        shown.append(lines[i][4:])
        i += 1
    out.append(cmd + "\n" + "\n".join(shown))
sys.stdout.write("\0".join(out))
PY
n=0
while IFS= read -r -d '' rec || [ -n "$rec" ]; do
	n=$((n + 1))
	# (no head/tail: an early exit would be a SIGPIPE under pipefail)
	cmd=$(printf '%s\n' "${rec%%$'\n'*}" | subst)
	printf '%s\n' "${rec#*$'\n'}" | subst >"$TMP/shown.$n"
	set +e
	bash -c "$cmd" >"$TMP/got.$n" 2>&1
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || { cat "$TMP/got.$n" >&2; fail "README command $n exited $rc: $cmd"; }
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		case "$want" in *...*) continue ;; esac
		awk -v w="$want" '$0 == w || index($0, w " ") == 1 { f = 1 } END { exit !f }' "$TMP/got.$n" || {
			cat "$TMP/got.$n" >&2
			fail "README command $n ($cmd) did not print: $want"
		}
	done <"$TMP/shown.$n"
done <"$TMP/cmds"
[ "$n" -ge 10 ] || fail "only $n README commands found"
mountpoint -q "$MNT" && fusermount3 -u "$MNT"
echo "ok: readme ($n commands)"

#!/usr/bin/env bash
# `meson install --destdir` into a temp dir gives a binary that resolves
# with the installed specs (no --specs), every shipped spec, and a man page
# that `man -l` renders with every view, xattr and errno in it.
#
# Skips (exit 77) only where man(1) is absent; CI installs man-db and
# groff-base (.ci/packages).
set -eu

: "${ENVFS_BIN:?}" "${ENVFS_SPECS:?}" "${ENVFS_FIXTURES:?}"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# ENVFS_BIN is <build>/fs/primus-envfs.
build=$(cd "$(dirname "$ENVFS_BIN")/.." && pwd)
[ -d "$build/meson-private" ] || fail "$build (from ENVFS_BIN=$ENVFS_BIN) is not a meson build dir"
command -v meson >/dev/null 2>&1 || fail "meson not found"
command -v python3 >/dev/null 2>&1 || fail "python3 not found (needed to read meson introspect)"

tmp=$(mktemp -d)
cleanup() {
	chmod -R u+rwX "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
dest=$tmp/dest

# Where this build installs: prefix, bindir, datadir, mandir.
meson introspect --buildoptions "$build" >"$tmp/options.json" ||
	fail "meson introspect --buildoptions $build failed"
prefix='' bindir='' datadir='' mandir='' libdir=''
eval "$(python3 - "$tmp/options.json" <<'EOF'
import json, os, shlex, sys
opts = {o["name"]: o["value"] for o in json.load(open(sys.argv[1]))}
prefix = opts["prefix"]
for k in ("bindir", "datadir", "mandir", "libdir"):
    print("%s=%s" % (k, shlex.quote(os.path.join(prefix, opts[k]))))
print("prefix=%s" % shlex.quote(prefix))
EOF
)"
[ -n "$prefix" ] && [ -n "$bindir" ] && [ -n "$datadir" ] && [ -n "$mandir" ] ||
	fail "could not read prefix/bindir/datadir/mandir from meson introspect"

# --no-rebuild: meson test has built everything, and a rebuild here would
# race with other tests using the build tree.
meson install -C "$build" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1 ||
	fail "meson install --destdir failed: $(tail -20 "$tmp/install.log")"

bin=$dest$bindir/primus-envfs
specs=$dest$datadir/primus-envfs/specs
man1=$dest$mandir/man1/primus-envfs.1
[ -x "$bin" ] || fail "no executable at $bin"
[ -d "$specs" ] || fail "no specs dir at $specs"
[ -f "$man1" ] || fail "no man page at $man1"

# Every shipped spec file is installed, unchanged.
nspecs=0
for f in "$ENVFS_SPECS"/*.yaml; do
	cmp -s "$f" "$specs/$(basename "$f")" || fail "$(basename "$f") not installed (or differs) in $specs"
	nspecs=$((nspecs + 1))
done
[ "$nspecs" -ge 2 ] || fail "only $nspecs spec files in $ENVFS_SPECS"
# ... and every name list, which check reads from the installed specs.
for f in "$ENVFS_SPECS"/names/*.txt; do
	cmp -s "$f" "$specs/names/$(basename "$f")" ||
		fail "names/$(basename "$f") not installed (or differs) in $specs"
done

# --version prints the project version from meson.
version=$(meson introspect --projectinfo "$build" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[ "$("$bin" --version)" = "primus-envfs $version" ] ||
	fail "installed --version says '$("$bin" --version)', expected 'primus-envfs $version'"
"$bin" --help >"$tmp/help" || fail "installed --help failed"
for w in resolve check exec list --specs --config --inherit --pass --env --env-file --extra-arch --state --host-root; do
	grep -q -- "$w" "$tmp/help" || fail "--help does not mention $w"
done

# The installed binary, run with no --specs from outside the source and
# build trees, resolves exactly like the build-tree binary with the source
# specs, for every format.
cd "$tmp"
for ba in maxtext/gfx950 torch_fl/cuda; do
	b=${ba%/*} a=${ba#*/}
	for fmt in env_file environ sh json digest; do
		"$bin" resolve -b "$b" -a "$a" --format "$fmt" >"$tmp/installed.out" 2>"$tmp/installed.err" ||
			fail "installed binary: resolve -b $b -a $a --format $fmt failed: $(cat "$tmp/installed.err")"
		"$ENVFS_BIN" resolve --specs "$ENVFS_SPECS" -b "$b" -a "$a" --format "$fmt" >"$tmp/build.out" ||
			fail "build-tree binary: resolve -b $b -a $a --format $fmt failed"
		cmp -s "$tmp/installed.out" "$tmp/build.out" ||
			fail "installed binary's $ba $fmt differs from the build tree's"
	done
done
"$bin" check >/dev/null 2>"$tmp/check.err" || {
	rc=$?
	[ "$rc" -le 1 ] || fail "installed binary: check exited $rc: $(cat "$tmp/check.err")"
}

# Proof that it read the *installed* specs and not the source tree (which
# the binary falls back to, and which still exists here): hide one
# installed spec file. The installed binary must lose that backend while
# the build-tree binary, which reads the source tree, keeps it. Removing a
# file needs no knowledge of the spec format or of the error wording.
mv "$specs/torchtitan.yaml" "$tmp/torchtitan.yaml.hidden"
if "$bin" resolve -b torchtitan -a gfx950 >/dev/null 2>"$tmp/hidden.err"; then
	fail "installed binary still resolves torchtitan with its installed spec removed: it does not read $specs"
fi
[ "$(wc -l <"$tmp/hidden.err")" -ge 1 ] || fail "no error for the removed backend"
"$ENVFS_BIN" resolve -b torchtitan -a gfx950 >/dev/null ||
	fail "build-tree binary lost torchtitan: the test disturbed the source tree"
mv "$tmp/torchtitan.yaml.hidden" "$specs/torchtitan.yaml"
"$bin" resolve -b torchtitan -a gfx950 >/dev/null || fail "installed torchtitan spec restored but not found"

# The system pieces: the systemd unit (under PREFIX/lib/systemd/system,
# which systemd reads, running the installed binary), mount(8)'s helper
# link (in /sbin unless -Dmount_helper_dir says otherwise; tests/mount/
# mount8.sh runs it through mount(8)), and the completions where
# bash-completion and zsh look, unchanged.
unit=$dest$prefix/lib/systemd/system/primus-envfs.service
helper=$(find "$dest" -name mount.fuse.primus-envfs)
if [ "${ENVFS_HAS_MOUNT:-1}" = 1 ]; then
	[ -f "$unit" ] || fail "no systemd unit at $unit"
	grep -q "^ExecStart=$bindir/primus-envfs " "$unit" ||
		fail "$unit: ExecStart does not run $bindir/primus-envfs"
	[ -n "$helper" ] && [ "$(readlink "$helper")" = "$bindir/primus-envfs" ] ||
		fail "no mount.fuse.primus-envfs link to $bindir/primus-envfs under $dest"
else
	# -Dfuse=disabled: no mount, so nothing to start or help mount
	[ ! -e "$unit" ] && [ -z "$helper" ] || fail "a build without the mount installed its unit or helper"
fi
# The sync module (fs/sync/sync_api.h) in LIBDIR/primus-envfs/, exporting
# its table alone; the installed binary finds it beside itself (under
# DESTDIR too), not in the build tree: --sync gets as far as etcd.
module=$dest$libdir/primus-envfs/primus-envfs-sync.so
[ -f "$module" ] || fail "no sync module at $module"
[ "$(nm -D --defined-only "$module" | awk '{ print $3 }')" = envfs_sync_api ] ||
	fail "$module exports more than envfs_sync_api: $(nm -D --defined-only "$module" | head -5)"
if [ "${ENVFS_HAS_MOUNT:-1}" = 1 ]; then
	mkdir "$tmp/mnt"
	rc=0
	env -u PRIMUS_ENVFS_SYNC_MODULE "$bin" --sync 127.0.0.1:1 --run 1 --sync-timeout 300 \
		-f "$tmp/mnt" 2>"$tmp/sync.err" || rc=$?
	[ "$rc" = 2 ] && grep -q 'etcd connect: 127.0.0.1:1: ' "$tmp/sync.err" ||
		fail "installed --sync did not reach the client (exit $rc): $(cat "$tmp/sync.err")"
fi
src=$(cd "$ENVFS_FIXTURES/../.." && pwd)
cmp -s "$src/system/primus-envfs.bash" "$dest$datadir/bash-completion/completions/primus-envfs" ||
	fail "the bash completion is not installed in $datadir/bash-completion/completions"
cmp -s "$src/system/_primus-envfs" "$dest$datadir/zsh/site-functions/_primus-envfs" ||
	fail "the zsh completion is not installed in $datadir/zsh/site-functions"

# The man page renders, with every subcommand, view, xattr and errno.
if ! command -v man >/dev/null 2>&1; then
	echo "man(1) not installed: skipping the man page check (install man-db groff-base)"
	exit 77
fi
# LC_ALL=C: ASCII output (plain '-' where a line is hyphenated).
MANPAGER=cat MANWIDTH=100 LC_ALL=C man --warnings -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err" ||
	fail "man -l $man1 failed: $(cat "$tmp/man.err")"
[ ! -s "$tmp/man.err" ] || fail "man -l $man1 warned: $(cat "$tmp/man.err")"
# An 80-column terminal is the common case: the page, its table included,
# must lay out there without troff warnings too.
MANPAGER=cat MANWIDTH=80 LC_ALL=C man --warnings -l "$man1" >/dev/null 2>"$tmp/man80.err" ||
	fail "man -l $man1 at 80 columns failed: $(cat "$tmp/man80.err")"
[ ! -s "$tmp/man80.err" ] || fail "man -l $man1 warned at 80 columns: $(cat "$tmp/man80.err")"
# man(1) breaks lines and hyphenates words: join the text, then undo the
# hyphenation breaks ("Mega- tron") before searching it.
tr -s ' \n' '  ' <"$tmp/man.txt" | sed 's/\([a-z]\)- \([a-z]\)/\1\2/g' >"$tmp/man.flat"
for w in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES \
	resolve check exec --help --version --specs --config --inherit --pass --env --arch --state \
	--format "-f" "-o" allow_other entry_timeout attr_timeout noinval \
	env_file environ env.sh env.json explain digest status diagnostics \
	user.primus.layer user.primus.source user.primus.layers user.primus.shadowed \
	user.primus.default user.primus.note user.primus.exported user.primus.effective \
	EACCES EPERM ENOTSUP EINVAL EFBIG EXDEV EROFS ENODATA \
	SIGTERM fstab systemd list --env-file --extra-arch --host-root --force --quiet \
	compose.env "EXIT STATUS" 64 127 126 mount.fuse.primus-envfs SECRETS host \
	config= state= inherit= env= env_file= extra_arch= host_root= nofail _netdev; do
	grep -qF -- "$w" "$tmp/man.flat" || fail "the rendered man page does not mention '$w'"
done
# Every option any --help names is in the man page, and every exit status
# a command's --help gives is in its EXIT STATUS entry.
for cmd in "" resolve check exec list; do
	"$bin" $cmd --help >"$tmp/h" || fail "$cmd --help failed"
	for o in $(grep -oE -- '(^|[ ,(])--?[a-z][a-z-]*' "$tmp/h" | sed 's/^[ ,(]//' | sort -u); do
		grep -qF -- "$o" "$tmp/man.flat" || fail "'${cmd:-mount} --help' names $o, which the man page does not"
	done
done

echo "install: binary, $nspecs specs and man page installed under $dest$prefix; all checks passed"

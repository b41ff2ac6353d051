# End-to-end: the command line as getopt users expect it (issue 15).
# Every option form on every command, -h/--help everywhere with every exit
# status, 64 for usage errors (apart from check's 1 and 2), errors that
# name the valid choices, one name per meaning for the arch (-a/--arch
# selects, --extra-arch adds a directory, the old --arch spelling kept
# with a note), `list` in both formats, and `-a host`.
set -eu
. "$(dirname "$0")/lib.sh"

HOST="$ENVFS_FIXTURES/host"
n=0

# same NAME CMD...: CMD must exit 0 with the bytes of $TMP/NAME.want.
same() {
	_w=$1
	shift
	n=$((n + 1))
	run "$TMP/same.$n" "$TMP/same.$n.err" clean "$@"
	assert_no_crash "$*" "$TMP/same.$n.err"
	[ "$rc" -eq 0 ] || { cat "$TMP/same.$n.err" >&2; fail "$*: exit $rc, want 0"; }
	cmp -s "$TMP/$_w.want" "$TMP/same.$n" || fail "$*: output differs from the canonical form"
}

# usage WORD ARGS...: exit 64, one stderr line containing WORD, no stdout.
usage() {
	_word=$1
	shift
	n=$((n + 1))
	run "$TMP/u.$n" "$TMP/u.$n.err" clean "$ENVFS_BIN" "$@"
	assert_no_crash "primus-envfs $*" "$TMP/u.$n.err"
	[ "$rc" -eq 64 ] || { cat "$TMP/u.$n.err" >&2; fail "primus-envfs $*: exit $rc, want 64 (EX_USAGE)"; }
	[ "$(wc -l <"$TMP/u.$n.err")" -eq 1 ] || { cat "$TMP/u.$n.err" >&2; fail "primus-envfs $*: want one line on stderr"; }
	grep -qF -- "$_word" "$TMP/u.$n.err" || { cat "$TMP/u.$n.err" >&2; fail "primus-envfs $*: the error must say '$_word'"; }
	[ ! -s "$TMP/u.$n" ] || fail "primus-envfs $*: printed on stdout despite the error"
}

# --- every form of -b/-a/--format and of the INPUTS, on resolve ---
clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format environ --env A=1 >"$TMP/r.want"
same r "$ENVFS_BIN" resolve -bmaxtext -agfx950 --format=environ --env=A=1
same r "$ENVFS_BIN" resolve --backend maxtext --arch gfx950 --format environ --env A=1
same r "$ENVFS_BIN" resolve --backend=maxtext --arch=gfx950 --format=environ --env=A=1
same r "$ENVFS_BIN" resolve --env A=1 --format environ -a gfx950 -b maxtext
same r "$ENVFS_BIN" resolve --specs="$ENVFS_SPECS" -b maxtext -a gfx950 --format environ --env A=1
# abbreviations are getopt_long's: --back is --backend
same r "$ENVFS_BIN" resolve --back maxtext -a gfx950 --form environ --env A=1
usage "ambiguous" resolve --back maxtext --ar gfx950

# --- exec and check take the same forms ---
clean "$ENVFS_BIN" exec -b maxtext -a gfx950 --env A=1 -- env -0 >"$TMP/x.want"
same x "$ENVFS_BIN" exec -bmaxtext -agfx950 --env=A=1 -- env -0
same x "$ENVFS_BIN" exec --backend=maxtext --arch gfx950 --env A=1 env -0
clean "$ENVFS_BIN" check -b maxtext -a gfx950 2>"$TMP/c.want" || true
n=$((n + 1))
clean "$ENVFS_BIN" check -bmaxtext --arch=gfx950 2>"$TMP/c.$n" || true
cmp -s "$TMP/c.want" "$TMP/c.$n" || fail "check -bmaxtext --arch=gfx950 differs from check -b maxtext -a gfx950"

# --- -h and --help on every command: stdout, exit 0, every exit status ---
for cmd in resolve check exec list; do
	for h in -h --help; do
		run "$TMP/help" "$TMP/help.err" clean "$ENVFS_BIN" "$cmd" "$h"
		[ "$rc" -eq 0 ] || fail "$cmd $h exited $rc"
		[ ! -s "$TMP/help.err" ] || fail "$cmd $h wrote on stderr: $(cat "$TMP/help.err")"
		grep -q "^usage: primus-envfs $cmd " "$TMP/help" || fail "$cmd $h: no usage line"
		grep -q -- '--extra-arch' "$TMP/help" || fail "$cmd $h: the INPUTS are not described"
		grep -q '^Exit status' "$TMP/help" || fail "$cmd $h: no exit statuses"
		grep -q '64' "$TMP/help" || fail "$cmd $h: exit status 64 not described"
	done
done
grep -q '1 warnings' <(clean "$ENVFS_BIN" check --help) || fail "check --help: exit 1 not described"
grep -q '127' <(clean "$ENVFS_BIN" exec --help) || fail "exec --help: 127 not described"
# -h stops at once: nothing else is looked at
run "$TMP/help" "$TMP/help.err" clean "$ENVFS_BIN" resolve --config /nonexistent -h
[ "$rc" -eq 0 ] && grep -q '^usage:' "$TMP/help" || fail "resolve --config /nonexistent -h must print the help"
for h in -h --help; do
	run "$TMP/help" "$TMP/help.err" clean "$ENVFS_BIN" "$h"
	[ "$rc" -eq 0 ] && grep -q 'primus-envfs list' "$TMP/help" && grep -q '^Exit status of the mount' "$TMP/help" ||
		fail "primus-envfs $h: no full usage"
done
if [ "${ENVFS_HAS_MOUNT:-1}" = 1 ]; then
	run "$TMP/help" "$TMP/help.err" clean "$ENVFS_BIN" --config "$ENVFS_FIXTURES/mount/exp.yaml" --help
	[ "$rc" -eq 0 ] && grep -q 'MOUNTPOINT' "$TMP/help" || fail "the mount's --help after INPUTS"
else
	# -Dfuse=disabled: the mount says it is not there, as a failed start
	run "$TMP/nm" "$TMP/nm.err" clean "$ENVFS_BIN" /mnt/x
	[ "$rc" -eq 2 ] && grep -q 'no mount (built with -Dfuse=disabled)' "$TMP/nm.err" ||
		fail "a build without FUSE: the mount command: exit $rc: $(cat "$TMP/nm.err")"
fi

# --- usage errors: 64, one line, naming the problem or the choices ---
usage "'--no-such'" resolve --no-such -b maxtext -a gfx950
usage "'--no-such'" check --no-such=secret-looking
usage "'-z'" exec -z -b maxtext -a gfx950 -- true
usage "'-b' needs an argument" resolve -a gfx950 -b
usage "'--config' needs an argument" check --config
usage "'--force' takes no argument" resolve --force=yes -b maxtext -a gfx950
usage "'--force'" check --force
usage "'--quiet'" resolve --quiet -b maxtext -a gfx950
usage "'-b'" list -b maxtext
# a long option of another command with its value as the next word is
# named by its name (it printed the option's key as a control character)
usage "unrecognized option '--format'" record -b maxtext -a gfx950 --format json
usage "unrecognized option '--mount'" list --mount /mnt
usage "stray" resolve -b maxtext -a gfx950 stray
usage "-b BACKEND and -a ARCH are required" resolve -b maxtext
usage "-b BACKEND and -a ARCH are required" exec -a gfx950 -- true
usage "no COMMAND" exec -b maxtext -a gfx950
usage "no COMMAND" exec -b maxtext -a gfx950 --
usage "unknown backend 'nope'; backends: maxdiffusion maxtext megatron torch_fl torchtitan" \
	resolve -b nope -a gfx950
usage "unknown backend 'nope'; backends: maxdiffusion maxtext megatron torch_fl torchtitan" \
	check -b nope
usage "unknown backend 'nope'; backends: maxdiffusion maxtext megatron torch_fl torchtitan" \
	exec -b nope -a gfx950 -- true
usage "backend 'maxtext' has no arch 'gfx1'; arches: gfx942 gfx950" resolve -b maxtext -a gfx1
usage "backend 'maxtext' has no arch 'gfx1'; arches: gfx942 gfx950" check -b maxtext -a gfx1
usage "no backend has the arch 'gfx1'" check -a gfx1
usage "unknown format 'yaml'; formats: env_file environ sh json explain digest compose record" \
	resolve -b maxtext -a gfx950 --format yaml
usage "unknown format 'xml'; formats: text json" check --format xml
usage "unknown format 'xml'; formats: text json" list --format=xml
usage "--env 1BAD" resolve -b maxtext -a gfx950 --env 1BAD=x
if [ "${ENVFS_HAS_MOUNT:-1}" = 1 ]; then
	usage "unrecognized option '--nope'" --nope /mnt
	# the mount's getopt refusals, each whole, with the value never shown
	usage "primus-envfs: option '--config' needs an argument (see primus-envfs --help)" \
		/mnt --config
	usage "primus-envfs: option '--debug' takes no argument (see primus-envfs --help)" \
		--debug=secret-looking /mnt
	usage "primus-envfs: unrecognized option '-Z' (see primus-envfs --help)" -Z /mnt
	usage "missing MOUNTPOINT" --config "$ENVFS_FIXTURES/mount/exp.yaml"
	usage "unexpected argument 'c'" a b c
fi
# a name no shell can export in an --env-file is named with its file and
# line (it said "--env: expected NAME=VALUE", no file, an option not given)
printf 'GOOD=1\nA.B=1\n' >"$TMP/badname.env"
run "$TMP/bn.out" "$TMP/bn.err" clean "$ENVFS_BIN" check --env-file "$TMP/badname.env" -b maxtext -a gfx950
[ "$rc" -eq 2 ] || fail "check of an --env-file with a bad name: exit $rc, want 2"
grep -qF "/badname.env:2: error: 'A.B' is not a variable name" "$TMP/bn.out" "$TMP/bn.err" ||
	{ cat "$TMP/bn.out" "$TMP/bn.err"; fail "a bad name in an --env-file is not named with its file and line"; }
grep -q -- '--env:' "$TMP/bn.out" "$TMP/bn.err" && fail "a bad name in an --env-file is blamed on --env"
# the value given to an unknown option is not echoed
grep -q 'secret-looking' "$TMP"/u.*.err && fail "an error line echoed an option's value"

# --- one name per meaning for the arch ---
clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format environ >"$TMP/a950.want"
same a950 "$ENVFS_BIN" resolve -b maxtext --arch gfx950 --format environ
# --extra-arch adds a directory, silently
clean "$ENVFS_BIN" resolve --extra-arch gfx1200 -b maxtext -a gfx1200 --format environ >"$TMP/x1200.want" 2>"$TMP/x1200.err"
[ ! -s "$TMP/x1200.err" ] || fail "--extra-arch printed: $(cat "$TMP/x1200.err")"
[ -s "$TMP/x1200.want" ] || fail "--extra-arch gfx1200 -a gfx1200 printed nothing"
# the old spelling (--arch NAME beside -a) still adds it, with a note
run "$TMP/old" "$TMP/old.err" clean "$ENVFS_BIN" resolve --arch gfx1200 -b maxtext -a gfx1200 --format environ
[ "$rc" -eq 0 ] || fail "the old --arch gfx1200 -a gfx1200 spelling stopped working (exit $rc)"
cmp -s "$TMP/old" "$TMP/x1200.want" || fail "old --arch spelling: output differs from --extra-arch"
grep -q 'deprecated.*--extra-arch gfx1200' "$TMP/old.err" || fail "old --arch spelling: no deprecation note"
[ "$(wc -l <"$TMP/old.err")" -eq 1 ] || fail "old --arch spelling: want one note line: $(cat "$TMP/old.err")"
# an extra arch is not a selection: without -a it is still required
usage "-b BACKEND and -a ARCH are required" resolve -b maxtext --extra-arch gfx1200
usage "--extra-arch \"host\": not an arch directory name: is the name of the host symlink" resolve -b maxtext -a gfx950 --extra-arch host
# an AMD target ID is an arch; what a shell or a terminal reads is not one
clean "$ENVFS_BIN" resolve --extra-arch 'gfx90a:xnack+' -b maxtext -a 'gfx90a:xnack+' \
	--format environ >/dev/null || fail "--extra-arch gfx90a:xnack+ is refused"
usage "--extra-arch \"\$(touch\${IFS}pwn)\": not an arch directory name: does not start with" \
	resolve -b maxtext -a gfx950 --extra-arch '$(touch${IFS}pwn)'
usage "--extra-arch \"a b\": not an arch directory name: holds a control byte, a blank" \
	resolve -b maxtext -a gfx950 --extra-arch 'a b'
usage "--extra-arch \"gfx\\x1b[2J\": not an arch directory name" \
	resolve -b maxtext -a gfx950 --extra-arch "$(printf 'gfx\033[2J')"

# --- list ---
run "$TMP/list" "$TMP/list.err" clean "$ENVFS_BIN" list --host-root "$HOST/cpuonly"
[ "$rc" -eq 0 ] || fail "list exited $rc: $(cat "$TMP/list.err")"
cat >"$TMP/list.want" <<'EOF'
maxdiffusion gfx942 gfx950
maxtext gfx942 gfx950
megatron gfx942 gfx950
torch_fl cuda ppu metax ascend tsingmicro dcu gcu musa bpu
torchtitan gfx942 gfx950
EOF
diff -u "$TMP/list.want" "$TMP/list" >&2 || fail "list on a node without GPUs"
run "$TMP/list" "$TMP/list.err" clean "$ENVFS_BIN" list --host-root "$HOST/gfx950" --extra-arch gfx1200
sed -e 's/^\(ma[a-z]*\|megatron\|torchtitan\) gfx942 gfx950$/& gfx1200 host=gfx950/' \
	-e 's/^torch_fl .*/& gfx1200/' "$TMP/list.want" >"$TMP/list2.want"
diff -u "$TMP/list2.want" "$TMP/list" >&2 || fail "list on a gfx950 node with --extra-arch gfx1200"
run "$TMP/list.json" "$TMP/list.err" clean "$ENVFS_BIN" list --format json --host-root "$HOST/gfx942"
[ "$rc" -eq 0 ] || fail "list --format json exited $rc"
python3 - "$TMP/list.json" <<'EOF' || fail "list --format json: wrong document"
import json, sys
d = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in d["backends"]}
assert sorted(b) == ["maxdiffusion", "maxtext", "megatron", "torch_fl", "torchtitan"], b
assert b["maxtext"]["arches"] == ["gfx942", "gfx950"], b["maxtext"]
assert b["maxtext"]["host"] == "gfx942", b["maxtext"]
assert b["torch_fl"]["host"] is None and "nvidia" in b["torch_fl"]["host_reason"].lower(), b["torch_fl"]
assert b["torch_fl"]["arches"][0] == "cuda"
# What each backend's specs model: Primus at a commit (the runner's, for a
# backend with no models: of its own), torch_fl at a version and commit.
primus = {"source": "AMD-AGI/Primus", "version": "v26.5.1-60-gfd1eeabb",
          "commit": "fd1eeabbad15135e3702094087e96142b4b4eacb"}
for n in ["maxdiffusion", "maxtext", "megatron", "torchtitan"]:
    assert b[n]["models"] == primus, b[n]
assert b["torch_fl"]["models"] == {"source": "flagos-ai/Torch-FL", "version": "v0.1.0-101-g1adbc97",
                                   "commit": "1adbc97478fb3f40dffdbd19232346727a6c0953"}, b["torch_fl"]
EOF
# explain's first line says it too.
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --format explain | head -1 >"$TMP/x1"
[ "$(cat "$TMP/x1")" = "# primus-envfs megatron/gfx942 explain (specs model AMD-AGI/Primus v26.5.1-60-gfd1eeabb, commit fd1eeabbad15135e3702094087e96142b4b4eacb)" ] ||
	fail "explain's first line does not name what the specs model: $(cat "$TMP/x1")"
clean "$ENVFS_BIN" resolve -b torch_fl -a dcu --format explain | head -1 >"$TMP/x1"
[ "$(cat "$TMP/x1")" = "# primus-envfs torch_fl/dcu explain (specs model flagos-ai/Torch-FL v0.1.0-101-g1adbc97, commit 1adbc97478fb3f40dffdbd19232346727a6c0953)" ] ||
	fail "torch_fl explain's first line: $(cat "$TMP/x1")"
run "$TMP/list.json" "$TMP/list.err" clean "$ENVFS_BIN" list --format=json --host-root "$HOST/nvidia"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b={x["name"]:x for x in d["backends"]}; assert b["torch_fl"]["host"]=="cuda" and b["maxtext"]["host"] is None, d' \
	"$TMP/list.json" || fail "list --format json on an NVIDIA node"

# --- -a host: the arch of this node's GPUs, or a clear error ---
clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 --host-root "$HOST/gfx950" --format environ >"$TMP/h.want"
same h "$ENVFS_BIN" resolve -b maxtext -a host --host-root "$HOST/gfx950" --format environ
clean "$ENVFS_BIN" resolve -b maxtext -a gfx942 --host-root "$HOST/gfx942" >"$TMP/h2.want"
same h2 "$ENVFS_BIN" resolve -b maxtext -a host --host-root "$HOST/gfx942"
clean "$ENVFS_BIN" exec -b maxtext -a gfx950 --host-root "$HOST/gfx950" -- env -0 >"$TMP/hx.want"
same hx "$ENVFS_BIN" exec -b maxtext -a host --host-root "$HOST/gfx950" -- env -0
run "$TMP/hc" "$TMP/hc.err" clean "$ENVFS_BIN" check -b maxtext -a host --host-root "$HOST/gfx950"
[ "$rc" -eq 0 ] || fail "check -a host on a gfx950 node exited $rc: $(cat "$TMP/hc.err")"
for cmd in resolve exec; do
	extra=""
	[ "$cmd" = exec ] && extra="-- true"
	run "$TMP/hn" "$TMP/hn.err" clean "$ENVFS_BIN" $cmd -b maxtext -a host --host-root "$HOST/cpuonly" $extra
	[ "$rc" -eq 2 ] || fail "$cmd -a host without a GPU: exit $rc, want 2"
	[ ! -s "$TMP/hn" ] || fail "$cmd -a host without a GPU printed on stdout"
	[ "$(wc -l <"$TMP/hn.err")" -eq 1 ] && grep -q -- '-a host: no arch of maxtext for this node: ' "$TMP/hn.err" ||
		fail "$cmd -a host without a GPU: want one line saying why, got: $(cat "$TMP/hn.err")"
done
run "$TMP/hn" "$TMP/hn.err" clean "$ENVFS_BIN" check -a host --host-root "$HOST/cpuonly"
[ "$rc" -eq 2 ] && grep -q 'no backend has an arch for this node' "$TMP/hn.err" ||
	fail "check -a host on a node without GPUs: exit $rc: $(cat "$TMP/hn.err")"

echo "ok: cli_options"

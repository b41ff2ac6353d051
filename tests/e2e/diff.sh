# End-to-end: `primus-envfs record` and `primus-envfs diff`. Two configs,
# a record against inputs, the flag-by-flag XLA_FLAGS output, secrets
# that are never shown, the exit statuses, and every JSON output valid
# against its shipped schema.
set -eu
. "$(dirname "$0")/lib.sh"

if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
SCHEMAS="$ENVFS_SPECS/schemas"
valid() { # valid SCHEMA FILE WHAT
	"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$SCHEMAS/$1.schema.json" "$2" ||
		fail "$3: not valid against $1.schema.json"
}
d() { # d NAME ARGS...: diff, output in $TMP/NAME, status in $rc
	_n=$1
	shift
	run "$TMP/$_n" "$TMP/$_n.err" clean "$ENVFS_BIN" diff "$@"
	assert_no_crash "diff $_n" "$TMP/$_n.err"
}
expect_rc() {
	[ "$rc" -eq "$1" ] || { cat "$TMP/$2" "$TMP/$2.err" >&2; fail "$2: diff must exit $1, got $rc"; }
}

cd "$TMP"
printf 'env:\n  NCCL_DEBUG: "INFO"\n  XLA_FLAGS_APPEND: "--xla_gpu_autotune_level=1 --xla_dump_to=/tmp/x"\n' >a.yaml
printf 'env:\n  NCCL_DEBUG: "WARN"\n  NEW_ONE: "1"\n' >b.yaml
printf 'IMAGE_ONLY=from-image\nNCCL_DEBUG=VERSION\n' >img.env
DIR="-b maxtext -a gfx950"

# --- two configs: each difference once, both values, layer and source ---
d two $DIR --config a.yaml -- --config b.yaml
expect_rc 1 two
expect_line "$TMP/two" 'changed NCCL_DEBUG' "two configs"
expect_line "$TMP/two" '  a: "INFO"  config  a.yaml:2' "two configs: a's side"
expect_line "$TMP/two" '  b: "WARN"  config  b.yaml:2' "two configs: b's side"
expect_line "$TMP/two" 'added NEW_ONE' "two configs: a variable only in b"
expect_line "$TMP/two" '  b: "1"  config  b.yaml:3' "two configs: the added one's side"
[ "$(grep -c '^changed NCCL_DEBUG$' "$TMP/two")" = 1 ] || fail "NCCL_DEBUG listed more than once"
# Each side reads its own specs: b's --specs after -- is not a's (the
# two sides share one parsed spec set only when they name one directory).
cp -r "$ENVFS_SPECS" specs-other
sed -i 's/^    value: ".97"$/    value: ".95"/' specs-other/maxtext.yaml
grep -q '"\.95"' specs-other/maxtext.yaml || fail "specs-other: the edit did not apply"
d specs2 $DIR --specs "$ENVFS_SPECS" --config a.yaml -- --specs specs-other
expect_rc 1 specs2
expect_line "$TMP/specs2" 'changed XLA_PYTHON_CLIENT_MEM_FRACTION' "two spec directories"
[ "$(grep -c '^changed ' "$TMP/specs2")" = 1 ] || fail "two spec directories: $(cat "$TMP/specs2")"
d specs1 $DIR --specs specs-other --config a.yaml -- --config a.yaml
expect_rc 0 specs1
# XLA_FLAGS flag by flag, with the layer of each side
expect_line "$TMP/two" 'changed XLA_FLAGS' "XLA_FLAGS"
expect_line "$TMP/two" '  changed --xla_gpu_autotune_level: "--xla_gpu_autotune_level=1" config -> "--xla_gpu_autotune_level=4" backend' "XLA_FLAGS: the changed flag"
expect_line "$TMP/two" '  removed --xla_dump_to: "--xla_dump_to=/tmp/x" config' "XLA_FLAGS: the removed flag"
expect_line "$TMP/two" 'removed XLA_FLAGS_APPEND' "XLA_FLAGS_APPEND removed"
# the diagnostic only a has: a repeated flag
grep -q '^diagnostics only in a:$' "$TMP/two" || { cat "$TMP/two"; fail "no diagnostics only in a"; }
grep -q 'xla_gpu_autotune_level is given more than once' "$TMP/two" || fail "a's diagnostic not shown"
# unchanged variables are left out, unless --all
grep -q 'NCCL_IB_GID_INDEX' "$TMP/two" && fail "an equal variable was listed"
d two_all $DIR --all --config a.yaml -- --config b.yaml
expect_rc 1 two_all
expect_line "$TMP/two_all" 'same NCCL_IB_GID_INDEX' "--all lists equal variables"

# --- equal: exit 0 ---
d same $DIR --config a.yaml -- --config a.yaml
expect_rc 0 same
expect_line "$TMP/same" 'no differences' "equal inputs"

# --- JSON, valid against its schema ---
d two_json $DIR --format json --config a.yaml -- --config b.yaml
expect_rc 1 two_json
valid diff "$TMP/two_json" "diff --format json"
"$PYTHON" - "$TMP/two_json" <<'PY' || fail "diff json content"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in d["variables"]}
assert not d["equal"]
assert v["NCCL_DEBUG"]["change"] == "changed", v["NCCL_DEBUG"]
assert v["NCCL_DEBUG"]["a"] == {"value": "INFO", "layer": "config", "source": "a.yaml:2", "exported": True}
assert v["NCCL_DEBUG"]["b"]["value"] == "WARN"
assert v["NEW_ONE"]["change"] == "added" and v["NEW_ONE"]["a"] is None
f = {x["flag"]: x for x in v["XLA_FLAGS"]["flags"]}
assert f["--xla_gpu_autotune_level"]["change"] == "changed"
assert f["--xla_gpu_autotune_level"]["a"] == {"token": "--xla_gpu_autotune_level=1", "layer": "config"}
assert f["--xla_gpu_autotune_level"]["b"] == {"token": "--xla_gpu_autotune_level=4", "layer": "backend"}
assert f["--xla_dump_to"]["change"] == "removed" and f["--xla_dump_to"]["b"] is None
assert "NCCL_IB_GID_INDEX" not in v
assert any("more than once" in x["message"] for x in d["diagnostics"]["only_a"])
assert d["diagnostics"]["only_b"] == []
PY

# --- the record: written atomically, valid, the right digests ---
run "$TMP/rec.out" "$TMP/rec.err" clean "$ENVFS_BIN" record $DIR --config a.yaml --inherit img.env -o "$TMP/run.json"
[ "$rc" -eq 0 ] || { cat "$TMP/rec.err"; fail "record -o exited $rc"; }
[ ! -s "$TMP/rec.out" ] || fail "record -o FILE printed on stdout"
valid record "$TMP/run.json" "the record"
ls "$TMP" | grep >/dev/null 'run.json.' && fail "record left its temporary file"
clean "$ENVFS_BIN" resolve $DIR --config a.yaml --inherit img.env --format record >"$TMP/run2.json"
cmp -s "$TMP/run.json" "$TMP/run2.json" || fail "record -o and resolve --format record differ"
# -o FILE that is not a regular file is written into, as a shell's > does:
# a device stays a device (record -o /dev/null must not replace it), a FIFO
# gets the record, a symbolic link stays and its target is replaced.
mkdir "$TMP/o"
mknod -m 666 "$TMP/o/null" c 1 3
mkfifo "$TMP/o/fifo"
echo old >"$TMP/o/real.json"
ln -s real.json "$TMP/o/link.json"
ln -s gone.json "$TMP/o/dangling.json"
clean "$ENVFS_BIN" record $DIR --config a.yaml --inherit img.env -o "$TMP/o/null" ||
	fail "record -o a device exited $?"
[ -c "$TMP/o/null" ] || fail "record -o a character device replaced it: $(ls -l "$TMP/o/null")"
timeout 60 cat "$TMP/o/fifo" >"$TMP/o/fifo.out" &
clean "$ENVFS_BIN" record $DIR --config a.yaml --inherit img.env -o "$TMP/o/fifo" ||
	fail "record -o a FIFO exited $?"
wait $!
[ -p "$TMP/o/fifo" ] || fail "record -o a FIFO replaced it"
cmp -s "$TMP/o/fifo.out" "$TMP/run.json" || fail "the FIFO's reader did not get the record"
clean "$ENVFS_BIN" record $DIR --config a.yaml --inherit img.env -o "$TMP/o/link.json" ||
	fail "record -o a symbolic link exited $?"
[ -L "$TMP/o/link.json" ] || fail "record -o a symbolic link replaced the link"
cmp -s "$TMP/o/real.json" "$TMP/run.json" || fail "record -o a symbolic link left its target"
clean "$ENVFS_BIN" record $DIR --config a.yaml --inherit img.env -o "$TMP/o/dangling.json" ||
	fail "record -o a dangling link exited $?"
[ -L "$TMP/o/dangling.json" ] && cmp -s "$TMP/o/gone.json" "$TMP/run.json" ||
	fail "record -o a dangling link did not create its target"
ls "$TMP/o" | grep >/dev/null '\.json\.' && fail "record left a temporary file in $TMP/o"
digest=$(clean "$ENVFS_BIN" resolve $DIR --config a.yaml --inherit img.env --format digest)
"$PYTHON" - "$TMP/run.json" "$digest" "$(sha256sum <a.yaml | cut -d' ' -f1)" \
	"$(sha256sum <img.env | cut -d' ' -f1)" <<'PY' || fail "record content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["digest"] == sys.argv[2], (r["digest"], sys.argv[2])
ins = {(i["kind"], i["path"]): i["sha256"] for i in r["inputs"]}
assert ins[("config", "a.yaml")] == sys.argv[3], ins
assert [i["sha256"] for i in r["inputs"] if i["kind"] == "inherit"] == [sys.argv[4]], ins
assert r["specs"]["kind"] == "specs" and len(r["specs"]["sha256"]) == 64
v = {x["name"]: x for x in r["variables"]}
assert v["NCCL_DEBUG"]["layer"] == "config" and v["NCCL_DEBUG"]["source"] == "a.yaml:2"
assert v["NCCL_DEBUG"]["shadowed"][0] == {"layer": "image", "value": "VERSION"}, v["NCCL_DEBUG"]
assert v["NCCL_DEBUG"]["layers"][0] == "image" and v["NCCL_DEBUG"]["layers"][-1] == "config"
assert v["IMAGE_ONLY"]["source"] == "image:img.env:1", v["IMAGE_ONLY"]
assert not v["XLA_GPU_AUTOTUNE_LEVEL"]["set"] and v["XLA_GPU_AUTOTUNE_LEVEL"]["default"] == "4"
assert any(f["flag"] == "--xla_dump_to" and f["layer"] == "config" for f in v["XLA_FLAGS"]["flags"])
env = [e["name"] for e in r["environ"]]
assert env == sorted(env) and "XLA_FLAGS_APPEND" not in env and "NCCL_DEBUG" in env
PY

# An input file a secret takes its value from has no sha256 in the
# record: the record is readable by everyone, and a hash of a file whose
# other bytes are known is a dictionary attack on the secret. Its entry
# says why ("withheld": "secret"); a file with no secret keeps its hash.
printf 'env:\n  DB_PASSWORD: "pw-%s"\n' "$$" >"$TMP/sec.yaml"
printf 'HF_TOKEN=hf_%s\n' "$$" >"$TMP/sec.env"
printf 'IMG_API_KEY=k%s\n' "$$" >"$TMP/sec.img"
printf 'PLAIN=1\n' >"$TMP/plain.env"
clean "$ENVFS_BIN" record $DIR --config "$TMP/sec.yaml" --inherit "$TMP/sec.img" \
	--env-file "$TMP/sec.env" --env-file "$TMP/plain.env" -o "$TMP/sec.json" ||
	fail "record with secret inputs exited $?"
valid record "$TMP/sec.json" "record with secret inputs"
"$PYTHON" - "$TMP/sec.json" "$(sha256sum <"$TMP/plain.env" | cut -d' ' -f1)" "$TMP" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
ins = {i["path"].replace(sys.argv[3] + "/", ""): i for i in r["inputs"]}
for f in ("sec.yaml", "sec.img", "sec.env"):
    assert ins[f]["sha256"] is None and ins[f].get("withheld") == "secret", ins[f]
assert ins["plain.env"]["sha256"] == sys.argv[2] and "withheld" not in ins["plain.env"], ins
PY
	fail "record: the sha256 of an input holding a secret is not withheld"

# --- yesterday's record against today's inputs ---
d rec_same $DIR record:run.json --config a.yaml --inherit img.env
expect_rc 0 rec_same
d rec_b record:run.json --config b.yaml --inherit img.env
expect_rc 1 rec_b
head -2 "$TMP/rec_b" | grep >/dev/null -x -- '--- a: record:run.json (maxtext/gfx950)' ||
	{ cat "$TMP/rec_b"; fail "-b and -a are not taken from the record"; }
expect_line "$TMP/rec_b" '  a: "INFO"  config  a.yaml:2' "record side"
# bytes that are not UTF-8 survive the record (value_b64)
clean "$ENVFS_BIN" record $DIR --env "$(printf 'RAW=\377\001x')" -o "$TMP/raw.json"
valid record "$TMP/raw.json" "a record with raw bytes"
grep -q '"value_b64"' "$TMP/raw.json" || fail "a non-UTF-8 value is not value_b64"
d raw_same record:raw.json --env "$(printf 'RAW=\377\001x')"
expect_rc 0 raw_same
d raw_diff record:raw.json --env "$(printf 'RAW=\376\001x')"
expect_rc 1 raw_diff
expect_line "$TMP/raw_diff" 'changed RAW' "raw bytes that differ"

# --- secrets: same or differs, never a value, never a hash ---
tok_a=hunter2secretA tok_b=hunter2secretB
printf 'HF_TOKEN=%s\n' "$tok_a" >s1.env
printf 'HF_TOKEN=%s\n' "$tok_b" >s2.env
chmod 600 s1.env s2.env
d sec_differs $DIR --env-file s1.env -- --env-file s2.env
expect_rc 1 sec_differs
expect_line "$TMP/sec_differs" 'changed HF_TOKEN: secret, differs' "a secret that differs"
d sec_same $DIR --all --env-file s1.env -- --env-file s1.env
expect_rc 0 sec_same
expect_line "$TMP/sec_same" 'same HF_TOKEN: secret, the same' "a secret that is the same"
d sec_json $DIR --format json --env-file s1.env -- --env-file s2.env
valid diff "$TMP/sec_json" "diff json with a secret"
clean "$ENVFS_BIN" record $DIR --env-file s1.env -o "$TMP/sec.json"
valid record "$TMP/sec.json" "a record with a secret"
d sec_rec record:sec.json --env-file s2.env
expect_rc 0 sec_rec
expect_line "$TMP/sec_rec" 'unknown HF_TOKEN: secret, cannot be compared: a record holds no secret'"'"'s value' "a secret against a record"
for h in "$tok_a" "$tok_b"; do
	sum=$(printf %s "$h" | sha256sum | cut -d' ' -f1)
	for f in sec_differs sec_same sec_json sec_rec sec_differs.err sec_json.err sec_rec.err sec.json; do
		[ -e "$TMP/$f" ] || fail "$f was not written"
		if grep -q -e "${h#hunter2}" -e "$sum" "$TMP/$f"; then
			fail "$f holds a part of the secret or its sha256"
		fi
	done
done

# A side that says a name is no secret (a hand-made record, a node of
# other specs) does not make the other side's secret printable: either
# side's word that it is a secret holds, in text and JSON, both ways.
pg_local=pgLOCALsecret9
clean "$ENVFS_BIN" record $DIR --env PGPASSWORD=x -o "$TMP/pg.json"
"$PYTHON" - "$TMP/pg.json" "$TMP/pg_open.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variables"]:
    if v["name"] == "PGPASSWORD":
        v.update(value="recval", secret=False)
for v in r["environ"]:
    if v["name"] == "PGPASSWORD":
        v["value"] = "recval"
json.dump(r, open(sys.argv[2], "w"))
PY
printf 'PGPASSWORD=%s\n' "$pg_local" >pg.env
chmod 600 pg.env
d pg_ab record:pg_open.json --env-file pg.env
expect_rc 1 pg_ab
expect_line "$TMP/pg_ab" 'changed PGPASSWORD: secret, differs' "a record that says a secret is none"
d pg_json --format json record:pg_open.json --env-file pg.env
valid diff "$TMP/pg_json" "diff json, a record that says a secret is none"
clean "$ENVFS_BIN" record $DIR --env-file pg.env -o "$TMP/pg_mine.json"
d pg_ba record:pg_mine.json record:pg_open.json
d pg_ba_json --format json record:pg_mine.json record:pg_open.json
for f in pg_ab pg_json pg_ba pg_ba_json pg_ab.err pg_json.err; do
	if grep -q -e "${pg_local#pg}" -e recval "$TMP/$f"; then
		cat "$TMP/$f" >&2
		fail "$f shows a value of a name one side holds secret"
	fi
done

# What a record says is printed escaped, its layers too: a layer with a
# newline and a terminal escape cannot forge a line or clear the screen.
"$PYTHON" - "$TMP/run.json" "$TMP/esc.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variables"]:
    v["layer"] = "conf\x1b[2Jig\nforged"
    for f in v.get("flags") or []:
        f["layer"] = "fl\x1b[2J\nforged"
json.dump(r, open(sys.argv[2], "w"))
PY
d esc record:esc.json $DIR --env NCCL_DEBUG=ESCAPED_ONE
expect_rc 1 esc
! grep -q "$(printf '\033')" "$TMP/esc" || fail "a record's layer printed with a raw ESC: $(od -c "$TMP/esc" | head)"
! grep -q '^forged' "$TMP/esc" || fail "a record's layer forged a line: $(grep -n forged "$TMP/esc" | head -3)"
grep -q 'conf\\x1b\[2Jig\\nforged' "$TMP/esc" || fail "the layer is not shown escaped: $(head -5 "$TMP/esc")"

# A record that names a variable twice is refused, not compared: which
# of the two values is the record's is not for diff to guess (the last
# attack: "removed" for variables both sides hold alike).
"$PYTHON" - "$TMP/run.json" "$TMP/dup.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["variables"] += r["variables"][:3]
json.dump(r, open(sys.argv[2], "w"))
PY
d dup record:dup.json record:run.json
expect_rc 2 dup
grep -q 'dup.json: .*more than once' "$TMP/dup.err" || fail "a record naming a variable twice: $(cat "$TMP/dup.err")"

# A record names its backend and arch; when -b and -a are not given the
# other side is resolved for them, and a backend or arch these specs do
# not have is the record's fault: exit 2 (an input cannot be read), the
# record named, the name escaped. A -b the user typed stays a usage error.
"$PYTHON" - "$TMP/run.json" "$TMP/badback.json" "$TMP/badarch.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["backend"] = "no\x1b[2Jsuch"
json.dump(r, open(sys.argv[2], "w"))
r = json.load(open(sys.argv[1]))
r["arch"] = "gfx\x1b[2J0"
json.dump(r, open(sys.argv[3], "w"))
PY
for side in badback badarch; do
	d "$side" "record:$side.json" --env NCCL_DEBUG=X
	expect_rc 2 "$side"
	! grep -q "$(printf '\033')" "$TMP/$side.err" || fail "$side: a raw ESC on stderr: $(od -c "$TMP/$side.err" | head)"
	grep -q "record:$side.json" "$TMP/$side.err" || fail "$side: the record is not named: $(cat "$TMP/$side.err")"
done
grep -qF "unknown backend 'no\\x1b[2Jsuch'" "$TMP/badback.err" || fail "badback: $(cat "$TMP/badback.err")"
d badflag record:run.json -b nosuch -a gfx950 --env NCCL_DEBUG=X
expect_rc 64 badflag

# --- exit statuses and messages ---
d missing record:/nonexistent/run.json
expect_rc 2 missing
grep -q '/nonexistent/run.json: No such file or directory' "$TMP/missing.err" || fail "missing record: $(cat "$TMP/missing.err")"
printf '{"format": "something-else"}' >other.json
d other record:other.json --config a.yaml
expect_rc 2 other
grep -q 'not a primus-envfs run record' "$TMP/other.err" || fail "not a record: $(cat "$TMP/other.err")"
sed 's/"version":1/"version":99/' run.json >newer.json
d newer record:newer.json --config a.yaml
expect_rc 2 newer
grep -q 'version 99; this program reads up to 1' "$TMP/newer.err" || fail "newer record: $(cat "$TMP/newer.err")"
d fifo record:/dev/null
expect_rc 2 fifo
d badside $DIR nonsense:x
expect_rc 64 badside
d nothing $DIR --config a.yaml
expect_rc 64 nothing
d nodir --config a.yaml -- --config b.yaml
expect_rc 64 nodir
d three $DIR record:run.json record:run.json record:run.json
expect_rc 64 three
# Words after -- are the second side's inputs: a word that is no option
# there is refused, not dropped (diff compared without it and exited 1).
d extra $DIR --config a.yaml -- --config b.yaml stray words
expect_rc 64 extra
grep -q "unexpected argument 'stray' after --" "$TMP/extra.err" || fail "extra: $(cat "$TMP/extra.err")"
d extra2 $DIR --config a.yaml -- --config b.yaml -- more
expect_rc 64 extra2
d extra3 $DIR record:run.json -- --config b.yaml stray
expect_rc 64 extra3

# --- the other JSON outputs against their schemas ---
clean "$ENVFS_BIN" check --config a.yaml --format json >"$TMP/check.json" || true
valid check "$TMP/check.json" "check --format json"
clean "$ENVFS_BIN" list --format json >"$TMP/list.json"
valid list "$TMP/list.json" "list --format json"
echo "ok: diff"

# End-to-end: which variables are secrets, and the digest that never takes
# a secret's value in, not even hashed: a digest over values that are all
# readable but one is a dictionary attack on that one. The digest hashes
# environ with each secret's value replaced by <redacted>.
set -eu
. "$(dirname "$0")/lib.sh"

# digest ENV_FILE [ARG...]: maxtext/gfx950's digest with ENV_FILE's
# settings.
digest() {
	_f=$1
	shift
	clean "$ENVFS_BIN" resolve --env-file "$_f" "$@" -b maxtext -a gfx950 --format digest
}

# same_digest NAME A B [ARG...]: the digest does not change when only
# NAME's value does (A to B): NAME is a secret.
same_digest() {
	_n=$1 _a=$2 _b=$3
	shift 3
	printf '%s=%s\n' "$_n" "$_a" >"$TMP/a.env"
	printf '%s=%s\n' "$_n" "$_b" >"$TMP/b.env"
	[ "$(digest "$TMP/a.env" "$@")" = "$(digest "$TMP/b.env" "$@")" ] ||
		fail "$_n $*: the digest changes with the value: it is not treated as a secret"
	clean "$ENVFS_BIN" resolve --env-file "$TMP/a.env" "$@" -b maxtext -a gfx950 \
		--format explain >"$TMP/explain"
	! grep -qF -- "$_a" "$TMP/explain" || fail "$_n $*: explain shows the value"
}

# other_digest NAME A B [ARG...]: the digest changes with NAME's value.
other_digest() {
	_n=$1 _a=$2 _b=$3
	shift 3
	printf '%s=%s\n' "$_n" "$_a" >"$TMP/a.env"
	printf '%s=%s\n' "$_n" "$_b" >"$TMP/b.env"
	[ "$(digest "$TMP/a.env" "$@")" != "$(digest "$TMP/b.env" "$@")" ] ||
		fail "$_n $*: the digest does not change with a value that is no secret"
}

# Declared secret: true by base.yaml, and by the shipped patterns.
for n in HF_TOKEN HUGGING_FACE_HUB_TOKEN AWS_SECRET_ACCESS_KEY OPENAI_API_KEY GITHUB_TOKEN \
	MY_TOKEN_FILE DB_PASSWORD FTP_PASSWD S3_ACCESS_KEY SSH_PRIVATE_KEY GCP_CREDENTIALS \
	APP_SECRET APP_SECRET_2; do
	same_digest "$n" hunter2 hunter3
done
# Credentials by the names their tools read: libpq's PGPASSWORD, MySQL's
# MYSQL_PWD, Azure's storage key and connection string, personal access
# tokens (GitLab, GitHub), and *_PASSPHRASE.
for n in PGPASSWORD MYSQL_PWD AZURE_STORAGE_KEY AZURE_STORAGE_ACCOUNT_KEY \
	AZURE_STORAGE_CONNECTION_STRING GITLAB_PAT GH_PAT GPG_PASSPHRASE DD_APIKEY; do
	same_digest "$n" hunter2 hunter3
done
# Names that only look like those stay values: JAX settings that end in
# _KEY and _PASS (a compiler pass), a working directory.
other_digest JAX_LEGACY_PRNG_KEY 0 1
other_digest JAX_COMPILER_ENABLE_REMAT_PASS 0 1
other_digest PRIMUS_PWD_HINT /a /b
# A value that is no secret still counts.
other_digest NCCL_DEBUG INFO WARN
other_digest TOKENIZER_PATH /a /b
other_digest PRIMUS_TOKENIZED_DATA_PATH /a /b

# The digest is sha256 of environ with each secret's value replaced.
printf 'HF_TOKEN=hunter2\nOPENAI_API_KEY=sk-1\nNCCL_DEBUG=INFO\n' >"$TMP/s.env"
clean "$ENVFS_BIN" resolve --env-file "$TMP/s.env" -b maxtext -a gfx950 --format environ \
	>"$TMP/environ"
want=$(python3 - "$TMP/environ" <<'PY'
import hashlib, sys
out = []
for e in open(sys.argv[1], "rb").read().split(b"\0")[:-1]:
    n, _, v = e.partition(b"=")
    if n in (b"HF_TOKEN", b"OPENAI_API_KEY"):
        v = b"<redacted>"
    out.append(n + b"=" + v + b"\0")
print(hashlib.sha256(b"".join(out)).hexdigest())
PY
)
[ "$(digest "$TMP/s.env")" = "$want" ] || fail "the digest is not sha256 of environ with secrets as <redacted>"

# --secret NAME and --secret GLOB add names; a bad one is a usage error.
other_digest MYCO_PIN pin-a pin-b
same_digest MYCO_PIN pin-a pin-b --secret MYCO_PIN
same_digest MYCO_PIN pin-a pin-b --secret 'MYCO_*'
other_digest MYCO_PIN pin-a pin-b --secret 'OTHER_*'
set +e
clean "$ENVFS_BIN" resolve --secret 'A B' -b maxtext -a gfx950 >/dev/null 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -eq 64 ] || fail "--secret 'A B': exit $rc, want 64"
grep -q -- '--secret "A B": not a variable name or a glob of names' "$TMP/err" ||
	fail "--secret 'A B': $(cat "$TMP/err")"

# A spec may say a matching name is no secret.
cp -R "$ENVFS_SPECS" "$TMP/specs"
cat >>"$TMP/specs/maxtext.yaml" <<'EOF'
  - name: PUBLIC_TOKEN
    secret: false
    note: a name that only looks like a token
EOF
other_digest PUBLIC_TOKEN tok-a tok-b --specs "$TMP/specs"
same_digest PUBLIC_TOKEN tok-a tok-b
# ... and --secret still makes it one.
same_digest PUBLIC_TOKEN tok-a tok-b --specs "$TMP/specs" --secret PUBLIC_TOKEN

# A warning about a secret's value never quotes it, whatever makes it a
# secret: a shipped pattern, --secret, or a spec. PE104 quoted the text
# written and the value Primus exports for every name no spec declared.
cat >"$TMP/typed.yaml" <<'EOF'
env:
  DB_PASSWORD: 98765432101
  MYCO_PIN: 0x4D2
  GITHUB_TOKEN: [ghp_1, ghp_2]
  OTHER_LEVEL: 0x1F
EOF
for fmt in text json; do
	run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --config "$TMP/typed.yaml" --secret MYCO_PIN \
		--format "$fmt"
	[ "$rc" -eq 2 ] || fail "check --format $fmt of typed secrets: exit $rc, want 2 (PE105 is an error): $(cat "$TMP/err")"
	for v in 98765432101 0x4D2 1234 ghp_1; do
		! grep -qF -- "$v" "$TMP/out" "$TMP/err" || fail "check --format $fmt quoted the secret $v"
	done
	for n in DB_PASSWORD MYCO_PIN GITHUB_TOKEN; do
		grep -q "$n" "$TMP/out" "$TMP/err" || fail "check --format $fmt: no warning for $n"
	done
	# a name that is no secret keeps its value in the warning
	grep -qF '0x1F' "$TMP/out" "$TMP/err" || fail "check --format $fmt: OTHER_LEVEL's warning lost its text"
done
# An inline secret is named whatever makes it one.
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --env GITHUB_TOKEN=ghp_x --env MYCO_PIN=1 --secret MYCO_PIN
for n in GITHUB_TOKEN MYCO_PIN; do
	grep -q "warning: $n is a secret given as --env $n=" "$TMP/err" ||
		fail "--env $n=...: no inline-secret warning: $(cat "$TMP/err")"
done

# A default built from a secret is as secret as the value: with
# HUB_AUTH_HEADER's default "Bearer ${HF_TOKEN}" and another layer
# setting it, or a parameter (export: false) so built, explain, the
# record and user.primus.default printed the token.
cp -R "$ENVFS_SPECS" "$TMP/dspecs"
cat >>"$TMP/dspecs/maxtext.yaml" <<'EOF'
  - name: HUB_AUTH_HEADER
    value: "Bearer ${HF_TOKEN}"
  - name: HUB_AUTH_PARAM
    value: "Bearer ${HF_TOKEN}"
    export: false
EOF
printf 'HF_TOKEN=hf_dsekrit42\n' >"$TMP/tok.env"
printf 'HUB_AUTH_HEADER=plain\n' >"$TMP/plain.env"
for fmt in explain record; do
	clean "$ENVFS_BIN" resolve --specs "$TMP/dspecs" --env-file "$TMP/tok.env" \
		--env-file "$TMP/plain.env" -b maxtext -a gfx950 --format "$fmt" >"$TMP/out" 2>"$TMP/err" ||
		fail "resolve --format $fmt with a default built from a secret: $(cat "$TMP/err")"
	! grep -qF dsekrit42 "$TMP/out" "$TMP/err" || fail "--format $fmt shows a default built from a secret"
	grep -q HUB_AUTH_PARAM "$TMP/out" || fail "--format $fmt lost the parameter"
done
clean "$ENVFS_BIN" resolve --specs "$TMP/dspecs" --env-file "$TMP/tok.env" --env-file "$TMP/plain.env" \
	-b maxtext -a gfx950 --format explain >"$TMP/out"
sed -n '/^HUB_AUTH_HEADER$/,/^$/p' "$TMP/out" | grep -qx '  default: <redacted>' ||
	fail "explain: the default built from a secret is not redacted: $(sed -n '/^HUB_AUTH_HEADER$/,/^$/p' "$TMP/out")"
python3 - "$TMP/dspecs" "$TMP" <<'PY' || fail "the record's default of a value built from a secret"
import json, subprocess, sys, os
out = subprocess.run([os.environ["ENVFS_BIN"], "resolve", "--specs", sys.argv[1], "--env-file",
                      sys.argv[2] + "/tok.env", "--env-file", sys.argv[2] + "/plain.env",
                      "-b", "maxtext", "-a", "gfx950", "--format", "record"],
                     capture_output=True, check=True).stdout
v = {x["name"]: x for x in json.loads(out)["variables"]}
assert v["HUB_AUTH_HEADER"]["value"] == "plain" and v["HUB_AUTH_HEADER"]["default"] is None, v["HUB_AUTH_HEADER"]
assert v["HUB_AUTH_PARAM"]["default"] is None, v["HUB_AUTH_PARAM"]
PY

# A secret whose value holds a newline: the launcher's second export
# splits it, each NAME=VALUE line a variable of its own. Each is a piece
# of the secret: secret too (they were public, in explain and the record).
tok=$'hf_first\nLEAKED_PIECE=SEKRITpiece9'
for fmt in explain record; do
	clean HF_TOKEN="$tok" "$ENVFS_BIN" resolve --env HF_TOKEN -b maxtext -a gfx942 --format "$fmt" \
		>"$TMP/out" 2>"$TMP/err" || fail "resolve --format $fmt of a split secret: $(cat "$TMP/err")"
	grep -q LEAKED_PIECE "$TMP/out" || fail "--format $fmt: the split line is not a variable"
	! grep -q SEKRITpiece9 "$TMP/out" "$TMP/err" || fail "--format $fmt shows a piece of a split secret"
done
python3 -c 'import json,sys; v={x["name"]:x for x in json.load(open(sys.argv[1]))["variables"]}; assert v["LEAKED_PIECE"]["secret"], v["LEAKED_PIECE"]' "$TMP/out" ||
	fail "the record: a piece of a split secret is no secret"

# A copy of a secret's value is as secret wherever it shows: shadowed by
# another layer's value, it was in clear in explain and the record.
printf 'HF_TOKEN=hf_COPYsekrit7\nHUB_AUTH=hf_COPYsekrit7\n' >"$TMP/copy.env"
printf 'env:\n  HUB_AUTH: "plain"\n' >"$TMP/copy.yaml"
for fmt in explain record; do
	clean "$ENVFS_BIN" resolve --inherit "$TMP/copy.env" --config "$TMP/copy.yaml" -b maxtext -a gfx942 \
		--format "$fmt" >"$TMP/out" 2>"$TMP/err" || fail "resolve --format $fmt of a copied secret: $(cat "$TMP/err")"
	grep -q HUB_AUTH "$TMP/out" || fail "--format $fmt lost HUB_AUTH"
	! grep -q COPYsekrit7 "$TMP/out" "$TMP/err" || fail "--format $fmt shows a shadowed copy of a secret"
done
clean "$ENVFS_BIN" resolve --inherit "$TMP/copy.env" --config "$TMP/copy.yaml" -b maxtext -a gfx942 \
	--format explain | sed -n '/^HUB_AUTH$/,/^$/p' >"$TMP/out"
grep -qx '  value: plain' "$TMP/out" && grep -qx '  shadowed: image=<redacted>' "$TMP/out" ||
	fail "HUB_AUTH: the plain value and the redacted copy: $(cat "$TMP/out")"

# A YAML alias of a secret's value (or the same text under another name)
# is quoted in no warning either: PGPASS: *pw printed the password.
printf 'env:\n  DB_PASSWORD: &pw 98765432101\n  PGPASS_COPY: *pw\n  OTHER_LEVEL: 0x1F\n' >"$TMP/alias.yaml"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --config "$TMP/alias.yaml"
grep -q 'PGPASS_COPY: the unquoted value is an int' "$TMP/err" || fail "no warning for the alias: $(cat "$TMP/err")"
! grep -qF 98765432101 "$TMP/out" "$TMP/err" || fail "check quoted an alias of a secret"
grep -qF 0x1F "$TMP/err" || fail "the control: OTHER_LEVEL's warning lost its text"

# The managed flag list built from a secret is quoted in no warning:
# PE116 named '--xla_gpu_autotune_level=<the value>' of a secret level.
printf 'env:\n  XLA_FLAGS: "--xla_gpu_enable_triton_gemm=false"\n' >"$TMP/own.yaml"
printf 'XLA_GPU_AUTOTUNE_LEVEL=S3K\n' >"$TMP/s3k.env"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --config "$TMP/own.yaml" --secret XLA_GPU_AUTOTUNE_LEVEL \
	--env-file "$TMP/s3k.env"
grep -q 'PE116' "$TMP/err" || fail "no PE116: $(cat "$TMP/err")"
! grep -q S3K "$TMP/out" "$TMP/err" || fail "PE116 quoted a secret flag value: $(grep S3K "$TMP/err")"

# PE211 quotes the environment's MASTER_ADDR only when it is no secret.
run "$TMP/out" "$TMP/err" clean SLURM_JOB_ID=1 SLURM_NODELIST=node1 MASTER_ADDR=SEKRIThost "$ENVFS_BIN" check --secret MASTER_ADDR \
	--env MASTER_ADDR=node1 -b maxtext -a gfx950
grep -q 'PE211' "$TMP/err" || fail "no PE211: $(cat "$TMP/err")"
! grep -q SEKRIThost "$TMP/out" "$TMP/err" || fail "PE211 quoted a secret MASTER_ADDR"

# A secret flag list is checked by its flags' names (it was not checked
# at all): the misspelled flag is named, no value or token text shown.
printf 'XLA_FLAGS=--xla_gpu_autotune_levle=SEKRITf1 --xla_gpu_enable_triton_gemm=SEKRITf2 SEKRITf3\n' >"$TMP/xs.env"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check --secret 'XLA_FLAGS*' --env-file "$TMP/xs.env" -b maxtext -a gfx950
grep -q 'XLA defines no flag --xla_gpu_autotune_levle; did you mean --xla_gpu_autotune_level?' "$TMP/err" ||
	fail "a secret flag list's misspelled flag: $(cat "$TMP/err")"
grep -q -- '--xla_gpu_enable_triton_gemm is a boolean flag and its value (not shown' "$TMP/err" ||
	fail "a secret flag list's bad boolean: $(cat "$TMP/err")"
! grep -q SEKRITf "$TMP/out" "$TMP/err" || fail "check shows a secret flag list's text: $(grep SEKRITf "$TMP/err")"

# A config value that copies another layer's secret is quoted in no
# warning (the config's own names made it public: PE104 printed it).
printf 'HF_TOKEN=98765432101\n' >"$TMP/csec.env"
printf 'env:\n  PGPASS_COPY: 98765432101\n' >"$TMP/ccopy.yaml"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --config "$TMP/ccopy.yaml" --env-file "$TMP/csec.env"
grep -q 'PGPASS_COPY: unquoted <redacted> is an int' "$TMP/err" || fail "the copy's warning: $(cat "$TMP/err")"
! grep -qF 98765432101 "$TMP/out" "$TMP/err" || fail "check quoted a copy of an --env-file's secret"
# An env-file line in NAME: value style holding '=' (base64 padding) is
# shown by its first word alone; a name part of other bytes not at all.
printf 'GOOD=1\nHF_TOKEN: aGVsbG8gc2VjcmV0dG9rZW4=\n' >"$TMP/y64.env"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --env-file "$TMP/y64.env"
grep -q "(it starts 'HF_TOKEN:'; the rest is not shown" "$TMP/err" || fail "the NAME: value line: $(cat "$TMP/err")"
! grep -q aGVsbG8 "$TMP/out" "$TMP/err" || fail "check quoted a token of an env-file line"
printf 'U0VLUklU+/x=2\n' >"$TMP/b64.env"
run "$TMP/out" "$TMP/err" clean "$ENVFS_BIN" check -b maxtext -a gfx950 --env-file "$TMP/b64.env"
grep -q "PE207" "$TMP/err" && ! grep -q U0VL "$TMP/out" "$TMP/err" || fail "a wrapped token's line: $(cat "$TMP/err")"
echo "ok: secrets"

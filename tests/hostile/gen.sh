#!/usr/bin/env bash
# Writes the big hostile inputs of the corpus (listed in expect.tsv like the
# committed ones) into OUTDIR/<kind>/, so the repository holds no megabytes.
#
#   tests/hostile/gen.sh /tmp/hostile-gen
set -euo pipefail
OUT=${1:?usage: gen.sh OUTDIR}
mkdir -p "$OUT/config" "$OUT/spec" "$OUT/inherit"
export LC_ALL=C

# repeat N TEXT: TEXT N times, no newline.
repeat() {
	awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s", s }'
}

# junk N SEED [NUL]: N pseudo-random bytes, the same on every run; without
# NUL the byte 0 is replaced so the file stays a docker env-file or YAML.
junk() {
	awk -v n="$1" -v seed="$2" -v nul="${3:-}" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++) {
			b = int(rand() * 256)
			if (b == 0 && nul == "") b = 1
			printf "%c", b
		}
	}'
}

c=$OUT/config
{ printf 'env: '; repeat 10000 '['; repeat 10000 ']'; echo; } >"$c/deep_flow_10k.yaml"
{ printf 'env: '; repeat 10000 '{a: '; printf x; repeat 10000 '}'; echo; } >"$c/deep_map_10k.yaml"
{ printf 'env:\n  A: "'; repeat 1048576 'xxxxxxxxxx'; printf '"\n'; } >"$c/scalar_10mb.yaml"
{ printf 'env:\n  A: "'; repeat 204800 x; printf '"\n'; } >"$c/value_200k.yaml"
{ printf 'env:\n  ? '; repeat 204800 K; printf '\n  : x\n'; } >"$c/key_200k.yaml"
# 200001 nodes in 400 KB without a single alias.
{ printf 'env: {}\nlist: ['; repeat 200001 '1,'; printf ']\n'; } >"$c/nodes_200k.yaml"
awk 'BEGIN { print "env:"; for (i = 0; i < 10000; i++) printf "  K%d: \"v\"\n", i }' \
	>"$c/keys_10k.yaml"
awk 'BEGIN { print "env:"; for (i = 0; i < 500; i++) printf "  A: \"%d\"\n", i }' \
	>"$c/dup_key_500.yaml"
awk 'BEGIN { print "env:"; for (i = 0; i < 1000; i++) printf "  K%d: %d\n", i, i }' \
	>"$c/unquoted_1000.yaml"
junk 65536 1 >"$c/binary_junk.yaml"
# Just past the limits of yaml_tree.h (4096 aliases, 128 levels), and at them.
{ printf 'v: &v "1"\nlist:\n'; repeat 4097 '  - *v\n'; printf 'env:\n  A: "1"\n'; } \
	>"$c/too_many_aliases.yaml"
{ printf 'v: &v "1"\nlist:\n'; repeat 4096 '  - *v\n'; printf 'env:\n  A: "1"\n'; } \
	>"$c/aliases_4096.yaml"
{ printf 'env: '; repeat 129 '['; repeat 129 ']'; echo; } >"$c/deep_flow_129.yaml"
{ printf 'x: '; repeat 127 '['; repeat 127 ']'; printf '\nenv:\n  A: "1"\n'; } \
	>"$c/deep_flow_127.yaml"
awk 'BEGIN { print "env:"; for (i = 1; i <= 130; i++) { for (j = 0; j < i; j++) printf "  "; printf "k%d:\n", i } }' \
	>"$c/deep_block_130.yaml"
{ printf 'd: &d '; repeat 70 '['; repeat 70 ']'; printf '\nenv: '; repeat 70 '['; printf '*d'
  repeat 70 ']'; echo; } >"$c/alias_expands_too_deep.yaml"

s=$OUT/spec
{ printf 'backend: hostile\narches: '; repeat 10000 '['; repeat 10000 ']'; echo; } \
	>"$s/deep_flow_10k.yaml"
{ printf 'backend: hostile\narches: [gfx942]\nvariables:\n  - name: A\n    value: "'
  repeat 1048576 'xxxxxxxxxx'; printf '"\n'; } >"$s/scalar_10mb.yaml"
# Each references an unset name; the chained form is ref_chain_24k below.
awk 'BEGIN { print "backend: hostile\narches: [gfx942]\nvariables:"
	for (i = 0; i < 5000; i++) printf "  - name: H_%d\n    value: \"${U_%d:-x}\"\n", i, i }' \
	>"$s/variables_5000.yaml"
# H_0 -> ${H_1} -> ... -> H_24000: a reference chain 24000 deep in < 1 MiB.
awk 'BEGIN { print "backend: hostile\narches: [gfx942]\nvariables:"
	for (i = 0; i < 24000; i++) printf "  - name: H_%d\n    value: \"${H_%d}\"\n", i, i + 1 }' \
	>"$s/ref_chain_24k.yaml"
junk 65536 2 >"$s/binary_junk.yaml"

i=$OUT/inherit
{ printf 'A='; repeat 110000 'xxxxxxxxxx'; echo; } >"$i/over_1mib.env"
{ printf 'A='; repeat 70000 x; printf '\nB=2\n'; } >"$i/long_line_70k.env"
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%d-BAD=x\n", i }' >"$i/bad_lines_1000.env"
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "V_%d=%d\n", i, i }' >"$i/vars_10000.env"
junk 65536 3 >"$i/binary_junk.env"
junk 65536 4 nul >"$i/binary_junk_environ.env"

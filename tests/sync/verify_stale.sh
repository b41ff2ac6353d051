#!/usr/bin/env bash
# verify never passes on a record that is not what a node serves, on a
# real etcd with two mounts as two nodes (mountlib.sh):
#   - a reload makes node 1's record impossible to build (9,000 config
#     variables: over the 1 MiB a detail may take) and changes NCCL_DEBUG
#     there only: the old record must not stay under the renewed lease;
#     verify exits 1, naming node 1 and why its record cannot be published;
#   - back to a small config with NCCL_DEBUG changed: the record is current
#     again, and verify names NCCL_DEBUG with both values;
#   - a reload that fails (a YAML syntax error): node 1 serves the last
#     good resolution, and verify exits 1 naming node 1 and the load error;
#   - the config fixed: exit 0 again.
. "$(dirname "$0")/mountlib.sh"

# The record that cannot be built is said once on each daemon's stderr.
NODE_STDERR_ALLOW='the node record cannot be built: [a-z_]+: too many variables'
etcd_cluster_start 1
EP=$(etcd_endpoints)

small() {
	printf 'env:\n  NCCL_DEBUG: "%s"\n' "$1"
}

# write_cfg FILE: stdin to FILE, replaced in one rename (one reload).
write_cfg() {
	cat >"$1.tmp"
	mv "$1.tmp" "$1"
}

# verify_until WANT [ERE]: runs verify --nodes 2 until it exits WANT with
# a line of its output matching ERE (a node republishes after its
# reload), for up to 10 s; stdout in $TMP/v.out.
verify_until() {
	local rc
	for _ in $(seq 1 100); do
		rc=0
		"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes 2 >"$TMP/v.out" \
			2>"$TMP/v.err" || rc=$?
		[ "$rc" = "$1" ] && grep -Eq -- "${2:-}" "$TMP/v.out" && return 0
		sleep 0.1
	done
	fail "verify --nodes 2: exit $rc, not $1 with '${2:-}', after 10 s: $(cat "$TMP/v.out" "$TMP/v.err")"
}

small WARN >"$TMP/cfg.0"
small WARN >"$TMP/cfg.1"
node_mount 0 --specs "$ENVFS_SPECS" --env NNODES=2 --config "$TMP/cfg.0"
node_mount 1 --specs "$ENVFS_SPECS" --env NNODES=2 --config "$TMP/cfg.1"
verify_until 0
grep -q "^verify: run $RUN: 2 nodes registered and equal" "$TMP/v.out" ||
	fail "verify: $(cat "$TMP/v.out")"

# ---- a record that cannot be built --------------------------------------------
{
	small INFO
	for i in $(seq -w 1 9000); do
		echo "  CFG_A_RATHER_LONG_VARIABLE_NAME_NUMBER_$i: \"v$i\""
	done
} | write_cfg "$TMP/cfg.1"
node_wait_value 1 NCCL_DEBUG INFO
verify_until 1
grep -q "^verify: run $RUN: 2 nodes registered, 1 differs from the 1 that agree (node0)$" \
	"$TMP/v.out" || fail "the verdict on a record that cannot be built: $(cat "$TMP/v.out")"
grep -q '^node1: differs from node0:$' "$TMP/v.out" &&
	grep -q '^  its record cannot be published: [a-z_]*: too many variables to publish the node record$' \
		"$TMP/v.out" || fail "node1 and the reason are not named: $(cat "$TMP/v.out")"
grep -q '^sync_record_error: [a-z_]*: too many variables to publish the node record$' \
	"$(node_mnt 1)/status" || fail "node1's status: $(grep '^sync' "$(node_mnt 1)/status")"
# The lease is still renewed: the node is registered, not missing.
sleep 4
"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes 2 >"$TMP/v.out" 2>&1 && 
	fail "verify passes 4 s later: $(cat "$TMP/v.out")"

# ---- buildable again: current, with the new NCCL_DEBUG --------------------------
small INFO | write_cfg "$TMP/cfg.1"
verify_until 1 NCCL_DEBUG
grep -q '^  NCCL_DEBUG: node1 "INFO", node0 "WARN" \[all 17 directories\]$' "$TMP/v.out" ||
	fail "NCCL_DEBUG is not named with both values: $(cat "$TMP/v.out")"

# ---- a reload that fails: the last good resolution, and the error -------------
small WARN | write_cfg "$TMP/cfg.1"
verify_until 0
printf 'env:\n  NCCL_DEBUG: [unclosed\n' | write_cfg "$TMP/cfg.1"
verify_until 1 'with errors'

[ "$(node_read 1 NCCL_DEBUG)" = WARN ] || fail "node1 does not serve the last good NCCL_DEBUG"
grep -q "^verify: run $RUN: 2 nodes registered, equal (17 directories compared); 1 with errors (node1)$" \
	"$TMP/v.out" || fail "the verdict on a failed reload: $(cat "$TMP/v.out")"
grep -q "^  its inputs do not load (it serves the last good resolution): $TMP/cfg.1:[0-9]*:[0-9]*: error: " \
	"$TMP/v.out" || fail "node1's load error is not named: $(cat "$TMP/v.out")"
small WARN | write_cfg "$TMP/cfg.1"
verify_until 0
node_umount 0
node_umount 1
echo "verify_stale: all checks passed"

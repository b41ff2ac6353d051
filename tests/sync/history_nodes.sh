#!/usr/bin/env bash
# history on two nodes of one run (mountlib.sh): a write on node 0, an rm
# on node 1, an mv on node 0. Each node lists the same three changes in
# the same order, each with its cause, the writer's uid and pid and the
# node that wrote it, and the same values before and after. What may
# differ is node-local: the time each node published its generation, and
# each node's own start. The JSON is valid against its schema.
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
node_mount 0 --specs "$ENVFS_SPECS"
node_mount 1 --specs "$ENVFS_SPECS"
hist() { "$ENVFS_BIN" history --mount "$(node_mnt "$1")" maxtext/gfx950 "${@:2}"; }

bash -c 'echo 7 >"$1"; echo $$ >"$2"' _ "$(node_dir 0)/NNODES" "$TMP/pid.w"
node_wait_value 1 NNODES 7
# rm and mv from python: the process that unlinks is the one whose pid we know.
"$PYTHON" -c 'import os, sys; os.unlink(sys.argv[1]); print(os.getpid())' \
	"$(node_dir 1)/NNODES" >"$TMP/pid.rm"
node_wait_value 0 NNODES 1
"$PYTHON" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2]); print(os.getpid())' \
	"$(node_dir 0)/NNODES" "$(node_dir 0)/NNODES_MOVED" >"$TMP/pid.mv"
node_wait_value 1 NNODES_MOVED 1
node_wait_value 1 NNODES "<absent>"
u=$(id -u)

for i in 0 1; do
	hist "$i" >"$TMP/h.$i"
	hist "$i" --format json >"$TMP/h.$i.json"
	"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" \
		"$ENVFS_SPECS/schemas/history.schema.json" "$TMP/h.$i.json" ||
		fail "node $i: history --format json is not valid"
	# Every change names its writer, on both nodes.
	for c in "write  uid $u pid $(cat "$TMP/pid.w")  node node0" \
		"rm  uid $u pid $(cat "$TMP/pid.rm")  node node1" \
		"mv  uid $u pid $(cat "$TMP/pid.mv")  node node0"; do
		grep -qE "^gen [0-9]+  [^ ]+  $c\$" "$TMP/h.$i" ||
			fail "node $i: no generation '$c': $(cat "$TMP/h.$i")"
	done
	grep -qE '^gen [0-9]+  [^ ]+  sync' "$TMP/h.$i" &&
		fail "node $i: a change of the run without its writer: $(cat "$TMP/h.$i")"
	grep -qx '  maxtext/gfx950 NNODES: "1" runner -> "7" override' "$TMP/h.$i" &&
		grep -qx '  maxtext/gfx950 NNODES: "7" override -> "1" runner' "$TMP/h.$i" &&
		grep -qx '  maxtext/gfx950 NNODES: "1" runner -> (unset)' "$TMP/h.$i" &&
		grep -qx '  maxtext/gfx950 NNODES_MOVED: (unset) -> "1" override' "$TMP/h.$i" ||
		fail "node $i: the changes' values: $(cat "$TMP/h.$i")"
done
# The same history, but for the time of each generation and each node's
# own start.
for i in 0 1; do
	sed -E 's/^(gen [0-9]+)  [^ ]+  /\1  /' "$TMP/h.$i" |
		awk '/^gen /{keep = $3 != "start"} keep' >"$TMP/n.$i"
done
[ "$(grep -c '^gen ' "$TMP/n.0")" -eq 3 ] || fail "node 0: not three changes: $(cat "$TMP/n.0")"
diff -u "$TMP/n.0" "$TMP/n.1" || fail "the nodes tell different histories"
"$PYTHON" - "$TMP/h.0.json" "$TMP/h.1.json" <<'PY' || fail "the JSON histories differ"
import json, sys
def gens(p):
    g = json.load(open(p))["generations"]
    return [{k: v for k, v in x.items() if k != "time"} for x in g if x["cause"] != "start"]
a, b = gens(sys.argv[1]), gens(sys.argv[2])
if a != b or len(a) != 3:
    sys.exit("node0: %s\nnode1: %s" % (a, b))
PY

# A create shares one value, at its first close (mount_create.sh): the
# empty file the create makes in passing is this node's alone, and is
# no change of the run's in either node's history.
echo v >"$(node_dir 0)/ENVFS_HNEW"
node_wait_value 1 ENVFS_HNEW v
for i in 0 1; do
	hist "$i" ENVFS_HNEW | grep -Ev '^gen [0-9]+  [^ ]+  start' >"$TMP/c.$i"
	[ "$(grep -c '^gen ' "$TMP/c.$i")" -eq 1 ] && grep -qx '  maxtext/gfx950 ENVFS_HNEW: (unset) -> "v" override' "$TMP/c.$i" ||
		fail "node $i: a create's history is not one change (unset) -> v: $(cat "$TMP/c.$i")"
done
# A create whose first close fails (etcd down: EIO, applied nowhere)
# changed nothing: the writer's history gains no generation.
hist 0 >"$TMP/before.0"
etcd_kill 0
create_close "$(node_dir 0)/ENVFS_HLOST" lost >"$TMP/down.out"
[ "$(cat "$TMP/down.out")" = "close EIO" ] || fail "the close with etcd down: $(cat "$TMP/down.out")"
hist 0 >"$TMP/after.0"
diff -u "$TMP/before.0" "$TMP/after.0" || fail "node 0's history tells of a create that failed"
etcd_restart 0
node_umount 1
node_umount 0
echo "ok: history_nodes"

#!/usr/bin/env bash
# Writes of two nodes racing, against the serial orders they allow:
# - `mv MA MB` on node 0 racing `echo new > MA` on node 1, 40 rounds: when
#   both return 0 the run ends (on etcd and on both nodes) as
#   "mv, then write" (MA=new, MB=old) or "write, then mv" (MA gone,
#   MB=new), never with `new` lost (MA gone, MB=old): a compare that
#   failed re-reads and recomputes the mv from what it read;
# - a remote mv is one generation: a reader of node 1's env.json while
#   node 0 moves a variable back and forth sees exactly one of the two
#   names in every read, never both, never neither.
. "$(dirname "$0")/mountlib.sh"

OVP="/primus-envfs/runs/$RUN/overrides/$DIR_BA"
ROUNDS=${ROUNDS:-40}

etcd_cluster_start 3
# The orders are under test, not the bound: on a loaded machine a txn of
# a 3-member cluster can take longer than the default 2 s, and its EIO
# would fail the remote-mv part for nothing.
NODE_ENDPOINTS=$(etcd_endpoints 0 1 2) node_mount 0 --sync-timeout 10000
NODE_ENDPOINTS=$(etcd_endpoints 1 2 0) node_mount 1 --sync-timeout 10000
NODE_STDERR_ALLOW='^$'

# etcd_val NAME: NAME's override in etcd, decoded ("<absent>": no key).
etcd_val() {
	local v
	v=$(ectl get "$OVP/$1" --print-value-only)
	if [ -z "$v" ]; then echo "<absent>"; else echo "${v#=}"; fi
}

# ---- mv racing a write ----------------------------------------------------------
lost=0
both=0
for r in $(seq 1 "$ROUNDS"); do
	echo "old$r" >"$(node_dir 0)/ENVFS_MA"
	node_wait_value 1 ENVFS_MA "old$r"
	node_wait_value 1 ENVFS_MB "<absent>"
	"$PYTHON" - "$(node_dir 0)" "$(node_dir 1)" "$r" >"$TMP/round" <<'PY'
import errno, os, sys, threading
d0, d1, r = sys.argv[1], sys.argv[2], sys.argv[3]
go = threading.Barrier(2)
res = {}
def mv():
    go.wait()
    try:
        os.rename(f"{d0}/ENVFS_MA", f"{d0}/ENVFS_MB")
        res["mv"] = "ok"
    except OSError as e:
        res["mv"] = errno.errorcode.get(e.errno, str(e.errno))
def write():
    go.wait()
    try:
        with open(f"{d1}/ENVFS_MA", "w") as f:
            f.write(f"new{r}\n")
        res["write"] = "ok"
    except OSError as e:
        res["write"] = errno.errorcode.get(e.errno, str(e.errno))
ts = [threading.Thread(target=mv), threading.Thread(target=write)]
for t in ts: t.start()
for t in ts: t.join()
print(res["mv"], res["write"])
PY
	read -r rmv rwr <"$TMP/round"
	a=$(etcd_val ENVFS_MA)
	b=$(etcd_val ENVFS_MB)
	# Both nodes end on what etcd holds.
	for i in 0 1; do
		node_wait_value "$i" ENVFS_MA "$a"
		node_wait_value "$i" ENVFS_MB "$b"
	done
	if [ "$rmv" = ok ] && [ "$rwr" = ok ]; then
		both=$((both + 1))
		case "$a|$b" in
		"new$r|old$r" | "<absent>|new$r") ;;
		*)
			lost=$((lost + 1))
			note "round $r: both returned 0, yet MA=$a MB=$b"
			;;
		esac
	else
		note "round $r: mv $rmv, write $rwr; MA=$a MB=$b"
		[ "$rwr" = ok ] || [ "$rwr" = EIO ] || fail "round $r: the write got $rwr"
		[ "$rmv" = ok ] || [ "$rmv" = EIO ] || [ "$rmv" = ENOENT ] || fail "round $r: the mv got $rmv"
	fi
	for n in ENVFS_MA ENVFS_MB; do
		rm -f "$(node_dir 0)/$n"
		node_wait_value 1 "$n" "<absent>"
	done
done
note "mv racing a write: $both of $ROUNDS rounds both returned 0, $lost of them lost the write"
[ "$lost" = 0 ] || fail "$lost rounds lost an acknowledged write"

# ---- a remote mv is one generation ----------------------------------------------
echo moved >"$(node_dir 0)/ENVFS_GA"
node_wait_value 1 ENVFS_GA moved
"$PYTHON" - "$(node_dir 0)" "$(node_dir 1)" >"$TMP/gen" <<'PY' || fail "env.json reader: $(cat "$TMP/gen")"
import json, os, sys, threading, time
d0, d1 = sys.argv[1], sys.argv[2]
done = threading.Event()
seen = {"reads": 0, "both": 0, "neither": 0}
def reader():
    while not done.is_set():
        with open(f"{d1}/env.json") as f:
            env = json.load(f)
        a, b = "ENVFS_GA" in env, "ENVFS_GB" in env
        seen["reads"] += 1
        if a and b: seen["both"] += 1
        if not a and not b: seen["neither"] += 1
t = threading.Thread(target=reader)
t.start()
names = ["ENVFS_GA", "ENVFS_GB"]
try:
    for k in range(60):
        os.rename(f"{d0}/{names[k % 2]}", f"{d0}/{names[(k + 1) % 2]}")
        # The next move only once node 1 has the last one: each is one
        # change to read, not a pile-up.
        want = names[(k + 1) % 2]
        while not os.path.exists(f"{d1}/{want}") or os.path.exists(f"{d1}/{names[k % 2]}"):
            time.sleep(0.001)
finally:
    # A failed rename ends the reader too: a failure, never a hang.
    done.set()
    t.join()
print(seen["reads"], seen["both"], seen["neither"])
PY
read -r reads gboth gneither <"$TMP/gen"
note "env.json on node 1: $reads reads, $gboth with both names, $gneither with neither"
[ "$gboth" = 0 ] && [ "$gneither" = 0 ] ||
	fail "a remote mv was seen half done in $((gboth + gneither)) of $reads reads of env.json"
echo ok

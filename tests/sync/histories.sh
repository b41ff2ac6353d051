#!/usr/bin/env bash
# Many nodes, tested as histories: a 3-member etcd cluster and 2 to 4
# mounts with --sync of one run; several clients (tests/sync/
# histories_client.py) do random writes, rm and mv on two or three names
# of one directory, each operation recorded with its invocation and
# completion times and outcome, while faults are injected: a member killed
# and restarted, a member SIGSTOPped, a mount's daemon SIGSTOPped,
# compactions of the current revision, foreign and huge keys under the
# run's prefix that are not overrides. Once the faults healed and every
# node stopped changing, each node's state of those names (its env.json,
# one generation) and etcd's are checked by tests/sync/histories_check.py:
# every node holds the same state, and that state is one that some serial
# order of the acknowledged operations consistent with real time gives,
# with no failed operation in it.
#
# Every random choice (nodes, names, clients and their operations, the
# fault schedule) comes from the seed, printed first; the timing is the
# machine's. HIST_SEED=S replays a seed's choices; HIST_FAULTS is a list
# of kill, stop, mstop, compact, foreign ("all", the default; "none");
# HIST_NODES fixes the node count; HIST_OP_MS the length of the op phase
# (20000); HIST_FAIL_ERRNOS the errnos that mean "applied nowhere"
# (histories_check.py's default: EIO ENOENT ...; any other errno is
# "outcome unknown"); HIST_MV_ABSENT=noop checks against the weaker model
# where a mv of a name holding nothing changes nothing; HIST_KEEP=DIR keeps a failed run's history and final
# states in DIR/SEED (histories_check.py check replays them).
HERE=$(cd "$(dirname "$0")" && pwd)
# The whole run is bounded (the op phase, the faults' healing and the
# quiescence wait are; this is for a hang anywhere else). Under TSan
# everything is slower, the op phase is not.
if [ -z "${HIST_BOUNDED:-}" ]; then
	limit=100
	if grep -qa __tsan_init "${ENVFS_BIN:-/nonexistent}" 2>/dev/null; then
		limit=140
	fi
	HIST_BOUNDED=1 exec timeout -k 10 "$limit" bash "$0" "$@"
fi
. "$HERE/mountlib.sh"

CHECK="$HERE/histories_check.py"
CLIENT="$HERE/histories_client.py"
SEED=${HIST_SEED:-$((${EPOCHREALTIME/./} % 1000000007))}
FAULTS=${HIST_FAULTS:-all}
OP_MS=${HIST_OP_MS:-20000}
TIME_SCALE=1
if grep -qa __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	TIME_SCALE=4
fi
echo "histories: seed $SEED, faults '$FAULTS' (replay: HIST_SEED=$SEED HIST_FAULTS='$FAULTS')"
trap 'echo "FAIL: histories: out of time (seed $SEED)" >&2; exit 143' TERM

eval "$("$PYTHON" "$CHECK" plan --seed "$SEED" --faults "$FAULTS" --nodes "${HIST_NODES:-0}" \
	--op-ms "$OP_MS" --events "$TMP/events")" || fail "no plan for seed $SEED"
note "$HIST_NODES nodes, $HIST_CLIENTS clients, names $HIST_NAMES, $(wc -l <"$TMP/events") fault events"
RUNP="/primus-envfs/runs/$RUN"
OVP="$RUNP/overrides/$DIR_BA"
# What a foreign key makes a node print when it re-reads the prefix, and
# what it prints when it learns the outcome of a write that got ETIMEDOUT
# (a daemon stopped past the bound mid-commit); the check below ties
# each of those to an ETIMEDOUT a client saw.
NODE_STDERR_ALLOW='^primus-envfs: --sync: (ignoring .*: not an override|the outcome of .* is known now: |shutting down: the outcome of )'

etcd_cluster_start 3
for ((i = 0; i < HIST_NODES; i++)); do
	NODE_ENDPOINTS=$(etcd_endpoints $((i % 3)) $(((i + 1) % 3)) $(((i + 2) % 3))) node_mount "$i"
done

# ---- the op phase: clients, and the fault schedule meanwhile -------------------------
declare -a CLIENT_PID
for ((c = 0; c < HIST_CLIENTS; c++)); do
	"$PYTHON" "$CLIENT" "$SEED" "$c" "$(node_dir $((c % HIST_NODES)))" "$HIST_NAMES" \
		"$(awk -v m="$OP_MS" 'BEGIN { print m / 1000 }')" "$TMP/hist.$c" \
		2>"$TMP/client.$c.err" &
	CLIENT_PID[$c]=$!
done
t0=$(now_ms)
declare -a KILLED STOPPED MSTOPPED

foreign() {
	local k
	head -c $((1024 * 1024)) /dev/zero | tr '\0' x >"$TMP/huge"
	ectl put "$RUNP/overrides/junk" x >/dev/null
	ectl put "$RUNP/overrides/$DIR_BA/not-a-name" "=v" >/dev/null
	ectl put "$RUNP/overrides/$DIR_BA/ENVFS_H_JUNK" "no encoding" >/dev/null
	ectl put "$RUNP/notes" "not an override either" >/dev/null
	for ((k = 0; k < $1; k++)); do
		ectl put "$RUNP/overrides/huge/$k/x/y" <"$TMP/huge" >/dev/null
	done
}

fault() {
	case $1 in
	kill) etcd_kill "$2"; KILLED[$2]=1 ;;
	restart) etcd_start "$2"; KILLED[$2]="" ;;
	stop) etcd_stop "$2"; STOPPED[$2]=1 ;;
	cont) etcd_cont "$2"; STOPPED[$2]="" ;;
	mstop) kill -STOP "${NODE_PID[$2]}"; MSTOPPED[$2]=1 ;;
	mcont) kill -CONT "${NODE_PID[$2]}"; MSTOPPED[$2]="" ;;
	compact) etcd_compact 2>"$TMP/compact.err" || note "compaction refused: $(head -1 "$TMP/compact.err")" ;;
	foreign) foreign "$2" || note "a foreign key was refused" ;;
	esac
}

while read -r at act arg; do
	now=$(($(now_ms) - t0))
	[ "$now" -ge "$at" ] || sleep "$(awk -v d=$((at - now)) 'BEGIN { print d / 1000 }')"
	echo "$(($(now_ms) - t0)) $act $arg" >>"$TMP/faults"
	fault "$act" "$arg"
done <"$TMP/events"

# ---- healing ---------------------------------------------------------------------------
for i in 0 1 2; do
	[ -z "${STOPPED[$i]:-}" ] || fault cont "$i"
	[ -z "${KILLED[$i]:-}" ] || fault restart "$i"
done
for ((i = 0; i < HIST_NODES; i++)); do
	[ -z "${MSTOPPED[$i]:-}" ] || fault mcont "$i"
done
for ((c = 0; c < HIST_CLIENTS; c++)); do
	wait "${CLIENT_PID[$c]}" || fail "client $c failed (seed $SEED): $(cat "$TMP/client.$c.err")"
done
etcd_wait_healthy
note "op phase over after $(($(now_ms) - t0)) ms; faults: $(awk '{ printf "%s %s@%s ", $2, $3, $1 }' "$TMP/faults" 2>/dev/null)"

# ---- quiescence: every node's state, until none changes and all agree ----------------
NODE_DIRS=()
for ((i = 0; i < HIST_NODES; i++)); do NODE_DIRS+=("$(node_dir "$i")"); done
timeout 60 "$PYTHON" - "$HIST_NAMES" "$((15 * TIME_SCALE))" "$TMP/final.json" "${NODE_DIRS[@]}" <<'PY' ||
import json, sys, time
names, budget, out, dirs = sys.argv[1].split(), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
def state(d):
    with open(f"{d}/env.json") as f:
        env = json.load(f)
    return {n: env.get(n) for n in names}
end = time.monotonic() + budget
last, stable = None, 0
while True:
    now = [state(d) for d in dirs]
    same = all(s == now[0] for s in now)
    stable = stable + 1 if same and now == last else 0
    last = now
    # Four equal polls in a row over a second: settled.
    if stable >= 4 or time.monotonic() > end:
        break
    time.sleep(0.25)
json.dump({f"node{i}": s for i, s in enumerate(now)}, open(out, "w"))
print("settled" if stable >= 4 else f"not settled after {budget:.0f} s")
PY
	fail "could not read the nodes' final states (seed $SEED)"
# etcd's own state of the names, as a node would decode it.
ectl get --prefix "$OVP/" -w json >"$TMP/etcd.json" || fail "cannot read etcd's state"
"$PYTHON" - "$HIST_NAMES" "$OVP/" "$TMP/etcd.json" "$TMP/final.json" <<'PY' || fail "cannot decode etcd's state"
import base64, json, sys
names, prefix, src, out = sys.argv[1].split(), sys.argv[2], sys.argv[3], sys.argv[4]
kvs = json.load(open(src)).get("kvs", [])
got = {}
for kv in kvs:
    k = base64.b64decode(kv["key"]).decode()
    v = base64.b64decode(kv.get("value", "")).decode()
    if k.startswith(prefix) and k[len(prefix):] in names and v.startswith("="):
        got[k[len(prefix):]] = v[1:]
final = json.load(open(out))
final["etcd"] = {n: got.get(n) for n in names}
json.dump(final, open(out, "w"))
PY

# ---- the check -----------------------------------------------------------------------
hist=()
for ((c = 0; c < HIST_CLIENTS; c++)); do hist+=("$TMP/hist.$c"); done
if ! timeout 60 "$PYTHON" "$CHECK" check --names "$HIST_NAMES" --final "$TMP/final.json" \
	${HIST_FAIL_ERRNOS:+--fail-errnos "$HIST_FAIL_ERRNOS"} \
	${HIST_MV_ABSENT:+--mv-absent "$HIST_MV_ABSENT"} "${hist[@]}" >"$TMP/verdict" 2>&1; then
	cat "$TMP/verdict" >&2
	echo "faults (ms after the clients started, action, argument):" >&2
	sed 's/^/  /' "$TMP/faults" >&2 2>/dev/null || true
	for ((i = 0; i < HIST_NODES; i++)); do
		echo "node $i: $(node_status "$i" | grep '^sync' | tr '\n' ';')" >&2
	done
	if [ -n "${HIST_KEEP:-}" ]; then
		mkdir -p "$HIST_KEEP/$SEED"
		cp "$TMP"/hist.* "$TMP"/final.json "$TMP"/faults "$TMP"/events "$HIST_KEEP/$SEED/"
		note "the history and final states are in $HIST_KEEP/$SEED"
	fi
	# Once more after the long history, where a truncated log still shows it.
	grep -E '^  - |^    for instance' "$TMP/verdict" >&2
	fail "histories: seed $SEED (HIST_SEED=$SEED HIST_FAULTS='$FAULTS' to replay the choices)"
fi
# A write whose outcome a node learned later must have been answered
# ETIMEDOUT (outcome unknown), never EIO (applied nowhere): on each node,
# no more learned outcomes than ETIMEDOUTs its clients got.
for ((i = 0; i < HIST_NODES; i++)); do
	learned=$(grep -c 'the outcome of .* is known now: ' "${NODE_ERR_FILES[$i]}" || true)
	timeouts=0
	for ((c = i; c < HIST_CLIENTS; c += HIST_NODES)); do
		n=$(grep -c '"res": "ETIMEDOUT"' "$TMP/hist.$c" || true)
		timeouts=$((timeouts + n))
	done
	[ "$learned" -le "$timeouts" ] ||
		fail "node $i learned the outcome of $learned writes but its clients got ETIMEDOUT $timeouts times: a write of unknown outcome was answered otherwise (seed $SEED): $(grep 'the outcome of' "${NODE_ERR_FILES[$i]}")"
	[ "$learned" -eq 0 ] || note "node $i: $learned writes of unknown outcome (ETIMEDOUT $timeouts times), learned later"
done
cat "$TMP/verdict"
echo "ok (seed $SEED)"

#!/usr/bin/env bash
# The README's Slurm script, run as written by a real Slurm: Debian's
# slurm-wlm with munge, set up in this test's temporary directory (its
# own slurm.conf, munge key and socket, slurmctld and two slurmd on
# loopback: nodes n1 and n2 on this host), and etcd on loopback. Only the
# site's names are replaced: the etcd endpoints, /etc/primus/exp.yaml,
# /mnt/primus and /var/tmp (per node here, since both nodes share this
# host), `python train.py` (a script recording what it got) and the node
# count. Then:
# - a drifted node (n2's config differs): the gate exits 1, the job fails
#   before training, and no mount is left behind;
# - equal nodes: the gate passes, each node's training sees NNODES=2, its
#   own NODE_RANK and MASTER_ADDR=n1 (from Slurm, no --env), the job exits
#   0 and the teardown leaves no mount behind.
# Skipped (77) only where slurmctld cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../py_errno.sh"

: "${ENVFS_BIN:?}" "${ENVFS_SOURCE_ROOT:?}"
if [ "${ENVFS_HAS_MOUNT:-1}" = 0 ]; then
	echo "SKIP: built without FUSE (-Dfuse=disabled)" >&2
	exit 77
fi

skip_no_slurm() {
	echo "SKIP: slurmctld cannot start here: $*" >&2
	exit 77
}
for b in slurmctld slurmd sbatch scancel srun sinfo munged mungekey; do
	command -v "$b" >/dev/null || skip_no_slurm "$b is not installed (Debian: slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip_no_slurm "slurmd runs jobs as their users only as root"

SL="$TMP/slurm"
mkdir -p "$SL/state" "$SL/log" "$SL/munge"
declare -a SL_PID=()

test_cleanup() {
	local p m
	for p in "${SL_PID[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${SL_PID[@]}"; do
		for _ in $(seq 1 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	for m in "$TMP"/mnt.*; do
		[ -d "$m" ] || continue
		mountpoint -q "$m" 2>/dev/null || grep >/dev/null " $m " /proc/self/mountinfo || continue
		fusermount3 -uz "$m" 2>/dev/null
	done
	return 0
}

# ---- munge and Slurm ------------------------------------------------------------------
mungekey -c -k "$SL/munge/munge.key" >/dev/null 2>&1 || skip_no_slurm "mungekey failed"
chmod 600 "$SL/munge/munge.key"
munged -F --force --key-file="$SL/munge/munge.key" --socket="$SL/munge/sock" \
	--pid-file="$SL/munge/pid" --log-file="$SL/munge/log" --seed-file="$SL/munge/seed" \
	>"$SL/log/munged.out" 2>&1 &
SL_PID+=($!)
for _ in $(seq 1 100); do
	[ -S "$SL/munge/sock" ] && break
	sleep 0.05
done
[ -S "$SL/munge/sock" ] || skip_no_slurm "munged did not start: $(tail -3 "$SL/log/munged.out")"

free_port; CTLD_PORT=$PORT
free_port; SLURMD_PORT=$PORT
free_port; N1_PORT=$PORT
free_port; N2_PORT=$PORT
host=$(hostname)
cat >"$SL/slurm.conf" <<EOF
ClusterName=envfs$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SL/munge/sock
CredType=cred/munge
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool.%n
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.%n.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
KillWait=10
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$SL/plugstack.conf
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$N1_PORT CPUs=1 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$N2_PORT CPUs=1 State=UNKNOWN
PartitionName=p Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
: >"$SL/plugstack.conf"
export SLURM_CONF="$SL/slurm.conf"
mkdir -p "$SL/spool.n1" "$SL/spool.n2"
slurmctld -D -i -f "$SLURM_CONF" >"$SL/log/slurmctld.out" 2>&1 &
SL_PID+=($!)
ctld=$!
for _ in $(seq 1 100); do
	kill -0 "$ctld" 2>/dev/null || skip_no_slurm "slurmctld exited: $(tail -3 "$SL/log/slurmctld.out" "$SL/log/slurmctld.log" 2>/dev/null)"
	sinfo -h >/dev/null 2>&1 && break
	sleep 0.1
done
sinfo -h >/dev/null 2>&1 || skip_no_slurm "slurmctld does not answer: $(tail -3 "$SL/log/slurmctld.log")"
for n in n1 n2; do
	slurmd -D -N "$n" -f "$SLURM_CONF" >"$SL/log/slurmd.$n.out" 2>&1 &
	SL_PID+=($!)
done
for _ in $(seq 1 300); do
	[ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | tr '\n' ' ')" = "n1 n2 " ] && break
	sleep 0.1
done
[ "$(sinfo -h -N -t idle -o %N | sort -u | tr '\n' ' ')" = "n1 n2 " ] ||
	fail "the two nodes are not idle after 30 s: $(sinfo -N 2>&1; tail -5 "$SL/log/slurmd.n1.log")"
note "Slurm $(slurmctld -V | cut -d' ' -f2): nodes n1 n2 idle"

# ---- the README's script ------------------------------------------------------------------
etcd_cluster_start 1
"$PYTHON" - "$ENVFS_SOURCE_ROOT/README.md" >"$TMP/readme.sbatch" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("**Slurm.** One mount per node, as a step of the batch script that runs")
i = next(k for k in range(start, len(lines)) if lines[k] == "    #!/bin/bash")
out = []
while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
    out.append(lines[i][4:])
    i += 1
sys.stdout.write("\n".join(out).rstrip("\n") + "\n")
PY
for want in 'srun --ntasks-per-node=1 --overlap' 'primus-envfs verify' 'scancel --signal=TERM "$SLURM_JOB_ID.0"' \
	'env.sh && exec python train.py' '#SBATCH --nodes=8'; do
	grep -qF -- "$want" "$TMP/readme.sbatch" || fail "the README's Slurm script has no '$want'"
done
sed -e 's|^ETCD=.*|ETCD=etcd://'"$(etcd_endpoints)"'|' \
	-e 's|#SBATCH --nodes=8|#SBATCH --nodes=2|' \
	-e 's|/etc/primus/exp.yaml|'"$TMP"'/exp.$SLURMD_NODENAME.yaml|g' \
	-e 's|/mnt/primus|'"$TMP"'/mnt.$SLURMD_NODENAME|g' \
	-e 's|/var/tmp/primus-envfs\.|'"$TMP"'/state.$SLURMD_NODENAME.|g' \
	-e 's|python train.py|'"$TMP"'/train.sh|' \
	"$TMP/readme.sbatch" >"$TMP/job.sbatch"
grep -q "etcd://127.0.0.1" "$TMP/job.sbatch" || fail "no ETCD= line to point at the test's etcd"
cat >"$TMP/train.sh" <<EOF
#!/bin/bash
env >"$TMP/seen.\$SLURMD_NODENAME"
EOF
chmod +x "$TMP/train.sh"
export PATH="$(dirname "$ENVFS_BIN"):$PATH"

# run_job: sbatch --wait the script; JOB_RC its exit status.
run_job() {
	rm -f "$TMP"/seen.*
	JOB_RC=0
	timeout 180 sbatch --wait -o "$TMP/job.%j.out" "$TMP/job.sbatch" >"$TMP/sbatch.out" 2>&1 || JOB_RC=$?
	JOB_OUT=$(ls -t "$TMP"/job.*.out | head -1)
}
no_mount_left() {
	local m
	for m in "$TMP/mnt.n1" "$TMP/mnt.n2"; do
		if grep -qF " $m " /proc/self/mountinfo; then
			fail "$1: $m is still mounted after the job: $(cat "$JOB_OUT")"
		fi
	done
}

# A drifted node: n2's experiment config differs.
printf 'env:\n  NVTE_DEBUG_LEVEL: "0"\n' >"$TMP/exp.n1.yaml"
printf 'env:\n  NVTE_DEBUG_LEVEL: "2"\n' >"$TMP/exp.n2.yaml"
run_job
[ "$JOB_RC" -ne 0 ] || fail "the gate let a drifted node through: $(cat "$JOB_OUT")"
grep -q "n2" "$JOB_OUT" && grep -q "NVTE_DEBUG_LEVEL" "$JOB_OUT" ||
	fail "the gate's output does not name n2 and NVTE_DEBUG_LEVEL: $(cat "$JOB_OUT")"
! ls "$TMP"/seen.* >/dev/null 2>&1 || fail "training ran on a drifted job"
no_mount_left "drifted"
note "drifted: job exit $JOB_RC, no mount left; the gate said: $(grep -m3 -e n2 -e NVTE "$JOB_OUT" | tr '\n' ';')"

# Equal nodes.
cp "$TMP/exp.n1.yaml" "$TMP/exp.n2.yaml"
run_job
[ "$JOB_RC" -eq 0 ] || fail "the job with equal nodes exited $JOB_RC: $(cat "$JOB_OUT")"
for n in n1 n2; do
	[ -s "$TMP/seen.$n" ] || fail "training did not run on $n: $(cat "$JOB_OUT")"
	rank=$(grep '^SLURM_NODEID=' "$TMP/seen.$n" | cut -d= -f2)
	for want in NNODES=2 "NODE_RANK=$rank" MASTER_ADDR=n1 NVTE_DEBUG_LEVEL=0; do
		grep -qx "$want" "$TMP/seen.$n" ||
			fail "$n's training did not get $want: $(grep -E '^(NNODES|NODE_RANK|MASTER_ADDR|SLURM_NODEID)=' "$TMP/seen.$n" | tr '\n' ' ')"
	done
	grep -q '^PATH=' "$TMP/seen.$n" && grep -q '^HOME=' "$TMP/seen.$n" ||
		fail "$n's training lost PATH or HOME"
done
[ "$(grep '^NODE_RANK=' "$TMP/seen.n1")" != "$(grep '^NODE_RANK=' "$TMP/seen.n2")" ] ||
	fail "both nodes got the same NODE_RANK"
no_mount_left "equal"
if grep -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$JOB_OUT"; then
	fail "a sanitizer report in the job's output"
fi
note "equal: job exit 0; n1 and n2 got NNODES=2, their NODE_RANK, MASTER_ADDR=n1; no mount left"
echo "slurm: the README's script ran as written on a real Slurm"

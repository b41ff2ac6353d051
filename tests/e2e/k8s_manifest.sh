#!/usr/bin/env bash
# The README's Kubernetes manifest is complete: every document parses as
# YAML (PyYAML, as kubectl's YAML reading accepts it), and the Job has what
# an indexed Job of one pod per node needs to run and to complete: the
# primus-envfs sidecar as a native sidecar (an initContainers entry with
# restartPolicy: Always, so the Job completes when the trainer exits), its
# mount shared with the trainer through one volume (Bidirectional, and
# HostToContainer on the trainer), a trainer that has the binary, RUN and
# the gate before train.py, and every $(VAR) a container uses defined.
set -eu

: "${ENVFS_SOURCE_ROOT:?}"
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "SKIP: python3-yaml is not installed" >&2
	exit 77
fi
python3 - "$ENVFS_SOURCE_ROOT/README.md" <<'PY'
import re, sys, yaml

lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("**Kubernetes.**"))
i = next(k for k in range(start, len(lines)) if lines[k].startswith("    "))
block = []
while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
    block.append(lines[i][4:])
    i += 1
docs = [d for d in yaml.safe_load_all("\n".join(block)) if d is not None]

def fail(msg):
    sys.exit("FAIL: the README's Kubernetes manifest: " + msg)

def need(cond, msg):
    if not cond:
        fail(msg)

jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Job"]
need(len(jobs) == 1, f"want one Job among {len(docs)} documents, got {len(jobs)}")
job = jobs[0]
need(job.get("apiVersion") == "batch/v1", "the Job's apiVersion is not batch/v1")
need(job.get("metadata", {}).get("name"), "the Job has no metadata.name")
spec = job.get("spec", {})
need(spec.get("completionMode") == "Indexed", "not an Indexed Job (JOB_COMPLETION_INDEX)")
need(isinstance(spec.get("completions"), int) and spec.get("parallelism") == spec.get("completions"),
     "completions and parallelism must be the node count, both")
pod = spec.get("template", {}).get("spec", {})
need(pod.get("restartPolicy") in ("Never", "OnFailure"), "a Job's pod restartPolicy must be Never or OnFailure")
volumes = {v["name"]: v for v in pod.get("volumes", [])}
inits = pod.get("initContainers", [])
mains = pod.get("containers", [])
need(mains, "no containers")
for c in inits + mains:
    need(c.get("name") and c.get("image"), f"a container without name or image: {c.get('name')}")
    for m in c.get("volumeMounts", []):
        need(m["name"] in volumes, f"{c['name']} mounts volume {m['name']}, which is not in volumes")
    defined = {e["name"] for e in c.get("env", [])} | {"JOB_COMPLETION_INDEX"}
    words = " ".join(str(w) for w in c.get("command", []) + c.get("args", []))
    for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", words):
        need(ref in defined, f"{c['name']} uses $({ref}), which its env does not define")

sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
need(len(sidecars) == 1, "the primus-envfs mount must be a native sidecar: an initContainers "
     "entry with restartPolicy: Always (a plain container keeps the Job from completing)")
need(not any("primus-envfs" in str(c.get("args", [])) or c.get("name") == "primus-envfs"
             for c in mains), "primus-envfs must not be a plain container too")
side = sidecars[0]
need(side.get("securityContext", {}).get("privileged") is True, "the sidecar needs /dev/fuse and mount(2): privileged")
sargs = [str(a) for a in side.get("args", [])]
need("-f" in sargs, "the sidecar must mount in the foreground (-f)")
need("--run" in sargs and "$(RUN)" in sargs, "the sidecar's run is not $(RUN)")
need(any(a.startswith("NODE_RANK=$(JOB_COMPLETION_INDEX)") for a in sargs), "NODE_RANK is not the completion index")
smounts = {m["mountPath"]: m for m in side.get("volumeMounts", [])}
mnt = sargs[-1]
need(mnt in smounts and smounts[mnt].get("mountPropagation") == "Bidirectional",
     f"the sidecar's mount point {mnt} is not a Bidirectional volume mount")
shared = smounts[mnt]["name"]
need("emptyDir" in volumes[shared], "the shared volume is not an emptyDir")
need(any(p.get("exec") for p in [side.get("startupProbe") or {}]),
     "the sidecar has no startupProbe: the trainer would start before the mount")

trainers = [c for c in mains if "train.py" in " ".join(map(str, c.get("command", []) + c.get("args", [])))]
need(len(trainers) == 1, "no trainer container running train.py")
t = trainers[0]
tcmd = " ".join(map(str, t.get("command", []) + t.get("args", [])))
need("primus-envfs verify" in tcmd and tcmd.index("primus-envfs verify") < tcmd.index("train.py"),
     "the trainer does not run the gate (primus-envfs verify) before train.py")
need('"$RUN"' in tcmd or "$(RUN)" in tcmd, "the trainer's gate does not name the run")
need(any(e["name"] == "RUN" for e in t.get("env", [])), "the trainer has no RUN in its env")
need("primus-envfs" in t["image"] or "primus" in t["image"], "the trainer's image must hold primus-envfs (the gate)")
tm = [m for m in t.get("volumeMounts", []) if m["name"] == shared]
need(tm and tm[0]["mountPath"] == mnt and tm[0].get("mountPropagation") == "HostToContainer",
     "the trainer does not see the sidecar's mount (HostToContainer, same path)")
need(f"{mnt}/env/" in tcmd, "the trainer does not read the environment from the mount")
for c in inits + mains:
    for src in c.get("env", []):
        ref = src.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            need(ref.get("name") and ref.get("key"), f"{c['name']}: a secretKeyRef without name or key")
print(f"k8s manifest: {len(docs)} documents, an Indexed Job of {spec['completions']} with a native sidecar")
PY

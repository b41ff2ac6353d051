/* hostprobe: what a launch on this node detects about the node itself.
 *
 *   $ readlink /mnt/primus/env/maxtext/host
 *   gfx950
 *   $ cat /mnt/primus/env/maxtext/gfx950/NCCL_IB_HCA
 *   mlx5_0:1,mlx5_1:1
 *
 * Read from files only, under a root that is "/" on a real node and a
 * fake tree in tests (--host-root):
 * - the GPU arch, from the KFD topology the amdgpu driver publishes
 *   (sys/class/kfd/kfd/topology/nodes/N/properties, gfx_target_version
 *   9.4.x -> gfx942, 9.5.x -> gfx950), and whether an NVIDIA driver is
 *   loaded (proc/driver/nvidia);
 * - NCCL_IB_HCA as the runner's get_nccl_ib_hca.sh prints it: every device
 *   of sys/class/infiniband in name order except *bond* and *eth0*, each
 *   with its numerically lowest port, "dev:port" joined by commas;
 * - IP_INTERFACE as base_env.sh computes it: the first address
 *   `hostname -I` prints (IPv4 before IPv6, interfaces by index, loopback
 *   and link-local left out), then every interface whose "addr/prefix"
 *   matches that address read as an awk regex (get_ip_interface.sh), one
 *   per line; when none matches, the address itself (the script's
 *   `|| hostname -I | awk '{print $1}'` fallback). IPv4 addresses come
 *   from proc/net/fib_trie (the local table) and their interfaces and
 *   prefixes from proc/net/route; IPv6 from proc/net/if_inet6; interface
 *   order from sys/class/net/IFACE/ifindex. */
#ifndef ENVFS_HOSTPROBE_H
#define ENVFS_HOSTPROBE_H

#include <stdbool.h>

struct hostprobe {
	char *root;               /* the root read, "/" by default */
	const char *gpu_arch;     /* "gfx942", "gfx950", or NULL (static) */
	char *gpu_found;          /* what the topology holds when it is no
	                             arch of ours ("gfx90a"), or NULL */
	char *gpu_why;            /* why there is no gpu_arch, or NULL */
	bool nvidia;              /* an NVIDIA driver is loaded */
	char *ib_hca;             /* "" when the node has no usable device */
	char *first_ip;           /* hostname -I's first address, or "" */
	char *ip_interface;       /* "" when first_ip is "" */
};

/* Probes the node under root (NULL: "/"). Files that are missing or
 * unreadable mean "none", never an error: a node without InfiniBand or a
 * GPU is normal. Returns 0 or -ENOMEM; *out is caller-owned, freed with
 * hostprobe_free(). */
int hostprobe_run(const char *root, struct hostprobe **out);
void hostprobe_free(struct hostprobe *p);

/* The arch a Primus launch on this node takes: gpu_model is
 * PRIMUS_GPU_MODEL as the launch sees it (NULL or "" when unset); a known
 * MI model chooses as the runner does (MI300X, MI325X -> gfx942, MI355X ->
 * gfx950), anything else falls back to the topology. NULL when neither
 * tells, with *why (static or borrowed from p) saying why. */
const char *hostprobe_primus_arch(const struct hostprobe *p, const char *gpu_model,
				  const char **why);

#endif

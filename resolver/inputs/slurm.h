/* slurm: what Primus's Slurm entry (primus-cli-slurm-entry.sh) derives
 * from the job's variables in the environment it runs in, before it hands
 * them to the launch as --env:
 *
 *   NNODES       SLURM_NNODES, else SLURM_JOB_NUM_NODES
 *   NODE_RANK    SLURM_NODEID, else SLURM_PROCID
 *   MASTER_ADDR  the first host of SLURM_NODELIST as `scontrol show
 *                hostnames` prints it, or (scontrol missing or failing, as
 *                the entry's own fallback) as hostlist.h expands it; a
 *                MASTER_ADDR already in that environment is kept when its
 *                first label is that host's, and makes the entry exit
 *                otherwise
 *
 * Only under a job (SLURM_JOB_ID set and non-empty); an empty variable
 * counts as unset (${VAR:-...}). MASTER_PORT is the entry's default,
 * 1234, the runner's own: nothing to derive. */
#ifndef ENVFS_SLURM_H
#define ENVFS_SLURM_H

#include <stdbool.h>

#include "diag.h"
#include "inherit.h"

/* Appends to out the variables the entry derives from env (the daemon's
 * environment; NULL: none), each with its source ("slurm:SLURM_NNODES"),
 * and to diags a warning when the node list cannot be expanded and an
 * error when env's MASTER_ADDR is another host (the entry exits 2),
 * which quotes that MASTER_ADDR unless addr_secret says it is one.
 * Runs scontrol (bounded) when the node list is set. Returns 0 or
 * -ENOMEM. */
int slurm_detect(char *const *env, bool addr_secret, struct env_list *out,
		 struct diag_list *diags);

#endif

/* The pieces of `primus-envfs verify` (cmd_verify.c): the state they
 * share and the functions one calls in another. Internal to the command. */
#ifndef ENVFS_VERIFY_H
#define ENVFS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node_record.h"
#include "sha256.h"
#include "strbuf.h"
#include "sync_opts.h"

#define VERIFY_EX_DIFFER 1
#define VERIFY_EX_MISSING 2
#define VERIFY_EX_ETCD 3
/* A value shown in a difference is cut after this many bytes. */
#define SHOW_MAX 300
/* A difference further in than this is shown from a little before it. */
#define SHOW_LEAD 40
/* The agreeing nodes named in the verdict (the odd ones always are). */
#define AGREE_SHOWN 8
/* The directories named after a difference or an error; more are
 * counted. */
#define DIRS_SHOWN 8
/* --wait polls the registry this often. */
#define POLL_MS 200

struct vnode {
	const char *name;             /* borrowed from the summary key: bytes
	                                 from etcd, printed escaped */
	struct node_summary *s;       /* NULL: unreadable or unpublishable
	                                 (why) */
	char why[400];
	bool unpublishable;           /* the node said it cannot publish */
	int group;
};

/* Lines of a report said once each, with the directories they apply to:
 * a difference or an error found in several directories. v in the order
 * first found; by_key sorted by key, for the lookup. */
struct line {
	uint8_t key[SHA256_LEN];
	char *text;
	size_t ndirs;
	struct strbuf dirs;           /* the first DIRS_SHOWN, escaped */
};

struct lines {
	struct line *v;
	size_t *by_key;
	size_t n, cap;
};

struct verify {
	const struct envfs_sync_api *api;
	struct etcd_client *cli;
	struct sync_opts so;
	const char *backend, *arch;   /* -b, -a */
	char *run_key;
	char *nodes_prefix;           /* RUN/nodes/ */
	struct etcd_range range;
	struct vnode *v;
	size_t n;
	bool quiet;
	bool too_many;                /* more than ETCD_RANGE_MAX summaries */
	struct strbuf out;            /* the report, printed at the end */
	struct strbuf ghosts;         /* what the last read did not count (a
	                                 record under no lease, a key that is
	                                 no record): said on stderr at the end */
};

/* s, from etcd, as it goes into the report (text.h: \n, \xNN, ...). */
int verify_add_esc(struct strbuf *sb, const char *s);
/* "backend/arch", escaped. */
int verify_add_dir(struct strbuf *sb, const struct node_dir_sum *d);
/* Adds dir d to the line keyed key, made of *text when new (taken over,
 * *text left empty). 0 or -ENOMEM. */
int verify_lines_add(struct lines *l, const uint8_t key[SHA256_LEN], struct strbuf *text,
		     const struct node_dir_sum *d);
/* Each line as "  TEXT [DIRS]": "all N directories" when it holds in
 * each of the total directories looked at. */
int verify_lines_print(struct strbuf *sb, const struct lines *l, size_t total);
void verify_lines_release(struct lines *l);
void verify_free_nodes(struct verify *vf);
/* Reads every summary. 0, or -EIO when etcd failed (message printed). */
int verify_read_nodes(struct verify *vf);
/* The detail of node's directory d, checked against the summary's
 * digest (read twice when a publish raced the read). NULL with why. */
struct node_detail *verify_read_detail(struct verify *vf, const char *node,
				       const struct node_dir_sum *d, char *why, size_t whylen);
/* What makes node o differ from the reference r. */
int verify_explain_odd(struct verify *vf, const struct vnode *o, const struct vnode *r);
bool verify_has_errors(const struct verify *vf, const struct vnode *nd);
/* "NODE: errors in its environment:" and each error once. */
int verify_explain_errors(struct verify *vf, const struct vnode *nd);
bool verify_dir_selected(const struct verify *vf, const struct node_dir_sum *d);
int verify_dir_cmp(const struct node_dir_sum *a, const struct node_dir_sum *b);
/* The next selected directory of s from *k on, or NULL. */
const struct node_dir_sum *verify_next_dir(const struct verify *vf, const struct node_summary *s,
					   size_t *k);
bool verify_specs_equal(const struct node_summary *a, const struct node_summary *b);
/* The names of group's nodes (every node: group -1), the first max of
 * them (0: all) and how many more. */
int verify_add_names(struct strbuf *sb, const struct verify *vf, int group, size_t max);
int verify_compare(struct verify *vf);

#endif

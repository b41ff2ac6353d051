/* node_record_decode: the decoder of the node records (node_record.h) for verify,
 * over the JSON module the encoder writes with (resolver/util/json.h).
 * Reached through the table (sync_api.h: decode_summary, decode_detail). */
#ifndef ENVFS_NODE_RECORD_DECODE_H
#define ENVFS_NODE_RECORD_DECODE_H

#include <stddef.h>

#include "node_record.h"

/* Decodes a summary (RUN/nodes/<node>) of n bytes. Returns 0, or -EPROTO
 * when it is not a format-1 summary (the reason in msg: which field), or
 * -ENOMEM. *out is caller-owned: node_summary_free(), NULL on error. Its
 * directories are sorted by backend, then arch. */
int record_decode_summary(const char *p, size_t n, struct node_summary **out,
			  char *msg, size_t msglen);
/* The same for a detail (RUN/node-dirs/<node>/<backend>/<arch>); its
 * variables are sorted by name; a detail whose names are not in byte
 * order or repeat one is -EPROTO. node_detail_free(). */
int record_decode_detail(const char *p, size_t n, struct node_detail **out,
			 char *msg, size_t msglen);

#endif

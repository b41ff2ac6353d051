/* The digest view; see view_digest.h. */
#include "view_digest.h"

#include <errno.h>
#include <stdint.h>

#include "sha256.h"

/* The block is hashed in pieces of about this much, never held whole. */
#define DIGEST_CHUNK 16384

int view_digest(const struct snapshot *s, struct strbuf *out)
{
	struct strbuf env = STRBUF_INIT;
	struct sha256_stream h;
	uint8_t md[SHA256_LEN];
	char line[2 * SHA256_LEN + 1];
	size_t i;
	int err = 0;

	sha256_stream_init(&h);
	for (i = 0; i < s->nvars && !err; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!view_in_environ(v))
			continue;
		if ((err = sb_add(&env, v->name, v->name_len)) < 0 ||
		    (err = sb_addc(&env, '=')) < 0 ||
		    (err = v->secret ? sb_adds(&env, VIEW_SECRET_MARKER)
				     : sb_add(&env, v->value, v->value_len)) < 0 ||
		    (err = sb_addc(&env, '\0')) < 0)
			break;
		if (env.len >= DIGEST_CHUNK) {
			sha256_stream_add(&h, env.buf, env.len);
			sb_reset(&env);
		}
	}
	if (err < 0)
		goto out;
	sha256_stream_add(&h, sb_str(&env), env.len);
	sha256_stream_end(&h, md);
	sha256_hex(md, line);
	/* the hex's NUL gives way to the line's newline */
	line[2 * SHA256_LEN] = '\n';
	err = sb_add(out, line, sizeof(line));
out:
	sb_release(&env);
	return err;
}

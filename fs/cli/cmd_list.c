/* primus-envfs list: the backends and their arches, and which arch this
 * node's GPUs are (the target of env/<backend>/host in the mount).
 *
 *   $ primus-envfs list
 *   maxtext gfx942 gfx950 host=gfx950
 *   torch_fl cuda ppu metax ascend tsingmicro dcu gcu musa bpu */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "json.h"
#include "load.h"

static const char *const formats[] = { "text", "json", NULL };

static const struct cli_cmd cmd = {
	.name = "list",
	.flags = CLI_FORMAT,
	.synopsis = "[INPUTS] [--format text|json]",
	.help =
	"List the backends and their arch directories, one backend per line: its\n"
	"name, its arches, and host=ARCH when this node's GPUs are one of them\n"
	"(what -a host selects).\n"
	"\n"
	"      --format text|json  text (default), or one JSON object:\n"
	"                          {\"backends\": [{\"name\", \"arches\", \"host\",\n"
	"                          \"host_reason\", \"models\"}]}, host null when not\n"
	"                          detected; models: {\"source\", \"version\",\n"
	"                          \"commit\"} the specs were written from\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 listed; 2 the specs did not load; 64 the command line is\n"
	"wrong.\n",
	.formats = formats,
	.format_default = "text",
};

/* "models": {"source", "version", "commit"}, or null. */
static int add_models(const struct spec *m, struct strbuf *out)
{
	int err;

	if (!m)
		return sb_adds(out, ", \"models\": null");
	if ((err = sb_adds(out, ", \"models\": {\"source\": ")) < 0 ||
	    (err = json_add_string(out, m->models_source, strlen(m->models_source))) < 0 ||
	    (err = sb_adds(out, ", \"version\": ")) < 0 ||
	    (err = json_add_string(out, m->models_version, strlen(m->models_version))) < 0 ||
	    (err = sb_adds(out, ", \"commit\": ")) < 0 ||
	    (err = json_add_string(out, m->models_commit, strlen(m->models_commit))) < 0)
		return err;
	return sb_addc(out, '}');
}

static int list_backend(const struct world *w, const struct spec *s, bool json, bool first,
			struct strbuf *out)
{
	const char **arches = NULL, *why, *host = world_host_arch(w, s->backend, &why);
	size_t n = 0, k;
	int err;

	if ((err = world_arches(w, s, &arches, &n)) < 0)
		return err;
	if (!json) {
		err = sb_adds(out, s->backend);
		for (k = 0; k < n && !err; k++)
			err = sb_addf(out, " %s", arches[k]);
		if (!err && host)
			err = sb_addf(out, " host=%s", host);
		if (!err)
			err = sb_addc(out, '\n');
		goto out;
	}
	if ((err = sb_adds(out, first ? "\n    {\"name\": " : ",\n    {\"name\": ")) < 0 ||
	    (err = json_add_string(out, s->backend, strlen(s->backend))) < 0 ||
	    (err = sb_adds(out, ", \"arches\": [")) < 0)
		goto out;
	for (k = 0; k < n && !err; k++) {
		if (!(err = sb_adds(out, k ? ", " : "")))
			err = json_add_string(out, arches[k], strlen(arches[k]));
	}
	if (err || (err = sb_adds(out, "], \"host\": ")) < 0)
		goto out;
	if (host)
		err = json_add_string(out, host, strlen(host));
	else if (!(err = sb_adds(out, "null, \"host_reason\": ")))
		err = json_add_string(out, why, strlen(why));
	if (!err)
		err = add_models(spec_set_models(w->specs, s), out);
	if (!err)
		err = sb_addc(out, '}');
out:
	free(arches);
	return err;
}

int cmd_list(int argc, char **argv)
{
	struct cli_args a;
	struct strbuf out = STRBUF_INIT;
	struct world *w = NULL;
	bool json;
	size_t k;
	int rc, err = 0;

	if (!cli_start(&cmd, argc, argv, &a, &rc))
		goto out;
	rc = 2;
	if (load_world(&a.ci, true, &w) < 0 && (!w || !w->specs))
		goto out;
	json = !strcmp(a.format, "json");
	if (json)
		err = sb_adds(&out, "{\"backends\": [");
	for (k = 0; k < w->specs->nbackends && !err; k++)
		err = list_backend(w, w->specs->backends[k], json, k == 0, &out);
	if (!err && json)
		err = sb_adds(&out, k ? "\n  ]}\n" : "]}\n");
	if (err < 0) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(-err));
		goto out;
	}
	fputs(sb_str(&out), stdout);
	rc = fflush(stdout) == 0 ? 0 : 2;
out:
	sb_release(&out);
	world_free(w);
	inputs_release(&a.ci);
	return rc;
}

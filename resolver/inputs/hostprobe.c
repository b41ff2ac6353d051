/* hostprobe: the node's GPU arch, InfiniBand devices and network
 * interface, read from files under a root; see hostprobe.h. */
#include "grow.h"
#include "hostprobe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "strbuf.h"

/* Files here are small kernel tables; anything longer is not one. */
#define PROBE_MAX_FILE (1u << 20)

/* Reads root/rel into sb (NUL-terminated); 0, or a negative errno when
 * it is missing, unreadable, not a regular file or too long. */
static int read_rel(const char *root, const char *rel, struct strbuf *sb)
{
	struct strbuf path = STRBUF_INIT;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1, err;

	sb_reset(sb);
	if ((err = sb_addf(&path, "%s/%s", root, rel)) < 0)
		goto out;
	/* A FIFO or a device planted in a test root is never opened (that
	 * would let a FIFO's writer through, or make a device act): what is
	 * not a regular file is not there. Kernel files report size 0, so
	 * the bound is on what is read. */
	if ((fd = infile_open(sb_str(&path), NULL)) < 0) {
		err = -ENOENT;
		goto out;
	}
	err = infile_read_fd(fd, PROBE_MAX_FILE, &buf, &len);
	if (err < 0 && err != -EFBIG && err != -ENOMEM)
		err = -EIO;
	if (err == 0)
		err = sb_add(sb, buf, len);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	sb_release(&path);
	return err;
}

static bool exists_rel(const char *root, const char *rel)
{
	struct strbuf path = STRBUF_INIT;
	struct stat st;
	bool ok = sb_addf(&path, "%s/%s", root, rel) == 0 && stat(sb_str(&path), &st) == 0;

	sb_release(&path);
	return ok;
}

/* The entry names of root/rel (dot entries left out unless dots), in
 * strcmp order. *out and its strings are caller-owned (free_names). */
static int list_rel(const char *root, const char *rel, bool dots, char ***out, size_t *nout)
{
	struct strbuf path = STRBUF_INIT;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;
	DIR *d = NULL;
	int err;

	*out = NULL;
	*nout = 0;
	if ((err = sb_addf(&path, "%s/%s", root, rel)) < 0)
		goto out;
	err = 0;
	if (!(d = opendir(sb_str(&path))))
		goto out;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!dots && de->d_name[0] == '.')
			continue;
		err = -ENOMEM;
		if (GROW(v, cap, n, 16) < 0)
			goto out;
		if (!(v[n] = xstrdup(de->d_name)))
			goto out;
		n++;
	}
	err = 0;
out:
	if (d)
		closedir(d);
	sb_release(&path);
	if (err < 0) {
		while (n)
			free(v[--n]);
		free(v);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}

static void free_names(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `sort -n` on port names: by the leading number, ties by the bytes. */
static int cmp_num(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	long long nx = strtoll(x, NULL, 10), ny = strtoll(y, NULL, 10);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x, y);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* ---- the GPU --------------------------------------------------------- */

#define KFD_NODES "sys/class/kfd/kfd/topology/nodes"

/* gfx_target_version of one topology node's properties, or -1. */
static long gfx_target(const char *props)
{
	const char *p = props;

	while ((p = strstr(p, "gfx_target_version"))) {
		if ((p == props || p[-1] == '\n') && (p[18] == ' ' || p[18] == '\t'))
			return strtol(p + 19, NULL, 10);
		p += 18;
	}
	return -1;
}

static int probe_gpu(struct hostprobe *hp)
{
	struct strbuf props = STRBUF_INIT, rel = STRBUF_INIT;
	char **nodes = NULL;
	size_t n = 0, k;
	long ver = -1;
	int err;

	if ((err = list_rel(hp->root, KFD_NODES, false, &nodes, &n)) < 0)
		goto out;
	/* qsort(NULL, 0) is undefined: a node without KFD lists nothing. */
	if (n > 1)
		qsort(nodes, n, sizeof(*nodes), cmp_num);
	for (k = 0; k < n && ver <= 0; k++) {
		if (!all_digits(nodes[k]))
			continue;
		sb_reset(&rel);
		if ((err = sb_addf(&rel, KFD_NODES "/%s/properties", nodes[k])) < 0)
			goto out;
		if (read_rel(hp->root, sb_str(&rel), &props) == 0)
			ver = gfx_target(sb_str(&props));
	}
	err = 0;
	if (!exists_rel(hp->root, KFD_NODES)) {
		hp->gpu_why = xstrdup("no KFD topology (" KFD_NODES "): no AMD GPU driver on this node");
	} else if (ver <= 0) {
		hp->gpu_why = xstrdup("the KFD topology lists no GPU");
	} else if (ver / 10000 == 9 && ver / 100 % 100 == 4) {
		hp->gpu_arch = "gfx942";
	} else if (ver / 10000 == 9 && ver / 100 % 100 == 5) {
		hp->gpu_arch = "gfx950";
	} else {
		sb_reset(&rel);
		if ((err = sb_addf(&rel, "gfx%ld%lx%lx", ver / 10000, ver / 100 % 100,
				   ver % 100)) < 0)
			goto out;
		hp->gpu_found = xstrdup(sb_str(&rel));
		sb_reset(&rel);
		if ((err = sb_addf(&rel, "the GPU is %s (gfx_target_version %ld), "
				   "neither gfx942 nor gfx950", hp->gpu_found, ver)) < 0)
			goto out;
		hp->gpu_why = xstrdup(sb_str(&rel));
		if (!hp->gpu_found)
			err = -ENOMEM;
	}
	if (!hp->gpu_arch && !hp->gpu_why)
		err = -ENOMEM;
	hp->nvidia = exists_rel(hp->root, "proc/driver/nvidia");
out:
	free_names(nodes, n);
	sb_release(&props);
	sb_release(&rel);
	return err;
}

const char *hostprobe_primus_arch(const struct hostprobe *p, const char *gpu_model,
				  const char **why)
{
	static const struct { const char *model, *arch; } models[] = {
		{ "MI300X", "gfx942" }, { "MI325X", "gfx942" }, { "MI355X", "gfx950" },
	};
	size_t k;

	for (k = 0; gpu_model && k < sizeof(models) / sizeof(models[0]); k++)
		if (!strcmp(gpu_model, models[k].model))
			return models[k].arch;
	if (p && p->gpu_arch)
		return p->gpu_arch;
	*why = p && p->gpu_why ? p->gpu_why : "no GPU detected";
	return NULL;
}

/* ---- InfiniBand ------------------------------------------------------ */

#define IB_DIR "sys/class/infiniband"

static int probe_ib(struct hostprobe *hp)
{
	struct strbuf out = STRBUF_INIT, rel = STRBUF_INIT;
	char **devs = NULL, **ports = NULL;
	size_t ndevs = 0, nports = 0, k;
	int err;

	if ((err = list_rel(hp->root, IB_DIR, false, &devs, &ndevs)) < 0)
		goto out;
	if (ndevs > 1)
		qsort(devs, ndevs, sizeof(*devs), cmp_str);
	for (k = 0; k < ndevs; k++) {
		if (strstr(devs[k], "bond") || strstr(devs[k], "eth0"))
			continue;
		sb_reset(&rel);
		if ((err = sb_addf(&rel, IB_DIR "/%s/ports", devs[k])) < 0)
			goto out;
		free_names(ports, nports);
		/* find -mindepth 1 lists dot entries too */
		if ((err = list_rel(hp->root, sb_str(&rel), true, &ports, &nports)) < 0)
			goto out;
		if (!nports)
			continue;
		if (nports)
			qsort(ports, nports, sizeof(*ports), cmp_num);
		if ((err = sb_addf(&out, "%s%s:%s", out.len ? "," : "", devs[k], ports[0])) < 0)
			goto out;
	}
	err = (hp->ib_hca = xstrdup(sb_str(&out))) ? 0 : -ENOMEM;
out:
	free_names(devs, ndevs);
	free_names(ports, nports);
	sb_release(&out);
	sb_release(&rel);
	return err;
}

/* ---- the network interface ------------------------------------------- */

struct iface {
	char *name;
	long index;
	unsigned flags;           /* IFF_* as sysfs shows them */
};

struct addr4 {
	uint32_t addr;            /* host order */
	int prefix;
	size_t iface;             /* index into the ifaces, or SIZE_MAX */
};

struct net {
	struct iface *ifs;
	size_t nifs;
	struct addr4 *v4;
	size_t nv4;
	/* connected routes of proc/net/route */
	struct route { uint32_t dest, mask; size_t iface; } *routes;
	size_t nroutes;
};

#define IFF_UP_BIT 0x1
#define IFF_LOOPBACK_BIT 0x8

static void net_release(struct net *n)
{
	size_t k;

	for (k = 0; k < n->nifs; k++)
		free(n->ifs[k].name);
	free(n->ifs);
	free(n->v4);
	free(n->routes);
}

static size_t iface_find(const struct net *n, const char *name)
{
	size_t k;

	for (k = 0; k < n->nifs; k++)
		if (!strcmp(n->ifs[k].name, name))
			return k;
	return SIZE_MAX;
}

static int load_ifaces(const char *root, struct net *n)
{
	struct strbuf sb = STRBUF_INIT, rel = STRBUF_INIT;
	char **names = NULL;
	size_t nn = 0, k;
	int err;

	if ((err = list_rel(root, "sys/class/net", false, &names, &nn)) < 0)
		goto out;
	err = -ENOMEM;
	if (nn && !(n->ifs = calloc(nn, sizeof(*n->ifs))))
		goto out;
	for (k = 0; k < nn; k++) {
		struct iface *f = &n->ifs[n->nifs];

		f->name = names[k];
		names[k] = NULL;
		n->nifs++;
		f->index = LONG_MAX;
		sb_reset(&rel);
		if ((err = sb_addf(&rel, "sys/class/net/%s/ifindex", f->name)) < 0)
			goto out;
		if (read_rel(root, sb_str(&rel), &sb) == 0)
			f->index = strtol(sb_str(&sb), NULL, 10);
		sb_reset(&rel);
		if ((err = sb_addf(&rel, "sys/class/net/%s/flags", f->name)) < 0)
			goto out;
		if (read_rel(root, sb_str(&rel), &sb) == 0)
			f->flags = (unsigned)strtoul(sb_str(&sb), NULL, 16);
	}
	err = 0;
out:
	free_names(names, nn);
	sb_release(&sb);
	sb_release(&rel);
	return err;
}

/* proc/net/route: "Iface Destination Gateway Flags ... Mask ..." in hex,
 * the kernel's byte order; a route without a gateway is connected. */
static int load_routes(const char *root, struct net *n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line;
	size_t cap = 0;
	int err;

	if (read_rel(root, "proc/net/route", &sb) < 0)
		return 0;
	err = 0;
	for (line = sb_str(&sb); line && *line && !err; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		char ifname[64];
		unsigned dest, gw, flags, refcnt, use, metric, mask;
		struct route *r;

		if (sscanf(line, "%63s %x %x %x %u %u %u %x", ifname, &dest, &gw, &flags, &refcnt,
			   &use, &metric, &mask) != 8 || gw != 0)
			continue;
		if (GROW(n->routes, cap, n->nroutes, 16) < 0) {
			err = -ENOMEM;
			break;
		}
		r = &n->routes[n->nroutes++];
		r->dest = ntohl(dest);
		r->mask = ntohl(mask);
		r->iface = iface_find(n, ifname);
	}
	sb_release(&sb);
	return err;
}

static int prefix_len(uint32_t mask)
{
	int p = 0;

	while (mask & 0x80000000u) {
		p++;
		mask <<= 1;
	}
	return p;
}

/* The local addresses of proc/net/fib_trie ("|-- a.b.c.d" followed by
 * "/32 host LOCAL"), each given the interface and prefix of the longest
 * connected route that holds it; loopback addresses go to the loopback
 * interface with /8, as `ip addr` shows them. */
static int load_v4(const char *root, struct net *n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p, *next;
	char last[INET_ADDRSTRLEN] = "";
	size_t cap = 0, k;
	int err = 0;

	if (read_rel(root, "proc/net/fib_trie", &sb) < 0)
		return 0;
	for (p = sb_str(&sb); *p && !err; p = next) {
		const char *q = p;
		struct in_addr ia;
		struct addr4 *a;
		bool dup = false;

		next = strchr(p, '\n');
		next = next ? next + 1 : p + strlen(p);
		while (*q == ' ' || *q == '|' || *q == '+' || *q == '-')
			q++;
		if (q - p >= 4 && (size_t)(next - q) < sizeof(last) && q[-1] == ' ' &&
		    (q[-2] == '-')) {
			size_t len = (size_t)(next - q);

			memcpy(last, q, len);
			last[len] = '\0';
			last[strcspn(last, " \n")] = '\0';
			continue;
		}
		if (strncmp(q, "/32 host LOCAL", 14) || !last[0] || inet_pton(AF_INET, last, &ia) != 1)
			continue;
		for (k = 0; k < n->nv4; k++)
			dup |= n->v4[k].addr == ntohl(ia.s_addr);
		if (dup)
			continue;
		if (GROW(n->v4, cap, n->nv4, 8) < 0) {
			err = -ENOMEM;
			break;
		}
		a = &n->v4[n->nv4++];
		a->addr = ntohl(ia.s_addr);
		a->prefix = 32;
		a->iface = SIZE_MAX;
		if ((a->addr >> 24) == 127) {
			for (k = 0; k < n->nifs; k++)
				if (n->ifs[k].flags & IFF_LOOPBACK_BIT)
					a->iface = k;
			a->prefix = 8;
			continue;
		}
		for (k = 0; k < n->nroutes; k++) {
			const struct route *r = &n->routes[k];

			if ((a->addr & r->mask) == r->dest && r->iface != SIZE_MAX &&
			    (a->iface == SIZE_MAX || prefix_len(r->mask) > a->prefix ||
			     a->prefix == 32)) {
				a->iface = r->iface;
				a->prefix = prefix_len(r->mask);
			}
		}
	}
	sb_release(&sb);
	return err;
}

static int cmp_v4(const void *a, const void *b, void *ctx)
{
	const struct addr4 *x = a, *y = b;
	const struct net *n = ctx;
	long ix = x->iface == SIZE_MAX ? LONG_MAX : n->ifs[x->iface].index;
	long iy = y->iface == SIZE_MAX ? LONG_MAX : n->ifs[y->iface].index;

	if (ix != iy)
		return ix < iy ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool shown_by_hostname(const struct net *n, size_t iface)
{
	unsigned f = iface == SIZE_MAX ? IFF_UP_BIT : n->ifs[iface].flags;

	return (f & IFF_UP_BIT) && !(f & IFF_LOOPBACK_BIT);
}

/* hostname -I's first IPv6 address, for a node with no IPv4 one:
 * proc/net/if_inet6 "addr32hex ifindex prefix scope flags name", global
 * scope only (loopback is 0x10, link-local 0x20). */
static int first_v6(const char *root, const struct net *n, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line;
	long best = LONG_MAX;
	int err = 0;

	if (read_rel(root, "proc/net/if_inet6", &sb) < 0)
		return 0;
	for (line = sb_str(&sb); line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		char hex[33], ifname[64], text[INET6_ADDRSTRLEN];
		unsigned idx, plen, scope, flags, k;
		unsigned char bytes[16];
		size_t fi;

		if (sscanf(line, "%32s %x %x %x %x %63s", hex, &idx, &plen, &scope, &flags,
			   ifname) != 6 || strlen(hex) != 32 || (scope & 0x30) || (long)idx >= best)
			continue;
		fi = iface_find(n, ifname);
		if (!shown_by_hostname(n, fi))
			continue;
		for (k = 0; k < 16; k++) {
			unsigned b;

			if (sscanf(hex + 2 * k, "%2x", &b) != 1)
				break;
			bytes[k] = (unsigned char)b;
		}
		if (k != 16 || !inet_ntop(AF_INET6, bytes, text, sizeof(text)))
			continue;
		best = (long)idx;
		sb_reset(out);
		if ((err = sb_adds(out, text)) < 0)
			break;
	}
	sb_release(&sb);
	return err;
}

static int probe_ip(struct hostprobe *hp)
{
	struct strbuf first = STRBUF_INIT, ifs = STRBUF_INIT, line = STRBUF_INIT;
	struct net n = { 0 };
	regex_t re;
	bool have_re = false;
	size_t k;
	int err;

	if ((err = load_ifaces(hp->root, &n)) < 0 || (err = load_routes(hp->root, &n)) < 0 ||
	    (err = load_v4(hp->root, &n)) < 0)
		goto out;
	if (n.nv4 > 1)
		qsort_r(n.v4, n.nv4, sizeof(*n.v4), cmp_v4, &n);
	for (k = 0; k < n.nv4 && !first.len; k++) {
		struct in_addr ia = { htonl(n.v4[k].addr) };
		char text[INET_ADDRSTRLEN];

		if (shown_by_hostname(&n, n.v4[k].iface) &&
		    inet_ntop(AF_INET, &ia, text, sizeof(text)) &&
		    (err = sb_adds(&first, text)) < 0)
			goto out;
	}
	if (!first.len && (err = first_v6(hp->root, &n, &first)) < 0)
		goto out;
	/* awk '$4 ~ ip': the address is a regular expression (its dots match
	 * any byte), matched anywhere in "addr/prefix" of every IPv4 address
	 * `ip -o -4 addr show` lists, interfaces in index order. */
	have_re = regcomp(&re, sb_str(&first), REG_EXTENDED | REG_NOSUB) == 0;
	for (k = 0; have_re && k < n.nv4; k++) {
		struct in_addr ia = { htonl(n.v4[k].addr) };
		char text[INET_ADDRSTRLEN];

		if (n.v4[k].iface == SIZE_MAX || !inet_ntop(AF_INET, &ia, text, sizeof(text)))
			continue;
		sb_reset(&line);
		if ((err = sb_addf(&line, "%s/%d", text, n.v4[k].prefix)) < 0)
			goto out;
		if (regexec(&re, sb_str(&line), 0, NULL, 0) == 0 &&
		    (err = sb_addf(&ifs, "%s%s", ifs.len ? "\n" : "",
				   n.ifs[n.v4[k].iface].name)) < 0)
			goto out;
	}
	err = -ENOMEM;
	if (!(hp->first_ip = xstrdup(sb_str(&first))) ||
	    !(hp->ip_interface = xstrdup(ifs.len ? sb_str(&ifs) : sb_str(&first))))
		goto out;
	err = 0;
out:
	if (have_re)
		regfree(&re);
	net_release(&n);
	sb_release(&first);
	sb_release(&ifs);
	sb_release(&line);
	return err;
}

int hostprobe_run(const char *root, struct hostprobe **out)
{
	struct hostprobe *hp = calloc(1, sizeof(*hp));
	int err = -ENOMEM;

	*out = NULL;
	if (!hp || !(hp->root = xstrdup(root && *root ? root : "/")))
		goto out;
	if ((err = probe_gpu(hp)) < 0 || (err = probe_ib(hp)) < 0 || (err = probe_ip(hp)) < 0)
		goto out;
	*out = hp;
	hp = NULL;
out:
	hostprobe_free(hp);
	return err;
}

void hostprobe_free(struct hostprobe *p)
{
	if (!p)
		return;
	free(p->root);
	free(p->gpu_found);
	free(p->gpu_why);
	free(p->ib_hca);
	free(p->first_ip);
	free(p->ip_interface);
	free(p);
}

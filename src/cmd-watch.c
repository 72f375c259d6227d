/*
 * kmemtrace watch: options, and what to watch resolved against the running
 * kernel (a function's addresses from /proc/kallsyms, a member's offset
 * from BTF). The recording and the watcher are src/recording.c and
 * src/watch.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "watch.h"

static const char watch_usage[] =
	"usage: kmemtrace watch (--cache NAME | --callsite FUNC) [options] [-- COMMAND [ARG...]]\n"
	"\n"
	"Sample how the kernel uses the objects of one slab cache or one allocation\n"
	"call site: follow their allocations live, pick objects among them, and watch a\n"
	"word of each with hardware data watchpoints on every CPU, telling reads from\n"
	"writes. The target's allocations, every free, and the samples go to one trace\n"
	"file: kmemtrace kmap lists each object with its accesses, kmemtrace report\n"
	"--sections access the accesses per offset and function.\n"
	"\n"
	"      --cache NAME         objects of this slab cache; kmalloc-N: every kmalloc\n"
	"                           of that size class\n"
	"      --callsite FUNC      objects allocated (kmalloc, kmem_cache_alloc) in FUNC\n"
	"      --offset WHERE[,WHERE]  the word(s) to watch: a byte offset, or\n"
	"                           STRUCT.MEMBER from the kernel's BTF (eventfd_ctx.count)\n"
	"      --scan               rotate over the whole object a word at a time, so every\n"
	"                           offset gets sampled over time (the default)\n"
	"      --type STRUCT        name offsets after STRUCT's members (BTF)\n"
	"  -n, --objects N          stop after watching N objects\n"
	"  -d, --duration TIME      stop after TIME (10, 2.5s, 500ms, 1m)\n"
	"      --dwell TIME         move on to another object (with --scan: or word) after\n"
	"                           watching one this long (default 100ms)\n"
	"  -F, --follow             only objects allocated by COMMAND and its children\n"
	"  -p, --pid PID[,PID]      only objects allocated by these tasks and children\n"
	"  -o, --output FILE        trace file (default kmemtrace.dat, mode 0600)\n"
	"  -b, --buffer-size KB     ring buffer per CPU (default 65536)\n"
	"      --user USER          run COMMAND as USER (default under sudo: the invoker)\n"
	"  -q, --quiet              no status line or summary\n"
	"      --self-test          only check that this machine's watchpoints fire, and exit\n"
	"  -h, --help               this text\n"
	"\n"
	"Coverage: x86 has four debug registers per CPU. A watched word takes two (one\n"
	"fires on writes, one on reads and writes), so two words are watched at once,\n"
	"on every CPU. Samples accumulate as the watchpoints move: to another object\n"
	"when the watched one is freed or has been watched for --dwell, and with --scan\n"
	"to the next word. A read-modify-write counts as a write; the instruction shown\n"
	"is the one after the access (data breakpoints trap after it). Samples that\n"
	"land after the object was freed are dropped when the file is analysed.\n"
	"\n"
	"Before recording, watch checks that watchpoints fire on every CPU (a few\n"
	"hundred microseconds). Some hypervisors accept them and never fire them;\n"
	"there watch refuses to run (exit 1) rather than record nothing.\n";

/*
 * Do this machine's watchpoints fire on every online CPU? 0, or EXIT_FAIL
 * after one line saying why not (the probe: cmd-util.c, hwbp_check()).
 */
static int watch_probe(bool report)
{
	struct kmt_hwbp_probe res;
	struct kmt_diag d = { 0 };
	const char *test = getenv("KMT_TEST_HWBP");
	int ret;

	if (!report && test && !strcmp(test, "skip"))
		return EXIT_OK;
	ret = hwbp_check(&res, &d);
	if (ret == KMT_ENOFIRE)
		return error("%s: kmemtrace watch cannot sample here; record, report and kmap still work",
			     d.msg);
	if (ret)
		return error("%s", d.msg);
	if (report)
		printf("hardware watchpoints fire on this machine: %d CPU%s, %llu of %llu writes counted\n",
		       res.cpus, res.cpus == 1 ? "" : "s", (unsigned long long)res.counted,
		       (unsigned long long)res.writes);
	return EXIT_OK;
}

/* [lo, hi) of function @name in /proc/kallsyms. */
static int resolve_function(const char *name, uint64_t *lo, uint64_t *hi, struct kmt_diag *d)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a;
	uint64_t start = 0, next = UINT64_MAX;
	int matches = 0;

	if (!f)
		return kmt_diag_set(d, -errno, "cannot read /proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		if ((type == 't' || type == 'T') && !strcmp(sym, name) && !matches++)
			start = a;
	}
	if (start) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c", &a, &type) == 2 && a > start && a < next)
				next = a;
	}
	fclose(f);
	if (!matches)
		return kmt_diag_set(d, -ENOENT, "the kernel has no function '%s' (see /proc/kallsyms)", name);
	if (!start)
		return kmt_diag_set(d, -EPERM, "/proc/kallsyms shows no addresses (kptr_restrict): run as root");
	if (matches > 1)
		warning("%d functions are called '%s'; watching the first", matches, name);
	*lo = start;
	*hi = next == UINT64_MAX ? start + 4096 : next;
	return 0;
}

static int resolve_target(struct wtarget *t, const char *cache, const char *callsite,
			  struct kmt_diag *d)
{
	char *end;

	if (callsite) {
		t->kind = T_CALLSITE;
		snprintf(t->name, sizeof(t->name), "%s", callsite);
		return resolve_function(callsite, &t->lo, &t->hi, d);
	}
	snprintf(t->name, sizeof(t->name), "%s", cache);
	if (!strncmp(cache, "kmalloc-", 8)) {
		t->kind = T_KMALLOC;
		t->size = strtoull(cache + 8, &end, 10);
		if (*end == 'k')
			t->size *= 1024, end++;
		if (*end || !t->size)
			return kmt_diag_set(d, -EINVAL, "'%s' is not a kmalloc size class (kmalloc-64, kmalloc-2k)", cache);
		return 0;
	}
	t->kind = T_CACHE;
	if (!access("/sys/kernel/slab", F_OK)) {
		char path[300];

		snprintf(path, sizeof(path), "/sys/kernel/slab/%s", cache);
		if (access(path, F_OK))
			return kmt_diag_set(d, -ENOENT, "the kernel has no slab cache '%s' (see /proc/slabinfo)", cache);
	}
	return 0;
}

/* One --offset item: a number, or STRUCT.MEMBER through BTF. */
static int parse_offset(struct watch *w, const char *s, struct woffset *o, struct kmt_diag *d)
{
	struct kmt_btf_field f;
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	int ret;

	if (!*end && end != s) {
		o->off = (uint32_t)(v & ~7UL);
		o->len = 8;
		return 0;
	}
	if (!strchr(s, '.'))
		return kmt_diag_set(d, -EINVAL, "bad offset '%s' (bytes, or STRUCT.MEMBER)", s);
	if (!w->btf && !(w->btf = kmt_btf_open(NULL, d)))
		return d->err ? d->err : -ENOENT;
	ret = kmt_btf_field(w->btf, s, &f, d);
	if (ret)
		return ret;
	/* The member's own size if the hardware can watch it, else its first word. */
	if (!f.bit_size && (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8) &&
	    !(f.offset & (f.size - 1))) {
		o->off = f.offset;
		o->len = f.size;
	} else {
		o->off = f.offset & ~7u;
		o->len = 8;
	}
	snprintf(o->field, sizeof(o->field), "%s", strchr(s, '.') + 1);
	if (!w->o.type[0])
		snprintf(w->o.type, sizeof(w->o.type), "%.*s", (int)(strchr(s, '.') - s), s);
	return 0;
}

static int parse_offsets(struct watch *w, const char *arg, struct kmt_diag *d)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		if (w->o.nr_offs == KMT_HWBP_MAX_SLOTS) {
			ret = kmt_diag_set(d, -EINVAL, "at most %d offsets at once (two debug registers each)",
					   KMT_HWBP_MAX_SLOTS);
			break;
		}
		ret = parse_offset(w, tok, &w->o.offs[w->o.nr_offs++], d);
	}
	free(copy);
	return ret;
}

/* The recording's events and their filters: the target's allocations, every free. */
static void set_events(struct watch *w, struct rec *rc, struct kmt_event_filter *ef, char bufs[][300])
{
	static const char *const evs[] = { "kmem:kmalloc", "kmem:kmem_cache_alloc", "kmem:kfree",
					   "kmem:kmem_cache_free" };
	char spec[200] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < 4; i++) {
		const char *f = NULL;
		bool want = true;

		if (i < 2) {
			f = watch_alloc_filter(&w->o.t, evs[i], bufs[i], 300);
			want = f != NULL;
		} else if (i == 3) {
			/* Cache objects only come from caches; by name if we know it. */
			want = w->o.t.kind != T_KMALLOC;
			if (w->o.t.kind == T_CACHE) {
				snprintf(bufs[i], 300, "name == \"%s\"", w->o.t.name);
				f = bufs[i];
			}
		}
		if (!want)
			continue;
		n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%s%s", n ? "," : "", evs[i]);
		if (f) {
			ef[rc->nr_event_filters].event = evs[i];
			ef[rc->nr_event_filters++].filter = f;
		}
	}
	rc->o.events_spec = strdup(spec);
	rc->event_filters = ef;
	rc->clock = "mono";
}

int cmd_watch(int argc, char **argv)
{
	enum { OPT_CACHE = 256, OPT_CALLSITE, OPT_OFFSET, OPT_SCAN, OPT_TYPE, OPT_DWELL, OPT_USER,
	       OPT_SELFTEST };
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "callsite", required_argument, NULL, OPT_CALLSITE },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "scan", no_argument, NULL, OPT_SCAN },
		{ "type", required_argument, NULL, OPT_TYPE },
		{ "objects", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "dwell", required_argument, NULL, OPT_DWELL },
		{ "follow", no_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "user", required_argument, NULL, OPT_USER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "self-test", no_argument, NULL, OPT_SELFTEST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch *w = calloc(1, sizeof(*w));
	struct rec *rc = calloc(1, sizeof(*rc));
	const char *cache = NULL, *callsite = NULL, *offsets = NULL;
	struct kmt_event_filter ef[4];
	char fbufs[4][300];
	struct kmt_diag d = { 0 };
	struct rec_hooks h = watch_hooks;
	char *end;
	int opt, code = EXIT_FAIL;

	if (!w || !rc) {
		free(w);
		free(rc);
		return error("out of memory");
	}
	rec_opts_defaults(&rc->o);
	w->o.dwell = 0.1;
	w->o.ring_pages = 64;
	while ((opt = getopt_long(argc, argv, "+n:d:Fp:o:b:qh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_CACHE: cache = optarg; break;
		case OPT_CALLSITE: callsite = optarg; break;
		case OPT_OFFSET: offsets = optarg; break;
		case OPT_SCAN: w->o.scan = true; break;
		case OPT_TYPE: snprintf(w->o.type, sizeof(w->o.type), "%s", optarg); break;
		case 'n':
			w->o.max_objects = strtoull(optarg, &end, 10);
			if (*end || !w->o.max_objects) {
				code = usage_error(watch_usage, "bad object count '%s'", optarg);
				goto out;
			}
			break;
		case 'd':
			if (!parse_duration(optarg, &rc->o.duration) || rc->o.duration <= 0) {
				code = usage_error(watch_usage, "bad duration '%s'", optarg);
				goto out;
			}
			break;
		case OPT_DWELL:
			if (!parse_duration(optarg, &w->o.dwell) || w->o.dwell <= 0) {
				code = usage_error(watch_usage, "bad dwell time '%s'", optarg);
				goto out;
			}
			break;
		case 'F': w->o.follow = true; break;
		case 'p':
			switch (rec_add_pids(&rc->o, optarg)) {
			case 0:
				break;
			case -ESRCH:
				code = error("-p %s: no such process", optarg);
				goto out;
			default:
				code = usage_error(watch_usage, "bad pid list '%s'", optarg);
				goto out;
			}
			break;
		case 'o': rc->o.output = optarg; break;
		case 'b':
			rc->o.buffer_kb = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || rc->o.buffer_kb < 4 || rc->o.buffer_kb > 64u << 20) {
				code = usage_error(watch_usage, "bad buffer size '%s' (KiB per CPU)", optarg);
				goto out;
			}
			break;
		case OPT_USER: rc->o.user = optarg; break;
		case 'q': rc->o.quiet = true; break;
		case OPT_SELFTEST:
			code = watch_probe(true);
			goto out;
		case 'h':
			usage_print(stdout, watch_usage);
			code = EXIT_OK;
			goto out;
		default:
			code = usage_error(watch_usage, "unknown option");
			goto out;
		}
	}
	if (optind < argc)
		rc->o.argv = argv + optind;
	if (!cache == !callsite) {
		code = usage_error(watch_usage, "say what to watch: --cache NAME or --callsite FUNC");
		goto out;
	}
	if (offsets && w->o.scan) {
		code = usage_error(watch_usage, "--offset and --scan exclude each other");
		goto out;
	}
	/* Candidates only: the recording keeps every free, whoever frees. */
	memcpy(w->o.pids, rc->o.pids, sizeof(w->o.pids));
	w->o.nr_pids = rc->o.nr_pids;
	rc->o.nr_pids = 0;
	if (w->o.follow && !rc->o.argv) {
		code = usage_error(watch_usage, "-F needs a COMMAND");
		goto out;
	}
	rc->o.status = !rc->o.quiet && isatty(STDERR_FILENO);
	if (resolve_target(&w->o.t, cache, callsite, &d) || (offsets && parse_offsets(w, offsets, &d))) {
		code = error("%s", d.msg);
		goto out;
	}
	if (!offsets)
		w->o.scan = true;
	if (w->o.type[0] && !w->btf) {
		struct kmt_btf_field f;

		w->btf = kmt_btf_open(NULL, &d);
		if (!w->btf || kmt_btf_field(w->btf, w->o.type, &f, &d)) {
			code = error("--type %s: %s", w->o.type, d.msg);
			goto out;
		}
	}
	w->nr_slots = w->o.scan || w->o.nr_offs == 1 ? KMT_HWBP_MAX_SLOTS : w->o.nr_offs;
	/* Before anything is created: a machine where they never fire gets a refusal. */
	code = watch_probe(false);
	if (code)
		goto out;
	set_events(w, rc, ef, fbufs);
	h.arg = w;
	code = rec_run(rc, &h);
out:
	kmt_btf_close(w->btf);
	free(rc->o.events_spec);
	free(rc);
	free(w);
	return code;
}

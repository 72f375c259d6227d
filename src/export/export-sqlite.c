/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export --format sqlite: one database (schema in docs/export.md). A row
 * per object goes to object_rows as each object's story ends (streaming:
 * memory stays the model's), its call sites, caches, task names and stacks
 * as ids into small tables; the view objects joins them back into names.
 * Both are made from the per-object record's columns (objcols.c).
 * The rows go in on a thread of their own, in batches (see struct sq).
 * accesses has a row per watchpoint sample; callsites, caches, processes,
 * page_orders and the rest are the report's own tables (those marked sql),
 * their names and columns from report-cols.c; meta says what the trace is.
 * One transaction, prepared statements, indexes made last.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include <kmemtrace/base.h>
#include "util/util.h"
#include "export.h"
#include "objcols.h"

/*
 * Object rows go in ROWS at a time, in one statement (a quarter fewer
 * steps of sqlite's machine per row); a row waits as its values.
 */
#define ROWS 16
#define COLS OBJCOLS_MAX		/* at most; object_rows has sq.cols */
struct row {
	sqlite3_int64 v[COLS];
	uint32_t set;			/* columns with a value (bit c); the others NULL */
};

/*
 * The analysis fills a batch of rows while the inserter thread puts the
 * ones before into the database, handed over in order (kmt_handoff): a
 * ring of BATCHES. The connection is the
 * inserter's while it has batches; the analysis waits for it to finish
 * them (sync_rows()) before its own statements: a call site or name met for
 * the first time (rare), an access, the tables at the end.
 */
#define BATCH 4096
#define BATCHES 3
/* A slot of the ring: rows, queued for the inserter thread. */
struct rows {
	struct row r[BATCH];
	int n;
};

struct sq {
	/* What the inserter reads for every row: not on a line the analysis writes. */
	sqlite3 *db;
	sqlite3_stmt *obj, *objs, *acc, *site, *name;
	struct rows *b[BATCHES];
	struct kmt_handoff *h;		/* the batches, to the inserter */
	int cols;			/* object_rows' columns (but id) */
	char apart[64];			/* (a cache line between: calloc() does not align to one) */
	/* What the analysis writes for every row (6% more time when on a line of the above: 15 paired runs). */
	uint64_t cur;			/* the batch being filled (its number) */
	int64_t objects, accesses;
	uint32_t max_stack;		/* stack ids used + 1 */
	bool running;
	pthread_t inserter;
	struct kmt_map sites;		/* call site -> its row id (1, 2, ...) */
	size_t nr_sites;
	struct kmt_intern names;	/* names: row id = number + 1 */
	char err[256];
};

/* The tables before object_rows, and those after its view (object_schema()). */
static const char schema_head[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value);\n"
	"CREATE TABLE sites (id INTEGER PRIMARY KEY, callsite TEXT, function TEXT, address INTEGER);\n"
	"CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT);\n"
	"CREATE TABLE stacks (id INTEGER PRIMARY KEY, frames TEXT);\n"
	"CREATE TABLE kinds (id INTEGER PRIMARY KEY, name TEXT);\n"
	"CREATE TABLE fates (id INTEGER PRIMARY KEY, name TEXT);\n";
static const char schema_tail[] =
	"CREATE TABLE accesses (\n"
	"  time INTEGER NOT NULL, cpu INTEGER, pid INTEGER, ip TEXT, write INTEGER NOT NULL,\n"
	"  offset INTEGER, len INTEGER, field TEXT,\n"
	"  object_ptr INTEGER, object_alloc_time INTEGER, object_callsite TEXT, object_cache TEXT,\n"
	"  object_ptr_hex TEXT);\n";

/*
 * The tables object_rows' ids point into (by the column's type) and what
 * the view objects shows of each. Every object_rows column is an INTEGER.
 */
static const struct { const char *table, *shows; } refs[] = {
	[OT_SITE] = { "sites", "callsite" }, [OT_FUNC] = { "sites", "function" },
	[OT_NAME] = { "names", "name" }, [OT_KIND] = { "kinds", "name" },
	[OT_FATE] = { "fates", "name" }, [OT_STACK] = { "stacks", "frames" },
};

/*
 * CREATE TABLE object_rows and the view objects over it, from objcols[],
 * appended to @buf at @o: a column with a value always is NOT NULL, and
 * its join an inner one (those come first). Returns the new length.
 */
static size_t object_schema(char *buf, size_t len, size_t o)
{
	const struct objcol *c;
	const char *as;
	bool first = true;
	int left;

#define CAT(...) (o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__))
#define BR(c, f) ((c)->flags & (f) ? "\n  " : " ")
	CAT("CREATE TABLE object_rows (\n  id INTEGER PRIMARY KEY,");
	for (c = objcols; c->name; c++) {
		if (!c->sql.name)
			continue;
		CAT("%s%s%s INTEGER%s", first ? "" : ",", BR(c, OBJCOL_BR_TABLE), c->sql.name,
		    c->when == W_ALWAYS ? " NOT NULL" : "");
		if (c->sql.alias)
			CAT(" REFERENCES %s", refs[c->type].table);
		first = false;
	}
	CAT(");\nCREATE VIEW objects AS SELECT o.id AS id,");
	for (c = objcols, first = true; c->name; c++) {
		if (!(as = c->sql.view ? c->sql.view : c->sql.name))
			continue;
		CAT("%s%s", first ? "" : ",", BR(c, OBJCOL_BR_VIEW));
		if (c->sql.alias)
			CAT("%c.%s AS %s", c->sql.alias, refs[c->type].shows, as);
		else
			CAT("o.%s AS %s", c->sql.name, as);
		if (c->type == OT_PTR)
			CAT(", printf('0x%%x', o.%s) AS %s_hex", c->sql.name, as);
		first = false;
	}
	CAT("\n  FROM object_rows o");
	for (left = 0; left < 2; left++)
		for (c = objcols; c->name; c++)
			if (c->sql.name && c->sql.alias && (c->when != W_ALWAYS) == left)
				CAT("%s%sJOIN %s %c ON %c.id = o.%s", BR(c, OBJCOL_BR_JOIN), left ? "LEFT " : "",
				    refs[c->type].table, c->sql.alias, c->sql.alias, c->sql.name);
	CAT(";\n");
#undef BR
#undef CAT
	return o;
}

/* The whole schema (but the indexes, made last), in @buf; NULL if it does not fit. */
static const char *schema(char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "%s", schema_head);

	o = object_schema(buf, len, o);
	o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), "%s", schema_tail);
	return o < len ? buf : NULL;
}

static const char indexes[] =
	"CREATE INDEX object_rows_site ON object_rows (alloc_site);\n"
	"CREATE INDEX object_rows_ptr ON object_rows (ptr, alloc_time);\n"
	"CREATE INDEX sites_function ON sites (function);\n"
	"CREATE INDEX accesses_object ON accesses (object_ptr, object_alloc_time);\n";

static int exec(struct export *x, const char *sql);

/* The rows of kinds or fates: the names of their ids, objcol_id_name()'s. */
static int id_names(struct export *x, const char *table, enum objcol_type t)
{
	char sql[512];
	size_t n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES ", table);
	const char *name;
	uint64_t id;

	for (id = 1; (name = objcol_id_name(t, id)) && n < sizeof(sql); id++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s(%" PRIu64 ", '%s')", id > 1 ? ", " : "",
				      id, name);
	return exec(x, sql);
}

static int exec(struct export *x, const char *sql)
{
	struct sq *s = x->priv;
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return EXIT_OK;
	error("%s: %s", x->path, msg ? msg : sqlite3_errmsg(s->db));
	sqlite3_free(msg);
	return EXIT_FAIL;
}

/* A time in the report's base (ns from the first event). */
static sqlite3_int64 rel_ns(const struct export *x, uint64_t ts)
{
	return (sqlite3_int64)(since(x->a.t0, ts));
}

static void bind_time(struct export *x, sqlite3_stmt *st, int i, uint64_t ts)
{
	sqlite3_bind_int64(st, i, rel_ns(x, ts));
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void step(struct export *x, sqlite3_stmt *st)
{
	struct sq *s = x->priv;

	if (sqlite3_step(st) != SQLITE_DONE && !x->failed) {
		x->failed = true;
		snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* The inserter's batches all in: the connection is the caller's until the next batch. */
static void sync_rows(struct sq *s)
{
	kmt_handoff_taken(s->h, kmt_handoff_given(s->h), true);
}

static void put_rows(struct export *x, sqlite3_stmt *st, const struct row *r, int n);

static void *inserter(void *arg)
{
	struct export *x = arg;
	struct sq *s = x->priv;
	uint64_t n;

	while (kmt_handoff_next(s->h, 0, &n)) {
		const struct rows *b = s->b[n % BATCHES];
		int k;

		for (k = 0; k + ROWS <= b->n; k += ROWS)
			put_rows(x, s->objs, &b->r[k], ROWS);
		for (; k < b->n; k++)
			put_rows(x, s->obj, &b->r[k], 1);
		kmt_handoff_took(s->h, 0);
	}
	return NULL;
}

/* The batch being filled to the inserter; waits for a free one to fill next. */
static void hand_over(struct sq *s)
{
	kmt_handoff_give(s->h);
	s->cur = kmt_handoff_room(s->h);
	s->b[s->cur % BATCHES]->n = 0;
}

/* Every row in, the inserter gone. */
static void stop_inserter(struct sq *s)
{
	if (!s->running)
		return;
	if (s->b[s->cur % BATCHES]->n)
		hand_over(s);
	kmt_handoff_end(s->h);
	pthread_join(s->inserter, NULL);
	s->running = false;
}

/*
 * The row id of call site @addr (@s NULL) or of the name @s, inserted at
 * the first sight (after the inserter's rows); 0 on failure (x->failed).
 */
static int64_t id_of(struct export *x, uint64_t addr, const char *s)
{
	struct sq *q = x->priv;
	char cs[256], fn[256];
	int64_t id;

	if (s) {
		size_t before = q->names.n;

		id = kmt_intern_find(&q->names, 0, s);
		if (id >= 0)
			return id + 1;
		sync_rows(q);
		id = kmt_intern_id(&q->names, 0, s);
		if (id < 0 || q->names.n == before)
			goto oom;
		sqlite3_bind_int64(q->name, 1, id + 1);
		sqlite3_bind_text(q->name, 2, s, -1, SQLITE_STATIC);
		step(x, q->name);
		return id + 1;
	}
	id = kmt_map_get(&q->sites, addr);
	if (id != KMT_MAP_NONE)
		return id;
	sync_rows(q);
	id = (int64_t)++q->nr_sites;
	if (kmt_map_put(&q->sites, addr, (uint32_t)id))
		goto oom;
	sqlite3_bind_int64(q->site, 1, id);
	sqlite3_bind_text(q->site, 2, site_name(&x->r, addr, cs, sizeof(cs)), -1, SQLITE_STATIC);
	sqlite3_bind_text(q->site, 3, site_function(&x->r, addr, fn, sizeof(fn)), -1, SQLITE_STATIC);
	sqlite3_bind_int64(q->site, 4, (sqlite3_int64)export_addr(x, addr));
	step(x, q->site);
	return id;
oom:
	x->failed = true;
	snprintf(q->err, sizeof(q->err), "out of memory");
	return 0;
}

/* The stacks used: their frames, "a+0x1;b+0x2", innermost first. */
static void stacks(struct export *x)
{
	struct sq *s = x->priv;
	sqlite3_stmt *st;
	char buf[8192], name[256];
	uint32_t id;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO stacks VALUES (?, ?)", -1, &st, NULL)) {
		x->failed = true;
		snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
		return;
	}
	for (id = 0; id < s->max_stack; id++) {
		size_t n, i, o = 0;
		const uint64_t *f = kmt_model_stack(x->a.m, id, &n);

		buf[0] = '\0';
		for (i = 0; f && i < n && o + 1 < sizeof(buf); i++)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? ";" : "",
					      site_name(&x->r, f[i], name, sizeof(name)));
		sqlite3_bind_int64(st, 1, (sqlite3_int64)id + 1);
		sqlite3_bind_text(st, 2, buf, -1, SQLITE_STATIC);
		step(x, st);
	}
	sqlite3_finalize(st);
}

/* @n rows into @st (which has room for exactly @n), one step. */
static void put_rows(struct export *x, sqlite3_stmt *st, const struct row *r, int n)
{
	struct sq *s = x->priv;
	int k, c;

	for (k = 0; k < n; k++)
		for (c = 0; c < s->cols; c++)
			if (r[k].set & (1u << c))
				sqlite3_bind_int64(st, k * s->cols + c + 1, r[k].v[c]);
	step(x, st);
}

/*
 * Column @c's value @v of @o as object_rows holds it, into @out: false for
 * NULL (an id that could not be had). A call site or name met the first
 * time waits for the inserter (id_of()).
 */
static bool sql_value(struct export *x, const struct objcol *c, const struct objval *v, sqlite3_int64 *out)
{
	struct sq *s = x->priv;
	int64_t id;

	switch (c->type) {
	case OT_PTR:
		*out = (sqlite3_int64)export_addr(x, v->u);
		return true;
	case OT_SITE: case OT_NAME:
		id = c->type == OT_SITE ? id_of(x, v->u, NULL) : id_of(x, 0, v->s);
		*out = id;
		return id > 0;
	case OT_STACK:
		*out = (sqlite3_int64)v->u + 1;
		s->max_stack = MAX(s->max_stack, (uint32_t)v->u + 1);
		return true;
	case OT_I64:
		*out = v->i;
		return true;
	default:
		*out = (sqlite3_int64)v->u;
		return true;
	}
}

static void on_object(void *arg, const struct kmt_object *o)
{
	struct export *x = arg;
	struct sq *s = x->priv;
	struct rows *b = s->b[s->cur % BATCHES];
	struct row *r = &b->r[b->n];
	const struct objcol *c;
	struct objval v;
	int k = 0;

	r->set = 0;
	for (c = objcols; c->name; c++) {
		if (!c->sql.name)
			continue;
		if (objcol_value(c, o, x->a.t0, &v) && sql_value(x, c, &v, &r->v[k]))
			r->set |= 1u << k;
		k++;
	}
	if (++b->n == BATCH)
		hand_over(s);
	s->objects++;
}

static void on_access(void *arg, const struct kmt_object *o, const struct kmt_event *ev)
{
	struct export *x = arg;
	struct sq *s = x->priv;
	sqlite3_stmt *st = s->acc;
	char ip[256], cs[256], hex[24];

	sync_rows(s);
	bind_time(x, st, 1, ev->ts);
	sqlite3_bind_int(st, 2, ev->cpu);
	sqlite3_bind_int(st, 3, ev->pid);
	bind_text(st, 4, site_name(&x->r, ev->call_site, ip, sizeof(ip)));
	sqlite3_bind_int(st, 5, !!(ev->flags & KMT_EVF_WRITE));
	sqlite3_bind_int64(st, 6, ev->offset);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)ev->bytes_req);
	if (ev->str2_len)
		sqlite3_bind_text(st, 8, ev->str2, (int)ev->str2_len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)export_addr(x, o->ptr));
	bind_time(x, st, 10, o->alloc_ts);
	bind_text(st, 11, site_name(&x->r, o->alloc_site, cs, sizeof(cs)));
	bind_text(st, 12, o->cache);
	snprintf(hex, sizeof(hex), "0x%" PRIx64, o->ptr);
	bind_text(st, 13, hex);
	step(x, st);
	s->accesses++;
}

/* "INSERT INTO object_rows (...) VALUES (?,...),..." for @n rows of @cols, in @buf. */
static const char *insert_sql(char *buf, int n, int cols)
{
	const struct objcol *c;
	size_t o;
	int k, i;

	o = (size_t)sprintf(buf, "INSERT INTO object_rows (");
	for (c = objcols, i = 0; c->name; c++)
		if (c->sql.name)
			o += (size_t)sprintf(buf + o, "%s%s", i++ ? ", " : "", c->sql.name);
	o += (size_t)sprintf(buf + o, ") VALUES ");
	for (k = 0; k < n; k++) {
		buf[o++] = k ? ',' : ' ';
		buf[o++] = '(';
		for (i = 0; i < cols; i++) {
			buf[o++] = '?';
			buf[o++] = i + 1 < cols ? ',' : ')';
		}
	}
	buf[o] = '\0';
	return buf;
}

static int begin(struct export *x)
{
	struct sq *s = x->priv;
	char sql[4096 + ROWS * (COLS * 2 + 2)];
	const struct objcol *c;
	int i, err;

	for (i = 0; i < BATCHES; i++)
		if (!(s->b[i] = malloc(sizeof(*s->b[i]))))
			return error("out of memory");
	s->b[0]->n = 0;
	for (c = objcols; c->name; c++)
		s->cols += !!c->sql.name;
	if (s->cols > COLS)
		return error("object_rows has %d columns, a row room for %d", s->cols, COLS);
	if (!(s->h = kmt_handoff_new(BATCHES, 1)))
		return error("out of memory");
	/*
	 * One thread at a time uses the connection (no mutexes on it); the
	 * sorter may use a second for the indexes (PRAGMA threads), which
	 * sqlite allows in this mode, not in SINGLETHREAD. No memory statistics.
	 */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (!schema(sql, sizeof(sql)))
		return error("%s: the schema does not fit in %zu bytes", x->path, sizeof(sql));
	kmt_owner_enter();	/* the file kmt_outfile made, opened with the same rights */
	err = sqlite3_open_v2(x->tmp, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	kmt_owner_leave();
	if (err != SQLITE_OK)
		return error("%s: %s", x->path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
	/*
	 * A new file renamed into place at the end: no journal needed to
	 * protect it. sqlite's default page cache (2 MB) and temporary files
	 * on disk, measured: a 64 MB cache and temp_store = MEMORY made the
	 * index builds 2-3x slower (the sorter), and the rows go in order.
	 */
	if (exec(x, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 65536; "
		 "PRAGMA locking_mode = EXCLUSIVE; PRAGMA threads = 2;") ||
	    exec(x, sql) || id_names(x, "kinds", OT_KIND) || id_names(x, "fates", OT_FATE) ||
	    exec(x, "BEGIN"))
		return EXIT_FAIL;
	if (sqlite3_prepare_v2(s->db, insert_sql(sql, 1, s->cols), -1, &s->obj, NULL) ||
	    sqlite3_prepare_v2(s->db, insert_sql(sql, ROWS, s->cols), -1, &s->objs, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO sites VALUES (?,?,?,?)", -1, &s->site, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO names VALUES (?,?)", -1, &s->name, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO accesses VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &s->acc,
			       NULL))
		return error("%s: %s", x->path, sqlite3_errmsg(s->db));
	if ((err = pthread_create(&s->inserter, NULL, inserter, x)))
		return error("cannot start a thread: %s", strerror(err));
	s->running = true;
	x->hooks.object = on_object;
	x->hooks.access = on_access;
	x->hooks.pages = true;
	x->hooks.arg = x;
	return EXIT_OK;
}

/* A report table as an SQL table of its name: its scalar columns, every row. */
static int table(struct export *x, const struct rtable *t)
{
	struct sq *s = x->priv;
	const struct rcol *c;
	const void **rows = NULL;
	sqlite3_stmt *st = NULL;
	char sql[4096], buf[4096];
	size_t o, n, i;
	int k, ret = EXIT_OK;

	o = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE %s (", t->name);
	for (c = t->cols, k = 0; c->name; c++) {
		const char *type = c->type == RT_PCT ? "REAL" : c->type == RT_STR || c->type == RT_NAMES ? "TEXT" :
				   c->type == RT_U64 || c->type == RT_I64 || c->type == RT_BOOL ? "INTEGER" : NULL;

		if (type)
			o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s\"%s\" %s", k++ ? ", " : "", c->name, type);
	}
	snprintf(sql + o, sizeof(sql) - o, ")");
	if (exec(x, sql))
		return EXIT_FAIL;
	o = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (", t->name);
	for (i = 0; i < (size_t)k; i++)
		o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s?", i ? "," : "");
	snprintf(sql + o, sizeof(sql) - o, ")");
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL))
		return error("%s: %s", x->path, sqlite3_errmsg(s->db));
	/* A table of events the file lacks is empty (meta's not_recorded says why), never zeros. */
	n = t->section & x->r.unrecorded ? 0 : rtable_rows(&x->r, t, &rows);
	for (i = 0; i < n; i++) {
		for (c = t->cols, k = 0; c->name; c++) {
			struct rval v;

			if (c->type != RT_PCT && c->type != RT_STR && c->type != RT_U64 && c->type != RT_I64 &&
			    c->type != RT_BOOL && c->type != RT_NAMES)
				continue;
			rcol_value(&x->r, c, rows[i], &v, buf, sizeof(buf));
			k++;
			if (c->type == RT_PCT)
				sqlite3_bind_double(st, k, v.f);
			else if (c->type == RT_STR)
				sqlite3_bind_text(st, k, v.s ? v.s : "", -1, SQLITE_TRANSIENT);
			else if (c->type == RT_NAMES)
				sqlite3_bind_text(st, k, rval_names(&v, buf, sizeof(buf)), -1, SQLITE_TRANSIENT);
			else if (c->type == RT_I64)
				sqlite3_bind_int64(st, k, v.i);
			else
				sqlite3_bind_int64(st, k, (sqlite3_int64)v.u);
		}
		step(x, st);
	}
	free(rows);
	sqlite3_finalize(st);
	return ret;
}

static int meta(struct export *x)
{
	struct sq *s = x->priv;
	const struct kmt_summary *sum = kmt_model_summary(x->a.m);
	const struct kmt_file_info *fi = kmt_file_info(x->a.f);
	char not_recorded[512];
	struct rval nr = { .names = x->r.not_recorded, .n = x->r.nr_not_recorded };
	sqlite3_stmt *st;
	const char *kv[][2] = {
		{ "file", x->r.path }, { "kernel", fi->uname ? fi->uname : "" },
		{ "clock", fi->clock ? fi->clock : "" }, { "recorder", fi->recinfo.recorder },
		{ "command", fi->recinfo.command }, { "exporter", "kmemtrace " KMT_VERSION },
		{ "times", "nanoseconds from the trace's first event (start_ts_ns in its clock)" },
		{ "not_recorded", not_recorded },
	};
	const struct { const char *k; uint64_t v; } nums[] = {
		{ "start_ts_ns", x->a.t0 }, { "span_ns", kmt_summary_span(sum) },
		{ "cpus", (uint64_t)fi->cpu_count }, { "events", sum->events },
		{ "lost_events", sum->lost_events }, { "lost_gaps_unknown", sum->lost_pages_unknown },
		{ "affected_by_loss", sum->affected_by_loss }, { "truncated_cpus", (uint64_t)sum->truncated_cpus },
		{ "damaged_gaps", sum->damaged_gaps },
		{ "partial_allocs", sum->partial_allocs }, { "partial_frees", sum->partial_frees },
		{ "filtered", sum->filtered }, { "objects", (uint64_t)s->objects },
		{ "accesses", (uint64_t)s->accesses }, { "hashed_pointers", x->r.addr.hash.on },
	};
	size_t i;

	rval_names(&nr, not_recorded, sizeof(not_recorded));
	if (sqlite3_prepare_v2(s->db, "INSERT INTO meta VALUES (?, ?)", -1, &st, NULL))
		return error("%s: %s", x->path, sqlite3_errmsg(s->db));
	for (i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_TRANSIENT);
		step(x, st);
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		sqlite3_bind_text(st, 1, nums[i].k, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)nums[i].v);
		step(x, st);
	}
	sqlite3_finalize(st);
	return EXIT_OK;
}

static int end(struct export *x)
{
	struct sq *s = x->priv;
	size_t i;

	stop_inserter(s);
	stacks(x);
	for (i = 0; report_tables[i]; i++)
		if (report_tables[i]->sql && table(x, report_tables[i]))
			return EXIT_FAIL;
	if (meta(x))
		return EXIT_FAIL;
	if (x->failed)
		return error("%s: %s", x->path, s->err);
	if (exec(x, indexes) || exec(x, "COMMIT"))
		return EXIT_FAIL;
	sqlite3_finalize(s->obj);
	sqlite3_finalize(s->objs);
	sqlite3_finalize(s->acc);
	sqlite3_finalize(s->site);
	sqlite3_finalize(s->name);
	s->obj = s->objs = s->acc = s->site = s->name = NULL;
	if (sqlite3_close(s->db) != SQLITE_OK)
		return error("%s: %s", x->path, sqlite3_errmsg(s->db));
	s->db = NULL;
	return EXIT_OK;
}

static void release(struct export *x)
{
	struct sq *s = x->priv;
	int i;

	stop_inserter(s);
	sqlite3_finalize(s->obj);
	sqlite3_finalize(s->objs);
	sqlite3_finalize(s->acc);
	sqlite3_finalize(s->site);
	sqlite3_finalize(s->name);
	if (s->db)
		sqlite3_close(s->db);
	kmt_map_release(&s->sites);
	kmt_intern_release(&s->names);
	for (i = 0; i < BATCHES; i++)
		free(s->b[i]);
	kmt_handoff_free(s->h);
}

const struct export_format export_sqlite = {
	.name = "sqlite", .ext = ".sqlite",
	.about = "a database: objects (one row each), callsites, caches, processes,\n"
		 "page_orders, misuse, accesses, meta (schema: docs/export.md)",
	.priv_size = sizeof(struct sq), .begin = begin, .end = end, .release = release,
};

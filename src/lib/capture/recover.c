/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A dead recorder's instance, moved into its spool (include/kmemtrace/
 * recover.h), the way a recorder ends its own recording:
 *
 *	tracing_on 0 -> per-CPU trace_pipe_raw -> splice() the full pages,
 *	read() the partial ones -> after the spool's cpuN -> stats -> rmdir
 *
 * (kmt_recorder with append set, started and stopped at once.) Between the
 * spool's pages and those moved there may be a gap: pages the recorder had
 * read but held in memory, or had in a pipe on their way, died with it.
 * The ring buffer counts the events read from it ("read events" in its
 * stats) and the spool's pages hold those kept; the difference is marked
 * on the first page moved, as the kernel marks events it drops (the
 * MISSED_EVENTS flag and the count after the data), so every reader,
 * trace-cmd included, sees the loss where it happened. Counting the spool
 * reads it once (it is in the page cache for the file written next), by
 * finalising's rule (kmt_page_run): a page that is not right keeps only
 * its events before the bad one, and the pages after it count.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kmemtrace/tracefile.h>
#include <kmemtrace/capture.h>
#include "base/kmt-local.h"
#include "tracefile/page-local.h"	/* kmt_page_run, KMT_RB_ */
#include "spool-local.h"

#define COUNT_CHUNK (1u << 20)	/* bytes of a spool file read at once */

struct take {
	struct kmt_spool *s;
	const struct kmt_spool_meta *m;
	struct kmt_page_layout layout;
	struct kmt_instance in;
	struct take_cpu {
		uint64_t read;		/* events the recorder read (the stats) */
		uint64_t ring_dropped;	/* what its ring buffer dropped in all (overrun, dropped events) */
		uint64_t spooled_dropped;	/* of them, counted on the recorder's pages */
		uint64_t spooled_unknown;	/* its pages flagged with no count, or not right */
		uint64_t dropped_after;	/* the rest: dropped after the recorder died, nobody reading */
		uint64_t kept;		/* of them, in the spool's pages */
		uint64_t end;		/* the spool file's whole pages, before */
		uint64_t moved, moved_end;
	} *cpu;
};

/*
 * CPU index @i's spool file counted into @run from byte @from (holes
 * skipped: a failed write freed what it had written) up to its last whole
 * page, and where that is (@end): its events, and those the kernel says
 * it dropped before them (lost; lost_unknown: pages flagged with no
 * count, or not right). A file never created has none.
 */
static int count_file(const struct take *t, int i, uint64_t from, struct kmt_page_run *run,
		      uint64_t *end, struct kmt_diag *d)
{
	uint32_t subbuf = t->m->subbuf_size;
	int fd = spool_cpu_open(t->s, KMT_SPOOL_MAIN, t->m->cpus[i], d), ret = 0;
	uint8_t *buf = NULL;
	struct stat st;
	uint64_t off;
	off_t data;

	kmt_page_run_init(run, &t->layout, subbuf);
	*end = 0;
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		ret = kmt_diag_set(d, -errno, "cannot stat CPU %d's spool file: %s", t->m->cpus[i],
				   strerror(errno));
		goto out;
	}
	*end = (uint64_t)st.st_size / subbuf * subbuf;
	off = from;
	data = from < *end ? lseek(fd, (off_t)from, SEEK_DATA) : (off_t)from;
	if (data >= 0)
		off = (uint64_t)data / subbuf * subbuf;
	else if (errno == ENXIO)
		off = *end;	/* a hole to the end */
	buf = malloc(COUNT_CHUNK);
	if (!buf) {
		ret = kmt_diag_set(d, -ENOMEM, "out of memory");
		goto out;
	}
	while (off < *end) {
		size_t n = (size_t)MIN((uint64_t)COUNT_CHUNK, *end - off);

		ret = pread_all(fd, buf, n, (off_t)off);
		if (ret) {
			kmt_diag_set(d, ret, "reading CPU %d's spool file: %s", t->m->cpus[i], strerror(-ret));
			break;
		}
		kmt_page_run_count(run, buf, n);
		off += n;
	}
out:
	free(buf);
	close(fd);
	return ret;
}

static void load_native(const uint8_t *p, unsigned int size, uint64_t *v)
{
	uint32_t v32;

	if (size == 4) {
		memcpy(&v32, p, 4);
		*v = v32;
	} else {
		memcpy(v, p, 8);
	}
}

static void store_native(uint8_t *p, unsigned int size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

/*
 * @lost events are missing before the page at @off of CPU index @i's spool
 * file: its MISSED_EVENTS flag, and the count after its data if there is
 * room (MISSED_STORED), added to a count the kernel stored there. A page
 * the kernel flagged without a count stays so (the count is unknown).
 */
static int mark_lost(const struct take *t, int i, uint64_t off, uint64_t lost, struct kmt_diag *d)
{
	const struct kmt_page_layout *pl = &t->layout;
	uint32_t subbuf = t->m->subbuf_size, room = subbuf - pl->data_offset;
	int fd = spool_cpu_open(t->s, KMT_SPOOL_MAIN, t->m->cpus[i], d), ret;
	uint64_t commit, len, before = 0;
	uint8_t *page;

	if (fd < 0)
		return fd;
	page = malloc(subbuf);
	ret = page ? pread_all(fd, page, subbuf, (off_t)off) : -ENOMEM;
	if (!ret) {
		load_native(page + pl->commit_offset, pl->commit_size, &commit);
		len = commit & KMT_RB_COMMIT_MASK;
		if (len + pl->commit_size <= room && !((commit & KMT_RB_MISSED_EVENTS) &&
							!(commit & KMT_RB_MISSED_STORED))) {
			if (commit & KMT_RB_MISSED_STORED)
				load_native(page + pl->data_offset + len, pl->commit_size, &before);
			store_native(page + pl->data_offset + len, pl->commit_size, before + lost);
			commit |= KMT_RB_MISSED_STORED;
		}
		store_native(page + pl->commit_offset, pl->commit_size, commit | KMT_RB_MISSED_EVENTS);
		ret = pwrite_all(fd, page, subbuf, (off_t)off);
	}
	if (ret)
		kmt_diag_set(d, ret, "marking the lost events in CPU %d's spool file: %s", t->m->cpus[i],
			     strerror(-ret));
	free(page);
	close(fd);
	return ret;
}

/*
 * Is instance @name @s's? Its note must name this spool: this directory
 * (compared by inode, however the path is spelt), or a place where nothing
 * is now (the spool was moved). No note, no proof: the instance may be of
 * another boot's recording whose recorder had the same pid.
 */
static bool noted_for(const struct kmt_spool *s, const char *name)
{
	char noted[4096];
	struct stat a, b;

	if (kmt_instance_noted_spool(name, noted, sizeof(noted)) < 0 || owner_stat(kmt_spool_dir(s), &a))
		return false;
	if (owner_stat(noted, &b))
		return errno == ENOENT;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Before: what each CPU's buffer says was read, what its spool file has. */
static int take_before(struct take *t, struct kmt_recover_result *res, struct kmt_diag *d)
{
	struct sbuf hp = { 0 };
	int i, ret;

	ret = spool_get(t->s, KMT_SPOOL_HEADER_PAGE, &hp, d);
	if (!ret && kmt_page_layout_parse(&t->layout, hp.buf, hp.len, d))
		ret = kmt_diag_set(d, KMT_EFORMAT, "%s: header page: %s", kmt_spool_dir(t->s), d->msg);
	sbuf_release(&hp);
	for (i = 0; !ret && i < t->m->nr_cpus; i++) {
		struct take_cpu *c = &t->cpu[i];
		struct kmt_page_run run;
		struct kmt_cpustat st;

		c->read = 0;
		if (!kmt_instance_stat(&t->in, t->m->cpus[i], &st)) {
			c->read = st.read;
			c->ring_dropped = st.overrun + st.dropped;	/* tracing is off: final */
			res->unread += st.entries;
		}
		ret = count_file(t, i, 0, &run, &c->end, d);
		c->kept = run.events;
		c->spooled_dropped = run.lost;
		c->spooled_unknown = run.lost_unknown;
		/*
		 * The recorder read until it died: what its pages do not count
		 * was dropped after (unless a page of its had no count: then
		 * which side a loss fell on cannot be told).
		 */
		if (!c->spooled_unknown && c->ring_dropped > c->spooled_dropped)
			c->dropped_after = c->ring_dropped - c->spooled_dropped;
	}
	return ret;
}

/* Every CPU's pages into the spool, as the recorder's own end does. */
static int take_pages(struct take *t, struct kmt_diag *d)
{
	struct kmt_recorder_opts ro = {
		.instance_path = t->in.path, .spool = t->s, .cpus = t->m->cpus,
		.nr_cpus = t->m->nr_cpus, .subbuf_size = t->m->subbuf_size, .append = true,
	};
	struct kmt_recorder *r = kmt_recorder_start(&ro, d);
	int ret;

	if (!r)
		return d->err ? d->err : -EIO;
	ret = kmt_recorder_stop(r, d);
	kmt_recorder_free(r);	/* trace_pipe_raw closed: the instance can go */
	return ret;
}

/*
 * The ring buffer's stats, saved, say what it knows; what died with the
 * recorder is said after them, in the file's CPUSTAT (tracefile.h).
 */
static int save_stats(struct take *t, struct kmt_diag *d)
{
	int i, ret = kmt_session_save_stats(&t->in, t->s, KMT_SPOOL_MAIN, t->m->cpus, t->m->nr_cpus, d);

	for (i = 0; !ret && i < t->m->nr_cpus; i++) {
		struct take_cpu *c = &t->cpu[i];
		struct sbuf sb = { 0 };

		if (c->read <= c->kept && !c->dropped_after)
			continue;
		ret = spool_get_stats(t->s, KMT_SPOOL_MAIN, t->m->cpus[i], &sb);
		if (!ret && c->read > c->kept)
			ret = sbuf_printf(&sb, "kmemtrace lost when the recorder died: %" PRIu64 "\n",
					  c->read - c->kept);
		if (!ret && c->dropped_after)
			ret = sbuf_printf(&sb, KMT_CPUSTAT_AFTER_DEATH ": %" PRIu64 "\n", c->dropped_after);
		if (ret)
			ret = kmt_diag_set(d, ret, "cannot add to CPU %d's stats: %s", t->m->cpus[i],
					   strerror(-ret));
		else
			ret = kmt_spool_put_stats(t->s, KMT_SPOOL_MAIN, t->m->cpus[i], sb.buf, sb.len, d);
		sbuf_release(&sb);
	}
	return ret;
}

/* After: what came, and the gaps marked where they are. */
static int take_after(struct take *t, struct kmt_recover_result *res, struct kmt_diag *d)
{
	char why[160];
	int i, ret = 0;

	for (i = 0; !ret && i < t->m->nr_cpus; i++) {
		struct take_cpu *c = &t->cpu[i];
		uint64_t lost = c->read > c->kept ? c->read - c->kept : 0;
		struct kmt_page_run run;

		ret = count_file(t, i, c->end, &run, &c->moved_end, d);
		if (ret)
			break;
		c->moved = run.events;
		res->dropped_after += c->dropped_after;
		res->taken += c->moved;
		res->lost += lost;
		if (lost && c->moved_end > c->end)
			ret = mark_lost(t, i, c->end, lost, d);
		else
			res->lost_at_end += lost;
	}
	if (!ret && res->lost_at_end) {
		struct sbuf old = { 0 };

		/* A reason given already (a full disk) stays. */
		if (!spool_get_truncated(t->s, &old) && !old.len) {
			snprintf(why, sizeof(why), "%" PRIu64 " events the recorder had read were lost "
				 "when it died", res->lost_at_end);
			ret = kmt_spool_set_truncated(t->s, why, d);
		}
		sbuf_release(&old);
	}
	return ret;
}

/* The recording's settings say when its recorder died, if its watchdog noted it (kmemtrace info). */
static void note_death(struct kmt_spool_meta *m, const struct kmt_recover_result *res)
{
	time_t t = (time_t)(res->died_ns / 1000000000ULL);
	size_t n = strlen(m->settings);
	struct tm tm;
	char when[64];

	if (!res->died_ns || !gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
		return;
	snprintf(m->settings + n, sizeof(m->settings) - n, "%srecorder died %s (its watchdog stopped the tracing)",
		 n ? "; " : "", when);
}

int kmt_recover_take(struct kmt_spool *s, const char *root, struct kmt_recover_result *res,
		     struct kmt_diag *d)
{
	const struct kmt_spool_meta *m = kmt_spool_meta(s);
	struct take t = { .s = s, .m = m };
	struct kmt_spool_meta nm;
	int ret;

	memset(res, 0, sizeof(*res));
	snprintf(res->instance, sizeof(res->instance), "%s", m->instance);
	if (!*m->instance || !m->nr_cpus || !m->subbuf_size ||
	    kmt_instance_attach(&t.in, root, m->instance))
		return 0;
	if (!kmt_instance_stale(m->instance))
		return kmt_diag_set(d, -EBUSY, "the recorder of instance %s is alive", m->instance);
	if (!noted_for(s, m->instance)) {
		res->other = true;
		return 0;
	}
	res->found = true;
	res->died_ns = kmt_instance_noted_death(m->instance);
	t.cpu = calloc((size_t)m->nr_cpus, sizeof(*t.cpu));
	if (!t.cpu)
		return kmt_diag_set(d, -ENOMEM, "out of memory");
	ret = kmt_session_tracing(&t.in, false, d);
	ret = ret ?: take_before(&t, res, d);
	ret = ret ?: take_pages(&t, d);
	ret = ret ?: take_after(&t, res, d);
	ret = ret ?: save_stats(&t, d);
	if (!ret) {
		nm = *m;
		nm.drained = (int64_t)time(NULL);
		note_death(&nm, res);
		ret = kmt_spool_set_meta(s, &nm, d);
	}
	free(t.cpu);
	if (ret)
		return ret;
	ret = kmt_instance_remove(&t.in);
	res->removed = !ret;
	if (ret)
		return kmt_diag_set(d, ret, "cannot remove tracefs instance %s: %s", t.in.path,
				    strerror(-ret));
	return 0;
}

/*
 * Instance @name of a dead recorder: stopped, counted, its events moved if
 * they can be, removed if they are or cannot be. False if it was gone.
 */
static bool stale_one(const char *root, const char *name, struct kmt_stale *st,
		      char *spool_dir, size_t len, struct kmt_diag *d)
{
	struct kmt_spool *s = NULL;
	struct kmt_instance in;
	int ret;

	if (kmt_instance_attach(&in, root, name))
		return false;
	kmt_session_tracing(&in, false, NULL);
	st->unread = kmt_instance_unread(&in);
	if (kmt_instance_noted_spool(name, spool_dir, len) > 0) {
		st->spool = spool_dir;
		s = kmt_spool_open(spool_dir, d);
		if (!s && d->err == -EBUSY) {
			st->fate = KMT_STALE_BUSY;
			return true;
		}
		if (s && strcmp(kmt_spool_meta(s)->instance, name)) {
			kmt_spool_close(s);	/* another recording's now */
			s = NULL;
		}
	}
	if (s) {
		ret = kmt_recover_take(s, root, &st->took, d);
		kmt_spool_close(s);
		if (!ret && !st->took.found)
			return false;	/* gone meanwhile */
		st->fate = st->took.removed || !ret ? KMT_STALE_MOVED : KMT_STALE_FAILED;
		st->removed = st->took.removed;
	} else {
		st->fate = st->spool ? KMT_STALE_SPOOL_GONE : KMT_STALE_NO_SPOOL;
		ret = kmt_instance_remove(&in);
		st->removed = !ret;
		if (ret)
			kmt_diag_set(d, ret, "cannot remove tracefs instance %s: %s", in.path,
				     strerror(-ret));
	}
	if (ret) {
		st->err = ret;
		st->why = d->msg;
	}
	return true;
}

int kmt_recover_stale(const char *root, void (*each)(void *arg, const struct kmt_stale *st),
		      void *arg)
{
	char (*names)[64] = calloc(64, sizeof(*names)), *spool_dir = malloc(4096);
	int n = -ENOMEM, i;

	if (names && spool_dir)
		n = kmt_instance_find_stale(root, names, 64);
	for (i = 0; i < n; i++) {
		struct kmt_stale st = { .name = names[i] };
		struct kmt_diag d = { 0 };

		if (stale_one(root, names[i], &st, spool_dir, 4096, &d) && each)
			each(arg, &st);
	}
	free(names);
	free(spool_dir);
	return n;
}

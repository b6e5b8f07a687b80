// SPDX-License-Identifier: Apache-2.0
/*
 * deobfuscate_frames.c - names obfuscated Java frames of stack_profile_frame
 * from the DeobfuscationMapping packets, as Perfetto does when the import
 * ends (heap_graph.c keeps the packets and calls this): a frame whose name
 * has a '.' belongs to the package of its mapping's /data/app/... path, to
 * "memfd" for a /memfd: mapping, else to the app of the process whose heap
 * profile allocations, perf or StackSample samples or OOME stacks reach it. A mapping of package P renames P's (and
 * memfd's) frames named "class.method" after its methods: the one name,
 * or the distinct candidates sorted and joined by " | "; when the frame
 * has a line and some methods' obfuscated line ranges hold it, those form
 * its inline chain instead (a new stack_profile_symbol set).
 */
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"
#include "trace_processor/import/profiling/profiling_int.h"

/* A Java frame under a (name, package) key. */
struct jframe {
	uint64_t key; /* name << 32 | package */
	int64_t frame;
};

struct jframes {
	struct jframe *a;
	size_t n, cap;
};

static void push(struct jframes *j, uint32_t name, uint32_t package, int64_t frame)
{
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 64;
		struct jframe *a = realloc(j->a, cap * sizeof(*a));

		if (!a)
			return;
		j->a = a;
		j->cap = cap;
	}
	j->a[j->n].key = (uint64_t)name << 32 | package;
	j->a[j->n++].frame = frame;
}

static int cmp_jframe(const void *a, const void *b)
{
	const struct jframe *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* The app package of process @upid (its app id in packages_list), or 0. */
static uint32_t process_package(struct tp_import *imp, int64_t upid)
{
	struct tp_table *proc = &imp->db->process, *pkg = &imp->db->package_list;
	int64_t appid;

	if (upid < 0 || (size_t)upid >= proc->n_rows)
		return 0;
	appid = tp_get_int(proc, PROCESS_ANDROID_APPID, (size_t)upid);
	if (appid == TP_NULL_INT)
		return 0;
	for (size_t i = 0; i < pkg->n_rows; i++) {
		if (tp_get_int(pkg, PKG_UID, i) == appid)
			return tp_get_str(pkg, PKG_PACKAGE_NAME, i);
	}
	return 0;
}

/* Files the frames of callsite @c and its ancestors still without a package
 * under the app of process @upid. */
static void guess_callsite(struct tp_import *imp, struct jframes *j, uint8_t *guess, int64_t upid,
			   int64_t c)
{
	struct tp_table *fr = &imp->db->sp_frame, *cs = &imp->db->sp_callsite;
	uint32_t package = 0;
	bool looked = false;

	for (size_t depth = 0; c != TP_NULL_INT && c >= 0 && (size_t)c < cs->n_rows &&
	     depth < cs->n_rows; depth++) {
		int64_t f = tp_get_int(cs, SP_CS_FRAME_ID, (size_t)c);

		if (f >= 0 && (size_t)f < fr->n_rows && guess[f]) {
			if (!looked) {
				package = process_package(imp, upid);
				looked = true;
			}
			if (!package)
				return;
			push(j, tp_get_str(fr, SP_FRAME_NAME, (size_t)f), package, f);
			guess[f] = 0;
		}
		c = tp_get_int(cs, SP_CS_PARENT_ID, (size_t)c);
	}
}

/* Every Java frame with its package (guessed from heap profiles if need be). */
static void java_frames(struct tp_import *imp, struct jframes *j)
{
	struct tp_table *fr = &imp->db->sp_frame, *map = &imp->db->sp_mapping;
	struct tp_table *hpa = &imp->db->heap_profile_allocation, *ps = &imp->db->perf_sample;
	struct tp_table *th = &imp->db->thread, *ss = &imp->db->ss_sample, *task = &imp->db->ss_task;
	struct tp_table *tcs = &imp->db->hg_thread_cs, *hg = &imp->db->heap_graph;
	const struct tp_strings *s = &imp->db->strings;
	uint32_t memfd = 0;
	uint8_t *guess = calloc(fr->n_rows + 1, 1);

	if (!guess)
		return;
	for (size_t f = 0; f < fr->n_rows; f++) {
		uint32_t name = tp_get_str(fr, SP_FRAME_NAME, f), package;
		const char *fn = tp_str_get(s, name), *mn = NULL;
		int64_t m = tp_get_int(fr, SP_FRAME_MAPPING, f);

		if (!fn || !strchr(fn, '.'))
			continue;
		if (m >= 0 && (size_t)m < map->n_rows)
			mn = tp_str_get(s, tp_get_str(map, SP_MAP_NAME, (size_t)m));
		package = tp_prof_package_of_location(imp, mn ? mn : "");
		if (package) {
			push(j, name, package, (int64_t)f);
		} else if (mn && strncmp(mn, "/memfd:", 7) == 0) {
			if (!memfd)
				memfd = tp_db_str(imp->db, "memfd");
			push(j, name, memfd, (int64_t)f);
		} else {
			guess[f] = 1;
		}
	}
	/* The app of the process a heap profile allocation, then a perf sample, is from. */
	for (size_t a = 0; a < hpa->n_rows; a++)
		guess_callsite(imp, j, guess, tp_get_int(hpa, HPA_UPID, a),
			       tp_get_int(hpa, HPA_CALLSITE_ID, a));
	for (size_t a = 0; a < ps->n_rows; a++) {
		int64_t utid = tp_get_int(ps, PERF_UTID, a);

		if (utid == TP_NULL_INT || utid < 0 || (size_t)utid >= th->n_rows)
			continue;
		guess_callsite(imp, j, guess, tp_get_int(th, THREAD_UPID, (size_t)utid),
			       tp_get_int(ps, PERF_CALLSITE_ID, a));
	}
	/* Then a StackSample's (by its task context), then an OOME stack's. */
	for (size_t a = 0; a < ss->n_rows; a++) {
		int64_t tc = tp_get_int(ss, SS_TASK_CONTEXT_ID, a);

		if (tc == TP_NULL_INT || tc < 0 || (size_t)tc >= task->n_rows)
			continue;
		guess_callsite(imp, j, guess, tp_get_int(task, SS_TASK_UPID, (size_t)tc),
			       tp_get_int(ss, SS_CALLSITE_ID, a));
	}
	for (size_t a = 0; a < tcs->n_rows; a++) {
		int64_t g = tp_get_int(tcs, HG_TCS_HEAP_GRAPH_ID, a);

		if (g == TP_NULL_INT || g < 0 || (size_t)g >= hg->n_rows)
			continue;
		guess_callsite(imp, j, guess, tp_get_int(hg, HG_UPID, (size_t)g),
			       tp_get_int(tcs, HG_TCS_CALLSITE_ID, a));
	}
	free(guess);
	sort_n(j->a, j->n, sizeof(*j->a), cmp_jframe);
}

/* A method's candidate names ("class.method" -> deobfuscated), with the
 * obfuscated lines it covers and its source line (-1: not given), in
 * mapping order (@idx). */
struct method {
	uint32_t obf, deobf;
	int64_t line_start, line_end, source_line;
	size_t idx;
};

static int cmp_method(const void *a, const void *b)
{
	const struct method *x = a, *y = b;

	if (x->obf != y->obf)
		return x->obf < y->obf ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The first line number among the symbols of @frame's symbol set, or -1. */
static int64_t frame_line(struct tp_import *imp, int64_t frame)
{
	struct tp_table *fr = &imp->db->sp_frame, *sym = &imp->db->sp_symbol;
	int64_t set = tp_get_int(fr, SP_FRAME_SYMBOL_SET_ID, (size_t)frame);

	if (set == TP_NULL_INT || set < 0)
		return -1;
	for (size_t r = (size_t)set; r < sym->n_rows; r++) {
		int64_t line;

		if (tp_get_int(sym, SP_SYM_SYMBOL_SET_ID, r) != set)
			break;
		line = tp_get_int(sym, SP_SYM_LINE_NUMBER, r);
		if (line != TP_NULL_INT)
			return line;
	}
	return -1;
}

/*
 * R8 retrace with positions: the methods of @m[0..n) whose obfuscated
 * lines hold @frame's line form its inline chain (outermost last): a new
 * symbol set with one row each (inlined but the last), and the frame
 * takes the last one's name. Return: false if there is no such chain.
 */
static bool inline_chain(struct tp_import *imp, int64_t frame, const struct method *m, size_t n)
{
	struct tp_table *fr = &imp->db->sp_frame, *sym = &imp->db->sp_symbol;
	int64_t line = frame_line(imp, frame), set = (int64_t)sym->n_rows;
	size_t last = n, count = 0;

	if (line < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((m[i].line_start < 0 || line >= m[i].line_start) &&
		    (m[i].line_end < 0 || line <= m[i].line_end))
			count++;
	if (!count)
		return false;
	for (size_t i = 0, k = 0; i < n; i++) {
		int64_t row;

		if (!((m[i].line_start < 0 || line >= m[i].line_start) &&
		      (m[i].line_end < 0 || line <= m[i].line_end)))
			continue;
		row = tp_table_append(sym);
		if (row < 0)
			return true;
		tp_set_int(sym, SP_SYM_SYMBOL_SET_ID, (size_t)row, set);
		tp_set_str(sym, SP_SYM_NAME, (size_t)row, m[i].deobf);
		if (m[i].source_line >= 0)
			tp_set_int(sym, SP_SYM_LINE_NUMBER, (size_t)row, m[i].source_line);
		tp_set_int(sym, SP_SYM_INLINED, (size_t)row, ++k < count);
		last = i;
	}
	tp_set_int(fr, SP_FRAME_SYMBOL_SET_ID, (size_t)frame, set);
	tp_set_str(fr, SP_FRAME_DEOBFUSCATED_NAME, (size_t)frame, m[last].deobf);
	return true;
}

static uint32_t joined(struct tp_import *imp, const char *cls, size_t cls_len, const char *m,
		       size_t m_len)
{
	char *buf = malloc(cls_len + 1 + m_len + 1);
	uint32_t id;

	if (!buf)
		return 0;
	memcpy(buf, cls, cls_len);
	buf[cls_len] = '.';
	memcpy(buf + cls_len + 1, m, m_len);
	id = tp_str_intern(&imp->db->strings, buf, cls_len + 1 + m_len);
	free(buf);
	return id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sets the deobfuscated name of the frames of (@obf, @package) from @m[0..n). */
static void rename_frames(struct tp_import *imp, const struct jframes *j, uint32_t obf,
			  uint32_t package, const struct method *m, size_t n)
{
	struct tp_table *fr = &imp->db->sp_frame;
	const char **names = malloc(n * sizeof(*names));
	uint64_t key = (uint64_t)obf << 32 | package;
	size_t lo = 0, hi = j->n, k = 0, len = 0;
	uint32_t name;
	char *buf;

	if (!names)
		return;
	for (size_t i = 0; i < n; i++)
		names[i] = tp_str_get(&imp->db->strings, m[i].deobf);
	sort_n(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(names[i], names[i - 1]) == 0)
			continue;
		names[k++] = names[i];
		len += strlen(names[i]) + 3;
	}
	buf = malloc(len + 1);
	if (!buf) {
		free(names);
		return;
	}
	len = 0;
	for (size_t i = 0; i < k; i++) {
		if (i) {
			memcpy(buf + len, " | ", 3);
			len += 3;
		}
		memcpy(buf + len, names[i], strlen(names[i]));
		len += strlen(names[i]);
	}
	name = tp_str_intern(&imp->db->strings, buf, len);
	free(buf);
	free(names);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (j->a[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < j->n && j->a[lo].key == key; lo++)
		if (!inline_chain(imp, j->a[lo].frame, m, n))
			tp_set_str(fr, SP_FRAME_DEOBFUSCATED_NAME, (size_t)j->a[lo].frame, name);
}

static void one_mapping(struct tp_import *imp, const struct jframes *j, const uint8_t *data,
			size_t len)
{
	struct pz_reader r, rc, rm;
	struct pz_field f, c, m;
	struct method *ms = NULL;
	size_t n = 0, cap = 0;
	uint32_t package = 0, memfd;
	bool has_package = false;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == PB_DEOBFUSCATION_MAPPING__PACKAGE_NAME && f.wire_type == PZ_WIRE_LEN &&
		    f.size) {
			has_package = true;
			package = tp_str_find(&imp->db->strings, (const char *)f.data, f.size);
		}
	}
	memfd = tp_str_find(&imp->db->strings, "memfd", 5);
	if (!has_package || (!package && !memfd))
		return;
	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0) {
		struct pz_field cobf = {0}, cdeobf = {0};

		if (f.id != PB_DEOBFUSCATION_MAPPING__OBFUSCATED_CLASSES || f.wire_type != PZ_WIRE_LEN)
			continue;
		pz_reader_init(&rc, f.data, f.size);
		while (pz_reader_next(&rc, &c) > 0) {
			if (c.id == PB_OBFUSCATED_CLASS__OBFUSCATED_NAME && c.wire_type == PZ_WIRE_LEN)
				cobf = c;
			else if (c.id == PB_OBFUSCATED_CLASS__DEOBFUSCATED_NAME &&
				 c.wire_type == PZ_WIRE_LEN)
				cdeobf = c;
		}
		pz_reader_init(&rc, f.data, f.size);
		while (pz_reader_next(&rc, &c) > 0) {
			struct pz_field mobf = {0}, mdeobf = {0};
			struct method me = {0, 0, -1, -1, -1, n};

			if (c.id != PB_OBFUSCATED_CLASS__OBFUSCATED_METHODS || c.wire_type != PZ_WIRE_LEN)
				continue;
			pz_reader_init(&rm, c.data, c.size);
			while (pz_reader_next(&rm, &m) > 0) {
				if (m.id == PB_OBFUSCATED_MEMBER__OBFUSCATED_NAME &&
				    m.wire_type == PZ_WIRE_LEN)
					mobf = m;
				else if (m.id == PB_OBFUSCATED_MEMBER__DEOBFUSCATED_NAME &&
					 m.wire_type == PZ_WIRE_LEN)
					mdeobf = m;
				else if (m.id == PB_OBFUSCATED_MEMBER__OBFUSCATED_LINE_START &&
					 m.wire_type == PZ_WIRE_VARINT)
					me.line_start = (uint32_t)m.value;
				else if (m.id == PB_OBFUSCATED_MEMBER__OBFUSCATED_LINE_END &&
					 m.wire_type == PZ_WIRE_VARINT)
					me.line_end = (uint32_t)m.value;
				else if (m.id == PB_OBFUSCATED_MEMBER__SOURCE_LINE_START &&
					 m.wire_type == PZ_WIRE_VARINT)
					me.source_line = (uint32_t)m.value;
			}
			me.obf = joined(imp, (const char *)cobf.data, cobf.size, (const char *)mobf.data,
					mobf.size);
			if (mdeobf.size && memchr(mdeobf.data, '.', mdeobf.size))
				me.deobf = tp_str_intern(&imp->db->strings, (const char *)mdeobf.data,
							 mdeobf.size);
			else
				me.deobf = joined(imp, (const char *)cdeobf.data, cdeobf.size,
						  (const char *)mdeobf.data, mdeobf.size);
			if (!me.obf || !me.deobf)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 32;
				struct method *a = realloc(ms, nc * sizeof(*a));

				if (!a)
					break;
				ms = a;
				cap = nc;
			}
			ms[n++] = me;
		}
	}
	sort_n(ms, n, sizeof(*ms), cmp_method);
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;

		while (e < n && ms[e].obf == ms[i].obf)
			e++;
		if (package)
			rename_frames(imp, j, ms[i].obf, package, ms + i, e - i);
		if (memfd)
			rename_frames(imp, j, ms[i].obf, memfd, ms + i, e - i);
		i = e;
	}
	free(ms);
}

void tp_prof_deobfuscate_frames(struct tp_import *imp, const uint8_t *maps, size_t len)
{
	struct jframes j = {0};

	if (!len)
		return;
	java_frames(imp, &j);
	for (size_t off = 0; off + 4 <= len;) {
		uint32_t n;

		memcpy(&n, maps + off, 4);
		if (off + 4 + n > len)
			break;
		one_mapping(imp, &j, maps + off + 4, n);
		off += 4 + n;
	}
	free(j.a);
}

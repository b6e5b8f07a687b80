// SPDX-License-Identifier: Apache-2.0
/*
 * unwind.c - libdw unwinding and symbolization (see unwind.h). One Dwfl
 * per process, attached once with callbacks that serve the current
 * sample: registers from the sample, stack words from its copy, other
 * words from the ELF file image of the module holding them.
 */
#include "perf/unwind/unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/buf.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "perf/unwind/cfi_rule.h"
#include "perf/unwind/debug_file.h"
#include "perf/unwind/fp_walk.h"
#include "perf/unwind/mmap_log.h"
#include "perf/unwind/symtab.h"

/* A pc outside every module rereads the maps at most this often; when
 * rereading does not help (JIT code, anonymous memory) the wait doubles. */
#define UNWIND_REPARSE_MIN_NS 200000000ull
#define UNWIND_REPARSE_MAX_NS 10000000000ull
/* CFI rules and frame symbols cached (pc -> packed rule, pc -> module and
 * function; per process) across all processes, ~32 B each; past this
 * every cache starts over. */
#define UNWIND_MAX_RULES 262144u

struct pc_sym {
	const struct unwind_module *module; /* NULL: in no module */
	const char *function;
};

struct uproc {
	uint32_t pid;
	Dwfl *dwfl;
	bool attached;
	uint64_t last_use;
	uint64_t last_report_ns;
	uint64_t reparse_wait_ns;
	uint64_t forced_ns; /* unwinder_reparse_pc() last reread then */
	/* Packed CFI rule (or CFI_RULE_NONE) per lookup address; valid while
	 * the module list is unchanged, so every report clears it. */
	struct hmap rules;
	/* A frame's module and function per looked-up pc (an index into
	 * syms_v), with the same lifetime as the rules: libdw's module search
	 * and the symbol table's were most of a heapprofd unwind. */
	struct hmap syms;
	struct pc_sym *syms_v;
	size_t syms_n, syms_cap;
};

struct unwinder {
	struct hmap procs; /* pid -> struct uproc * */
	struct symtab_cache symtabs;
	struct mmap_log log;      /* mappings from the kernel's MMAP2 records */
	struct buf maps_text;     /* a logged process's maps, for libdwfl */
	uint64_t tick;
	struct unwind_stats stats;
	/* The sample being unwound, for the Dwfl callbacks. */
	const struct perf_sample *cur;
	bool mem_error;
	uint64_t read_end;  /* one past the highest stack byte the unwind read */
	uint64_t stack_top; /* read_end of a complete DWARF unwind, else 0 */
	bool past_copy;     /* the unwind wanted stack above the copy */
	uint64_t pcs[UNWIND_MAX_FRAMES];
	size_t n_pcs;
	size_t n_rules; /* cached CFI rules, all processes */
	bool crosscheck; /* tests: unwind with libdw too and compare */
	uint64_t check_pcs[UNWIND_MAX_FRAMES];
};

/*
 * Separate debuginfo (/usr/lib/debug) is looked up only while a module's
 * symbols are read, which happens once per ELF (the table is cached by
 * build id). Unwinding needs .eh_frame only; were libdw allowed to fall back
 * to a debug file's .debug_frame, every new process would inflate the
 * compressed DWARF of its ld.so and libc (milliseconds each). The lookup is
 * local (debug_file.h): libdw's standard one loads its debuginfod client
 * whenever a module has no debug file, ~25 libraries and 20-40 ms of CPU
 * just as the first samples of a session are unwound.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct unwind_module *m = *userdata;

	if (!m || !m->reading_symbols)
		return -1;
	return debug_file_find(mod, userdata, modname, base, file_name, debuglink_file,
			       debuglink_crc, debuginfo_file_name);
}

/*
 * Where a section of a relocatable object (ET_REL: compilers, linkers and
 * JITs map .o files) sits in the process. libdw asks before it reads such
 * a module's symbols or ELF, and calls this without checking for NULL.
 * The object is mapped whole from offset 0 (what the maps report as one
 * module), so a section is at the module's base plus its file offset.
 */
static int section_address(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *secname, GElf_Word shndx,
			   const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)secname;
	(void)shndx;
	*addr = shdr->sh_type == SHT_NOBITS ? (Dwarf_Addr)-1 : base + shdr->sh_offset;
	return 0;
}

static const Dwfl_Callbacks k_dwfl_cbs = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = section_address,
};

/* Forgets @p's cached CFI rules. */
static void rules_clear(struct unwinder *u, struct uproc *p)
{
	u->n_rules -= hmap_len(&p->rules) + hmap_len(&p->syms);
	hmap_clear(&p->rules);
	hmap_clear(&p->syms);
	p->syms_n = 0;
}

/* Room for one more cached rule or symbol (past the limit every process's
 * caches start over). */
static void cache_room(struct unwinder *u)
{
	struct hmap_iter it;
	uint64_t key, val;

	if (u->n_rules < UNWIND_MAX_RULES)
		return;
	hmap_iter_init(&it, &u->procs);
	while (hmap_iter_next(&it, &key, &val))
		rules_clear(u, (struct uproc *)(uintptr_t)val);
}

/* Remembers @pc's frame symbols in @p (nothing on ENOMEM). */
static void sym_cache_put(struct unwinder *u, struct uproc *p, uint64_t pc,
			  const struct unwind_module *m, const char *function)
{
	cache_room(u);
	if (p->syms_n == p->syms_cap) {
		size_t cap = p->syms_cap ? 2 * p->syms_cap : 64;
		struct pc_sym *v = realloc(p->syms_v, cap * sizeof(*v));

		if (!v)
			return;
		p->syms_v = v;
		p->syms_cap = cap;
	}
	p->syms_v[p->syms_n].module = m;
	p->syms_v[p->syms_n].function = function;
	if (hmap_put(&p->syms, pc, p->syms_n) == 1) {
		p->syms_n++;
		u->n_rules++;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------- registers ---- */

#if defined(__x86_64__)
/* Sample order (perf_regs.h bits 0-8, 16-23): ax bx cx dx si di bp sp ip
 * r8..r15. DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip. */
static const uint8_t k_dwarf_from_sample[17] = {0, 3, 2, 1, 4, 5, 6, 7, 9,
						10, 11, 12, 13, 14, 15, 16, 8};
enum { REG_SAMPLE_IP = 8, REG_SAMPLE_SP = PERF_SAMPLE_REG_SP, REG_SAMPLE_FP = 6, N_DWARF_REGS = 17 };
#define UNWIND_HAS_ARCH 1
#else
#define UNWIND_HAS_ARCH 0
#endif

/* -------------------------------------------------- dwfl callbacks ---- */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->cur->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	(void)dwfl;
	*thread_argp = u;
	return tid == (pid_t)u->cur->tid;
}

/* A word of a module's file image, for reads outside the stack copy. */
static bool read_from_elf(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	GElf_Addr bias;
	size_t n_ph, i, raw_len;
	Elf *elf;
	char *raw;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || elf_getphdrnum(elf, &n_ph) != 0)
		return false;
	raw = elf_rawfile(elf, &raw_len);
	if (!raw)
		return false;
	for (i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		uint64_t a = addr - bias, off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (a < ph.p_vaddr || a - ph.p_vaddr + 8 > ph.p_filesz)
			continue;
		off = ph.p_offset + (a - ph.p_vaddr);
		if (off > raw_len || raw_len - off < 8)
			return false;
		memcpy(out, raw + off, 8);
		return true;
	}
	return false;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	const struct perf_sample *s = u->cur;
#if UNWIND_HAS_ARCH
	uint64_t sp = s->regs[REG_SAMPLE_SP];

	if (addr >= sp && addr - sp <= s->stack_bytes && s->stack_bytes - (addr - sp) >= 8) {
		memcpy(result, s->stack + (addr - sp), 8);
		if (addr + 8 > u->read_end)
			u->read_end = addr + 8;
		return true;
	}
#else
	(void)s;
#endif
	if (read_from_elf(dwfl, addr, result))
		return true;
#if UNWIND_HAS_ARCH
	/* Just above the copy (a stack address, not a wild one): cut short. */
	if (addr >= sp && addr - sp < (1ull << 20))
		u->past_copy = true;
#endif
	u->mem_error = true;
	return false;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
#if UNWIND_HAS_ARCH
	struct unwinder *u = arg;
	Dwarf_Word regs[N_DWARF_REGS];
	size_t i;

	for (i = 0; i < N_DWARF_REGS; i++)
		regs[i] = u->cur->regs[k_dwarf_from_sample[i]];
	if (!dwfl_thread_state_registers(thread, 0, N_DWARF_REGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->cur->regs[REG_SAMPLE_IP]);
	return true;
#else
	(void)thread;
	(void)arg;
	return false;
#endif
}

static const Dwfl_Thread_Callbacks k_thread_cbs = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* --------------------------------------------------------- modules ---- */

static int free_module_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	struct unwind_module *m = *userdata;
	struct unwinder *u = arg;

	(void)mod;
	(void)name;
	(void)start;
	if (m) {
		symtab_cache_put(&u->symtabs, m->tab);
		free(m->path);
		free(m);
		*userdata = NULL;
	}
	return DWARF_CB_OK;
}

static void proc_drop_dwfl(struct unwinder *u, struct uproc *p)
{
	if (!p->dwfl)
		return;
	dwfl_getmodules(p->dwfl, free_module_cb, u, 0);
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
}

static int count_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
			   Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)userdata;
	(void)name;
	(void)start;
	++*(size_t *)arg;
	return DWARF_CB_OK;
}

/* Builds @p's module list from the mappings the kernel reported for it
 * (the process is gone, or a zombie whose maps are empty). */
static int report_from_log(struct unwinder *u, struct uproc *p)
{
	FILE *f;
	int rc;

	proc_drop_dwfl(u, p);
	rules_clear(u, p);
	if (mmap_log_maps_text(&u->log, p->pid, &u->maps_text) < 0)
		return -ESRCH;
	f = fmemopen(u->maps_text.data, u->maps_text.len, "r");
	if (!f)
		return -ENOMEM;
	p->dwfl = dwfl_begin(&k_dwfl_cbs);
	if (!p->dwfl) {
		fclose(f);
		return -ENOMEM;
	}
	rc = dwfl_linux_proc_maps_report(p->dwfl, f);
	fclose(f);
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0 || rc != 0) {
		proc_drop_dwfl(u, p);
		return -ESRCH;
	}
	p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &k_thread_cbs, u);
	u->stats.maps_from_records++;
	return 0;
}

/* Builds @p's module list from /proc/<pid>/maps, or adds to it: modules
 * already known keep what libdw loaded for them (CFI, DWARF, symbols).
 * Without /proc (the process exited), from the kernel's records. */
static int proc_report(struct unwinder *u, struct uproc *p)
{
	size_t n_mods = 0;
	int rc;

	p->last_report_ns = now_ns();
	rules_clear(u, p);
	if (p->dwfl && p->attached) {
		dwfl_report_begin_add(p->dwfl);
		rc = dwfl_linux_proc_report(p->dwfl, (pid_t)p->pid);
		if (dwfl_report_end(p->dwfl, NULL, NULL) == 0 && rc == 0) {
			u->stats.maps_reparsed++;
			return 0;
		}
	}
	/* First time, or the maps changed too much to add to (an exec). */
	proc_drop_dwfl(u, p);
	p->dwfl = dwfl_begin(&k_dwfl_cbs);
	if (!p->dwfl)
		return -ENOMEM;
	rc = dwfl_linux_proc_report(p->dwfl, (pid_t)p->pid);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (rc == 0)
		dwfl_getmodules(p->dwfl, count_module_cb, &n_mods, 0);
	if (rc != 0 || n_mods == 0)
		return report_from_log(u, p);
	p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &k_thread_cbs, u);
	u->stats.maps_reparsed++;
	return 0;
}

/* The function table of @mod's ELF: from the cache, or read once from
 * .symtab (else .dynsym, plus MiniDebugInfo) with ELF addresses. NULL when
 * memory runs out. */
static struct symtab *module_symtab(struct unwinder *u, Dwfl_Module *mod,
				    const struct unwind_module *m)
{
	uint64_t key = m->build_id_len ? fnv1a64(m->build_id, m->build_id_len)
				       : hash_mix64(fnv1a64(m->path, strlen(m->path)));
	struct symtab *t = symtab_cache_get(&u->symtabs, key);
	int n, i;

	if (t)
		return t;
	t = symtab_cache_create(&u->symtabs, key);
	if (!t)
		return NULL;
	u->stats.symtabs_loaded++;
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		if (symtab_add(t, addr - m->bias, sym.st_size, name) < 0)
			break;
	}
	symtab_finish(t);
	return t;
}

/* Our description of @mod, made on first use and kept with the module. */
static const struct unwind_module *module_info(struct unwinder *u, Dwfl_Module *mod)
{
	void **userdata;
	Dwarf_Addr start, end;
	const char *name, *mainfile;
	struct unwind_module *m;
	const unsigned char *bits;
	GElf_Addr vaddr, bias = 0;
	int n;

	name = dwfl_module_info(mod, &userdata, &start, &end, NULL, NULL, &mainfile, NULL);
	if (*userdata)
		return *userdata;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	/* libdwfl calls the vdso "[vdso: PID]"; the kernel and upstream say "[vdso]". */
	if (name && !strncmp(name, "[vdso", 5))
		name = "[vdso]";
	m->path = strdup(name ? name : (mainfile ? mainfile : ""));
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->start = start;
	m->end = end;
	if (dwfl_module_getelf(mod, &bias))
		m->bias = bias;
	else
		m->bias = start;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && (size_t)n <= sizeof(m->build_id)) {
		memcpy(m->build_id, bits, (size_t)n);
		m->build_id_len = (uint32_t)n;
	}
	m->key_hash = hash_bytes64(m->path, strlen(m->path), m->start) ^
		      hash_bytes64(m->build_id, m->build_id_len, 7);
	/* Published first: find_debuginfo() reads the flag through it. */
	*userdata = m;
	m->reading_symbols = true;
	m->tab = module_symtab(u, mod, m);
	m->reading_symbols = false;
	return m;
}

/* Symbolizes pcs[0..n) of @p into @out (pcs after the first are return
 * addresses: looked up one byte back, inside the call). */
static void symbolize(struct unwinder *u, struct uproc *p, const uint64_t *pcs, size_t n,
		      struct unwind_result *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct unwind_frame *f = &out->frames[i];
		uint64_t pc = pcs[i] - (i > 0 && pcs[i] > 0 ? 1 : 0), idx;
		Dwfl_Module *mod;

		f->pc = pc;
		f->rel_pc = pc;
		f->function = NULL;
		f->module = NULL;
		if (!p->dwfl)
			continue;
		if (hmap_get(&p->syms, pc, &idx)) {
			f->module = p->syms_v[idx].module;
			f->function = p->syms_v[idx].function;
			if (f->module)
				f->rel_pc = pc - f->module->bias;
			continue;
		}
		mod = dwfl_addrmodule(p->dwfl, pc);
		if (mod) {
			f->module = module_info(u, mod);
			if (!f->module)
				continue; /* out of memory: not cached */
			f->rel_pc = pc - f->module->bias;
			f->function = f->module->tab ? symtab_lookup(f->module->tab, f->rel_pc) : NULL;
		}
		sym_cache_put(u, p, pc, f->module, f->function);
	}
	out->n = n;
}

/* --------------------------------------------------------- process ---- */

static bool reparse_due(const struct uproc *p)
{
	return now_ns() - p->last_report_ns > (p->reparse_wait_ns ? p->reparse_wait_ns
								   : UNWIND_REPARSE_MIN_NS);
}

/* Rereads @p's maps because @pc was in none of its modules. */
static void reparse_for(struct unwinder *u, struct uproc *p, uint64_t pc)
{
	proc_report(u, p);
	if (p->dwfl && dwfl_addrmodule(p->dwfl, pc)) {
		p->reparse_wait_ns = 0;
		return;
	}
	p->reparse_wait_ns = p->reparse_wait_ns ? p->reparse_wait_ns * 2 : 2 * UNWIND_REPARSE_MIN_NS;
	if (p->reparse_wait_ns > UNWIND_REPARSE_MAX_NS)
		p->reparse_wait_ns = UNWIND_REPARSE_MAX_NS;
}

static void proc_destroy(struct unwinder *u, struct uproc *p)
{
	if (!p)
		return;
	proc_drop_dwfl(u, p);
	rules_clear(u, p);
	hmap_fini(&p->rules);
	hmap_fini(&p->syms);
	free(p->syms_v);
	free(p);
}

static void evict_one(struct unwinder *u)
{
	struct hmap_iter it;
	uint64_t key, val, best_key = 0, best_use = UINT64_MAX;
	void *best = NULL;

	hmap_iter_init(&it, &u->procs);
	while (hmap_iter_next(&it, &key, &val)) {
		struct uproc *p = (struct uproc *)(uintptr_t)val;

		if (p->last_use < best_use) {
			best_use = p->last_use;
			best_key = key;
			best = p;
		}
	}
	if (best) {
		hmap_del(&u->procs, best_key, NULL);
		proc_destroy(u, best);
		u->stats.procs_evicted++;
	}
}

static struct uproc *proc_get(struct unwinder *u, uint32_t pid)
{
	struct uproc *p;
	uint64_t v;

	if (hmap_get(&u->procs, pid, &v)) {
		p = (struct uproc *)(uintptr_t)v;
		p->last_use = ++u->tick;
		return p;
	}
	if (u->procs.len >= UNWIND_MAX_PROCS)
		evict_one(u);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->last_use = ++u->tick;
	hmap_init(&p->rules);
	hmap_init(&p->syms);
	if (hmap_put(&u->procs, pid, (uint64_t)(uintptr_t)p) < 0) {
		free(p);
		return NULL;
	}
	u->stats.procs_created++;
	proc_report(u, p);
	return p;
}

/* ---------------------------------------------------------- unwind ---- */

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->n_pcs == UNWIND_MAX_FRAMES)
		return DWARF_CB_ABORT;
	/* Return addresses stay as they are: symbolize() moves them into the
	 * call (libdw says which frames are activations; only the first is). */
	(void)activation;
	u->pcs[u->n_pcs++] = pc;
	return DWARF_CB_OK;
}

static enum unwind_error fp_unwind(struct unwinder *u, const struct perf_sample *s)
{
#if UNWIND_HAS_ARCH
	enum fp_walk_end end;

	u->n_pcs = fp_walk(s->regs[REG_SAMPLE_IP], s->regs[REG_SAMPLE_FP], s->regs[REG_SAMPLE_SP],
			   s->stack, (size_t)s->stack_bytes, u->pcs, UNWIND_MAX_FRAMES, &end);
	/* A chain leaving the copied stack or turning back is where frame
	 * pointers end (code built without them, the stack's outermost frame):
	 * as upstream's frame-pointer unwinder, that is no error. */
	return end == FP_WALK_MAX_FRAMES ? UNWIND_ERR_MAX_FRAMES_EXCEEDED : UNWIND_ERR_NONE;
#else
	(void)s;
	u->n_pcs = 0;
	return UNWIND_ERR_BAD_ARCH;
#endif
}

#if UNWIND_HAS_ARCH
/* The packed CFI rule for lookup address @addr of @p, cached. */
static uint64_t rule_for(struct unwinder *u, struct uproc *p, uint64_t addr)
{
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	uint64_t rule;

	if (hmap_get(&p->rules, addr, &rule))
		return rule;
	mod = dwfl_addrmodule(p->dwfl, addr);
	cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	rule = cfi ? cfi_rule_read(cfi, addr - bias) : CFI_RULE_NONE;
	cache_room(u);
	/* On ENOMEM the next sample asks libdw again. */
	if (hmap_put(&p->rules, addr, rule) == 1)
		u->n_rules++;
	return rule;
}

/* Unwinds @s with cached rules into u->pcs, as libdw would. False when a
 * frame needs more than a packed rule (libdw then unwinds the sample). */
static bool fast_unwind(struct unwinder *u, struct uproc *p, const struct perf_sample *s)
{
	struct cfi_regs r = {
		.pc = s->regs[REG_SAMPLE_IP],
		.sp = s->regs[REG_SAMPLE_SP],
		.bp = s->regs[REG_SAMPLE_FP],
		.bp_known = true,
		.read_end = s->regs[REG_SAMPLE_SP],
	};

	u->n_pcs = 0;
	for (;;) {
		/* A return address is looked up inside its call. */
		uint64_t rule = rule_for(u, p, r.pc - (u->n_pcs ? 1 : 0));

		if (u->n_pcs == UNWIND_MAX_FRAMES || rule == CFI_RULE_NONE)
			return false;
		u->pcs[u->n_pcs++] = r.pc;
		switch (cfi_rule_step(rule, &r, s->stack, (size_t)s->stack_bytes,
				      s->regs[REG_SAMPLE_SP])) {
		case CFI_STEP_END:
			u->stack_top = r.read_end;
			return true;
		case CFI_STEP_OK:
			if (r.pc == 0)
				return false;
			break;
		default:
			u->past_copy |= r.past_copy;
			return false;
		}
	}
}
#endif

static enum unwind_error libdw_unwind(struct unwinder *u, struct uproc *p,
				      const struct perf_sample *s)
{
	int rc;

	u->n_pcs = 0;
	u->mem_error = false;
#if UNWIND_HAS_ARCH
	u->read_end = s->regs[REG_SAMPLE_SP];
#endif
	if (!p->attached)
		return UNWIND_ERR_INVALID_ELF;
	rc = dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, frame_cb, u);
	if (rc == 0) {
		u->stack_top = u->read_end;
		return UNWIND_ERR_NONE;
	}
	if (u->n_pcs == UNWIND_MAX_FRAMES)
		return UNWIND_ERR_MAX_FRAMES_EXCEEDED;
	return u->mem_error ? UNWIND_ERR_MEMORY_INVALID : UNWIND_ERR_UNWIND_INFO;
}

#if UNWIND_HAS_ARCH
/* Tests: unwinds @s with libdw after the cached rules did, counts and
 * reports a difference, and keeps libdw's answer. */
static enum unwind_error crosscheck(struct unwinder *u, struct uproc *p,
				    const struct perf_sample *s)
{
	size_t n = u->n_pcs, i;
	enum unwind_error err;
	uint64_t top = u->stack_top;

	memcpy(u->check_pcs, u->pcs, n * sizeof(u->pcs[0]));
	err = libdw_unwind(u, p, s);
	/* libdw reads no higher than the rules did (differences are reported). */
	u->stack_top = top;
	u->stats.crosscheck_compared++;
	if (err == UNWIND_ERR_NONE && u->n_pcs == n &&
	    !memcmp(u->check_pcs, u->pcs, n * sizeof(u->pcs[0])))
		return err;
	if (++u->stats.crosscheck_differ <= 5) {
		fprintf(stderr, "unwind crosscheck: pid %u: rules gave %zu frames, libdw %zu (error %d):",
			s->pid, n, u->n_pcs, (int)err);
		for (i = 0; i < n || i < u->n_pcs; i++)
			fprintf(stderr, " %llx/%llx", i < n ? (unsigned long long)u->check_pcs[i] : 0ull,
				i < u->n_pcs ? (unsigned long long)u->pcs[i] : 0ull);
		fputc('\n', stderr);
	}
	return err;
}
#endif

/* Cached rules first; libdw for what they cannot do. */
static enum unwind_error dwarf_unwind(struct unwinder *u, struct uproc *p,
				      const struct perf_sample *s)
{
#if UNWIND_HAS_ARCH
	if (p->attached && fast_unwind(u, p, s)) {
		u->stats.fast_unwinds++;
		return u->crosscheck ? crosscheck(u, p, s) : UNWIND_ERR_NONE;
	}
#endif
	u->stats.libdw_unwinds++;
	return libdw_unwind(u, p, s);
}

void unwind_sample(struct unwinder *u, const struct perf_sample *s, enum perf_unwind_mode mode,
		   struct unwind_result *out)
{
	struct uproc *p;
	enum unwind_error err;
	uint64_t ip;

	out->n = 0;
	out->stack_top = 0;
	out->past_copy = false;
	u->stack_top = 0;
	u->past_copy = false;
#if !UNWIND_HAS_ARCH
	(void)mode;
	(void)p;
	(void)err;
	(void)ip;
	out->error = UNWIND_ERR_BAD_ARCH;
	return;
#else
	if (!s->has_regs) {
		out->error = UNWIND_ERR_UNSUPPORTED;
		return;
	}
	p = proc_get(u, s->pid);
	if (!p) {
		out->error = UNWIND_ERR_MAPS_PARSE;
		return;
	}
	if (!p->dwfl && reparse_due(p))
		reparse_for(u, p, s->regs[REG_SAMPLE_IP]);
	if (!p->dwfl) {
		/* Gone, or its maps unreadable: the pc alone, unsymbolized. */
		out->frames[0].pc = out->frames[0].rel_pc = s->regs[REG_SAMPLE_IP];
		out->frames[0].function = NULL;
		out->frames[0].module = NULL;
		out->n = 1;
		out->error = UNWIND_ERR_MAPS_PARSE;
		return;
	}
	ip = s->regs[REG_SAMPLE_IP];
	/* A pc in no known module: the maps changed (dlopen, exec). */
	if (!dwfl_addrmodule(p->dwfl, ip) && reparse_due(p))
		reparse_for(u, p, ip);
	u->cur = s;
	if (mode == PERF_UNWIND_FRAME_POINTER) {
		err = fp_unwind(u, s);
	} else {
		err = dwarf_unwind(u, p, s);
		/* DWARF got nowhere: frame pointers may still give the chain (the
		 * DWARF error stays on the sample). */
		if (err != UNWIND_ERR_NONE && u->n_pcs <= 1) {
			fp_unwind(u, s);
			u->stats.fp_fallbacks++;
			if (u->n_pcs == 0) {
				u->pcs[0] = ip;
				u->n_pcs = 1;
			}
		}
	}
	if (!p->dwfl) {
		out->n = 0;
		out->error = UNWIND_ERR_MAPS_PARSE;
		return;
	}
	symbolize(u, p, u->pcs, u->n_pcs, out);
	if (out->n && !out->frames[0].module && err == UNWIND_ERR_NONE)
		err = UNWIND_ERR_INVALID_MAP;
	out->error = err;
	out->past_copy = u->past_copy;
	/* A stack cut too short can end early without an error: no top then. */
	if (mode == PERF_UNWIND_DWARF && err == UNWIND_ERR_NONE && !u->past_copy)
		out->stack_top = u->stack_top;
	u->cur = NULL;
#endif
}

void unwind_symbolize(struct unwinder *u, uint32_t pid, const uint64_t *pcs, size_t n,
		      struct unwind_result *out)
{
	struct uproc *p = proc_get(u, pid);

	if (n > UNWIND_MAX_FRAMES)
		n = UNWIND_MAX_FRAMES;
	out->n = 0;
	out->stack_top = 0;
	out->past_copy = false;
	out->error = UNWIND_ERR_NONE;
	if (p && !p->dwfl && reparse_due(p) && n)
		reparse_for(u, p, pcs[0]);
	if (!p || !p->dwfl) {
		out->error = UNWIND_ERR_MAPS_PARSE;
		return;
	}
	if (n && !dwfl_addrmodule(p->dwfl, pcs[0]) && reparse_due(p))
		reparse_for(u, p, pcs[0]);
	symbolize(u, p, pcs, n, out);
	if (n == UNWIND_MAX_FRAMES)
		out->error = UNWIND_ERR_MAX_FRAMES_EXCEEDED;
}

bool unwinder_reparse_pc(struct unwinder *u, uint32_t pid, uint64_t pc, uint64_t sample_ns)
{
	struct uproc *p = proc_get(u, pid);
	uint64_t now = now_ns();

	if (!p)
		return false;
	/* Maps read after the sample was taken already show what it saw. */
	if (sample_ns && p->last_report_ns >= sample_ns)
		return false;
	/* At most every 100 ms after the first (a pc in no mapping, garbage
	 * or JIT code, or unwinds that fail for other reasons). */
	if (p->forced_ns && now - p->forced_ns < 100000000ull)
		return false;
	p->forced_ns = now;
	/* Built anew: the list read before a dlopen was seen to place the
	 * new library's pcs in libc's module (a failed unwind, no reread). */
	proc_drop_dwfl(u, p);
	proc_report(u, p);
	return p->dwfl && dwfl_addrmodule(p->dwfl, pc);
}

void unwinder_set_crosscheck(struct unwinder *u, bool on)
{
	u->crosscheck = on;
}

int unwinder_create(struct unwinder **out)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	hmap_init(&u->procs);
	symtab_cache_init(&u->symtabs);
	mmap_log_init(&u->log);
	buf_init(&u->maps_text);
	*out = u;
	return 0;
}

void unwinder_forget(struct unwinder *u, uint32_t pid)
{
	uint64_t v, now = now_ns();

	if (hmap_del(&u->procs, pid, &v) == 0)
		proc_destroy(u, (struct uproc *)(uintptr_t)v);
	mmap_log_exited(&u->log, pid, now);
	mmap_log_expire(&u->log, now);
}

void unwinder_note_mmap(struct unwinder *u, const struct perf_mmap2 *m)
{
	struct mmap_log_map lm = {
		.addr = m->addr,
		.len = m->len,
		.pgoff = m->pgoff,
		.maj = m->maj,
		.min = m->min,
		.ino = m->ino,
		.path = m->path,
	};

	/* Only what code runs from: the records of data mappings (mmap_data)
	 * are not asked for, but a kernel may send them anyway. */
	if (m->prot & PROT_EXEC)
		mmap_log_add(&u->log, m->pid, &lm);
}

void unwinder_note_fork(struct unwinder *u, uint32_t parent, uint32_t child)
{
	mmap_log_fork(&u->log, parent, child);
}

void unwinder_destroy(struct unwinder *u)
{
	struct hmap_iter it;
	uint64_t key, val;

	if (!u)
		return;
	hmap_iter_init(&it, &u->procs);
	while (hmap_iter_next(&it, &key, &val))
		proc_destroy(u, (struct uproc *)(uintptr_t)val);
	hmap_fini(&u->procs);
	mmap_log_fini(&u->log);
	buf_fini(&u->maps_text);
	symtab_cache_fini(&u->symtabs);
	free(u);
}

void unwinder_get_stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u->stats;
}

const char *unwind_error_frame_name(enum unwind_error e)
{
	switch (e) {
	case UNWIND_ERR_NONE:
		return "ERROR NONE";
	case UNWIND_ERR_MEMORY_INVALID:
		return "ERROR MEMORY_INVALID";
	case UNWIND_ERR_UNWIND_INFO:
		return "ERROR UNWIND_INFO";
	case UNWIND_ERR_UNSUPPORTED:
		return "ERROR UNSUPPORTED";
	case UNWIND_ERR_INVALID_MAP:
		return "ERROR INVALID_MAP";
	case UNWIND_ERR_MAX_FRAMES_EXCEEDED:
		return "ERROR MAX_FRAMES_EXCEEDED";
	case UNWIND_ERR_REPEATED_FRAME:
		return "ERROR REPEATED_FRAME";
	case UNWIND_ERR_INVALID_ELF:
		return "ERROR INVALID_ELF";
	case UNWIND_ERR_THREAD_DOES_NOT_EXIST:
		return "ERROR THREAD_DOES_NOT_EXIST";
	case UNWIND_ERR_BAD_ARCH:
		return "ERROR BAD_ARCH";
	case UNWIND_ERR_MAPS_PARSE:
		return "ERROR MAPS_PARSE";
	}
	return "ERROR UNKNOWN";
}

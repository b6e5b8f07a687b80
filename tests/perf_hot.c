// SPDX-License-Identifier: Apache-2.0
/*
 * perf_hot.c - a workload with known hot functions for traced_perf's
 * tests (tests/integration/perf_*.sh). Modes:
 * SECONDS of spin, sys and relspin are seconds of this process's own CPU
 * time (CLOCK_PROCESS_CPUTIME_ID), not of the wall clock: on a busy machine
 * the workload runs longer but does the same work, so a test's expected
 * sample counts do not depend on how much CPU it was given. A wall-clock
 * cap (30 s + 20x SECONDS) ends a run that is starved of CPU altogether.
 *   perf_hot spin SECONDS [CPU]
 *                           hot_a does 2/3 of the work, hot_b 1/3 (same blocks),
 *                           both called from main through call_hot; with
 *                           CPU, first moves to that CPU (its samples then
 *                           land on another CPU's ring than the records of
 *                           its exec, when started elsewhere with taskset)
 *   perf_hot relspin FILE   writes a tiny relocatable object (ET_REL, one
 *                           function busy_rel in .text) to FILE, maps it
 *                           executable and runs busy_rel for 2 CPU s: samples
 *                           whose pc is in an object file, as in compilers
 *   perf_hot sys SECONDS    a getppid() loop (kernel frames)
 *   perf_hot naps N         sleeps 1 ms N times (N context switches)
 *   perf_hot pages N        touches N fresh pages once, spins 0.1 s, sleeps 1 s
 * Prints its pid first, then "done" and "cpu_ms N" (its CPU time). Built twice by the Makefile: with
 * frame pointers ($(O)/perf_hot) and without ($(O)/perf_hot_nofp).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t g_sink;

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A budget of SECONDS of this process's CPU time, capped in wall time. */
struct budget {
	uint64_t cpu_end, wall_end;
};

static struct budget budget_of(double seconds)
{
	struct budget b;

	b.cpu_end = clock_ns(CLOCK_PROCESS_CPUTIME_ID) + (uint64_t)(seconds * 1e9);
	b.wall_end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)((30.0 + 20.0 * seconds) * 1e9);
	return b;
}

static int budget_left(const struct budget *b)
{
	if (clock_ns(CLOCK_PROCESS_CPUTIME_ID) >= b->cpu_end)
		return 0;
	if (clock_ns(CLOCK_MONOTONIC) >= b->wall_end) {
		fprintf(stderr, "perf_hot: starved: wall-clock cap reached before the CPU time\n");
		return 0;
	}
	return 1;
}

/* One block of work: the same in both hot functions, so their shares of
 * CPU time are their shares of blocks, however the process is scheduled. */
static inline uint64_t block(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* The volatile local gives each hot function a stack frame, so the frame
 * pointer build links them (gcc leaves frameless leaves without one). */
__attribute__((noinline)) static void hot_a(uint64_t blocks)
{
	volatile uint64_t last = 0;
	uint64_t x = g_sink;

	for (uint64_t i = 0; i < blocks; i++)
		last = x = block(x);
	(void)last;
	g_sink = x;
}

__attribute__((noinline)) static void hot_b(uint64_t blocks)
{
	volatile uint64_t last = 0;
	uint64_t x = g_sink;

	/* Not the same body as hot_a, so no linker folds them into one. */
	for (uint64_t i = 0; i < blocks; i++)
		last = x = block(x ^ 1);
	(void)last;
	g_sink = x;
}

__attribute__((noinline)) static void call_hot(double seconds)
{
	struct budget b = budget_of(seconds);

	/* Twice the work in hot_a as in hot_b, in short turns (~0.2 ms and
	 * ~0.1 ms: turns of 2 and 1 ms beat against a 4 ms sampling period
	 * and skewed the shares); the clocks read every 32 turns (~10 ms). */
	for (unsigned turn = 0;; turn++) {
		if ((turn & 31) == 0 && !budget_left(&b))
			break;
		hot_a(200);
		hot_b(100);
	}
}

__attribute__((noinline)) static void sys_loop(double seconds)
{
	struct budget b = budget_of(seconds);

	while (budget_left(&b)) {
		for (int i = 0; i < 100; i++)
			g_sink += (uint64_t)getppid();
	}
}

__attribute__((noinline)) static void touch_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* One fault per page: no transparent huge pages. */
	madvise(p, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	munmap(p, (size_t)(n * page));
}

/*
 * A relocatable object (ET_REL) as small as it gets: .text holds
 * busy_rel(n) { do n--; while (n); } (sub rdi,1; jnz; ret), .symtab
 * names it. Section addresses are 0, as in any object file.
 */
static void write_rel_object(const char *path)
{
	static const uint8_t code[16] = {0x48, 0x83, 0xef, 0x01, 0x75, 0xfa, 0xc3};
	static const char strtab[16] = "\0busy_rel";
	static const char shstrtab[48] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	enum { TEXT = 64, SYMTAB = 80, STRTAB = 128, SHSTRTAB = 144, SHDRS = 192 };
	uint8_t img[SHDRS + 5 * sizeof(Elf64_Shdr)];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Sym *sym = (Elf64_Sym *)(img + SYMTAB);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + SHDRS);
	FILE *f;

	memset(img, 0, sizeof(img));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = SHDRS;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	memcpy(img + TEXT, code, sizeof(code));
	sym[1].st_name = 1;
	sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[1].st_shndx = 1;
	sym[1].st_size = 7;
	memcpy(img + STRTAB, strtab, sizeof(strtab));
	memcpy(img + SHSTRTAB, shstrtab, sizeof(shstrtab));
	sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_offset = TEXT,
			     .sh_size = 7, .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = SYMTAB,
			     .sh_size = 2 * sizeof(Elf64_Sym), .sh_link = 3, .sh_info = 1,
			     .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)};
	sh[3] = (Elf64_Shdr){.sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = STRTAB,
			     .sh_size = 10, .sh_addralign = 1};
	sh[4] = (Elf64_Shdr){.sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = SHSTRTAB,
			     .sh_size = 33, .sh_addralign = 1};
	f = fopen(path, "wb");
	if (!f || fwrite(img, sizeof(img), 1, f) != 1 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

__attribute__((noinline)) static void run_rel_object(const char *path, double seconds)
{
	struct budget b = budget_of(seconds);
	void (*busy)(uint64_t);
	int fd;
	void *p;

	write_rel_object(path);
	fd = open(path, O_RDONLY);
	p = fd < 0 ? MAP_FAILED
		   : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	close(fd);
	*(void **)&busy = (uint8_t *)p + 64;
	while (budget_left(&b))
		busy(1000000);
}

int main(int argc, char **argv)
{
	double arg;

	if (argc == 4 && !strcmp(argv[1], "spin")) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[3]), &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("sched_setaffinity");
			return 1;
		}
	} else if (argc != 3) {
		fprintf(stderr, "usage: perf_hot spin|sys|naps|pages|relspin ARG [CPU]\n");
		return 2;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	arg = strtod(argv[2], NULL);
	if (!strcmp(argv[1], "spin")) {
		call_hot(arg);
	} else if (!strcmp(argv[1], "relspin")) {
		run_rel_object(argv[2], 2.0);
	} else if (!strcmp(argv[1], "naps")) {
		for (long i = 0; i < (long)arg; i++)
			usleep(1000);
	} else if (!strcmp(argv[1], "sys")) {
		sys_loop(arg);
	} else if (!strcmp(argv[1], "pages")) {
		touch_pages((long)arg);
		/* Running on: the next samples on this CPU see every fault. */
		hot_a(100000);
		sleep(1);
	} else {
		return 2;
	}
	printf("done\ncpu_ms %llu\n",
	       (unsigned long long)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1000000));
	return 0;
}

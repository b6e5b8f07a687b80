/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_args.h - the perfetto command line, parsed into one struct with
 * Perfetto's flag names and rules (which flags combine, which conflict).
 * Parsing is separate from running so it is tested without a service.
 */
#ifndef PFC_PERFETTO_CMD_CMD_ARGS_H
#define PFC_PERFETTO_CMD_CMD_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CMD_MAX_ATTRIBUTES 64
/* --cpu-profile's ceiling: the kernel's default perf_event_max_sample_rate. */
#define CMD_MAX_CPU_PROFILE_HZ 100000

enum cmd_mode {
	CMD_MODE_TRACE,        /* record a trace (config file or light mode) */
	CMD_MODE_QUERY,        /* --query / --query-raw */
	CMD_MODE_ATTACH,       /* --attach=KEY */
	CMD_MODE_IS_DETACHED,  /* --is_detached=KEY */
	CMD_MODE_CLONE,        /* --clone ID / --clone-by-name NAME */
	CMD_MODE_HELP,
	CMD_MODE_VERSION,
};

struct cmd_args {
	enum cmd_mode mode;
	const char *config_path;       /* -c */
	bool config_is_text;           /* --txt */
	const char *out_path;          /* -o */
	bool no_clobber;
	bool background;               /* -d */
	bool background_wait;          /* -D */
	int notify_fd;                 /* --notify-fd, -1 if none */
	const char *time;              /* -t */
	const char *buffer_size;       /* -b */
	const char *max_file_size;     /* -s */
	char **categories;             /* positional, borrowed from argv */
	size_t n_categories;
	const char *attributes[CMD_MAX_ATTRIBUTES]; /* --add-attribute key[=value] */
	size_t n_attributes;
	bool query_raw;
	bool query_long;
	const char *detach_key;
	const char *attach_key;        /* also --is_detached's key */
	bool stop_after_attach;        /* --stop */
	unsigned long long clone_id;
	const char *clone_name;
	bool clone_for_bugreport;
	/* Rotating output (our extension): OUT.0, OUT.1, ... */
	unsigned long long rotate_seconds; /* --rotate-seconds */
	unsigned long long rotate_mb;      /* --rotate-mb */
	unsigned keep;                     /* --keep, 0 = all */
	unsigned cpu_profile_hz;           /* --cpu-profile HZ, 0 = none */
	bool has_keep;
};

/*
 * cmd_args_parse() - Parse argv (argv[0] is the program name).
 * @err: on failure, a one-line message suitable after "perfetto: ".
 * Return: 0, or -EINVAL for a bad or conflicting command line.
 * Context: uses getopt_long (resets optind); not thread-safe.
 */
int cmd_args_parse(int argc, char **argv, struct cmd_args *out, char *err, size_t err_size);

/* Writes the --help text. */
void cmd_args_usage(FILE *f);

#endif

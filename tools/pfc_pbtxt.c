// SPDX-License-Identifier: Apache-2.0
/*
 * pfc_pbtxt.c - command-line front end of src/pbtxt: converts trace configs
 * (or any message in protos/) between protobuf text format and binary, and
 * checks a text config by round-tripping it. `make demo` and the tests use
 * it; users can use it like `protoc --encode/--decode` without the .protos.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "pbtxt/pbtxt.h"

/* Inputs larger than this are refused; configs are kilobytes. */
#define MAX_INPUT_BYTES (64u << 20)

static struct {
	const char *type;
} g_args = {"TraceConfig"};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pfc_pbtxt [--type MESSAGE] COMMAND [FILE...]\n"
		"\n"
		"Converts protobuf messages of perfetto-c's protos (default TraceConfig)\n"
		"between text format and binary. FILE '-' or no FILE reads stdin.\n"
		"\n"
		"commands:\n"
		"  encode [FILE]      text format -> binary on stdout\n"
		"  decode [FILE]      binary -> text format on stdout\n"
		"  roundtrip FILE...  text -> binary -> text; prints the result of each\n"
		"  check FILE...      parse each text file; report errors only\n"
		"\n"
		"options:\n"
		"  -t, --type NAME    message type, e.g. TraceConfig, TracePacket,\n"
		"                     perfetto.protos.TraceConfig.BufferConfig\n"
		"  -h, --help         this text\n");
}

static int read_input(const char *path, struct buf *out)
{
	FILE *f = stdin;
	char tmp[65536];
	size_t n;
	int rc = 0;

	if (path && strcmp(path, "-") != 0) {
		f = fopen(path, "rb");
		if (!f) {
			fprintf(stderr, "pfc_pbtxt: cannot open %s: %s\n", path, strerror(errno));
			return -errno;
		}
	}
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (out->len + n > MAX_INPUT_BYTES) {
			fprintf(stderr, "pfc_pbtxt: %s is larger than %u bytes\n", path ? path : "stdin",
				MAX_INPUT_BYTES);
			rc = -EFBIG;
			break;
		}
		rc = buf_append(out, tmp, n);
		if (rc)
			break;
	}
	if (!rc && ferror(f)) {
		fprintf(stderr, "pfc_pbtxt: error reading %s\n", path ? path : "stdin");
		rc = -EIO;
	}
	if (f != stdin)
		fclose(f);
	return rc;
}

static int write_stdout(const void *data, size_t len)
{
	if (len && fwrite(data, 1, len, stdout) != len) {
		fprintf(stderr, "pfc_pbtxt: write error: %s\n", strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Parses @path as text into @bin; prints an error naming the file. */
static int encode_file(const ProtobufCMessageDescriptor *desc, const char *path, struct buf *bin)
{
	struct buf text = BUF_INIT;
	struct pbtxt_error err;
	int rc;

	rc = read_input(path, &text);
	if (rc == 0) {
		rc = pbtxt_parse(desc, (const char *)text.data, text.len, bin, &err);
		if (rc)
			fprintf(stderr, "pfc_pbtxt: %s: %s\n", path ? path : "stdin",
				rc == -EINVAL || err.msg[0] ? err.msg : err_str(rc));
	}
	buf_fini(&text);
	return rc;
}

static int decode_buf(const ProtobufCMessageDescriptor *desc, const char *path,
		      const struct buf *bin)
{
	struct buf text = BUF_INIT;
	struct pbtxt_error err;
	int rc;

	rc = pbtxt_print(desc, bin->data, bin->len, &text, &err);
	if (rc)
		fprintf(stderr, "pfc_pbtxt: %s: %s\n", path ? path : "stdin",
			err.msg[0] ? err.msg : err_str(rc));
	else
		rc = write_stdout(text.data, text.len);
	buf_fini(&text);
	return rc;
}

static int run(const ProtobufCMessageDescriptor *desc, const char *cmd, int n_files, char **files)
{
	int i, failed = 0;

	if (strcmp(cmd, "encode") == 0 || strcmp(cmd, "decode") == 0) {
		struct buf b = BUF_INIT;
		const char *path = n_files ? files[0] : NULL;
		int rc;

		if (n_files > 1) {
			fprintf(stderr, "pfc_pbtxt: %s takes at most one FILE\n", cmd);
			return 2;
		}
		if (cmd[0] == 'e') {
			rc = encode_file(desc, path, &b);
			if (!rc)
				rc = write_stdout(b.data, b.len);
		} else {
			rc = read_input(path, &b);
			if (!rc)
				rc = decode_buf(desc, path, &b);
		}
		buf_fini(&b);
		return rc ? 1 : 0;
	}
	if (strcmp(cmd, "roundtrip") == 0 || strcmp(cmd, "check") == 0) {
		if (n_files == 0) {
			fprintf(stderr, "pfc_pbtxt: %s needs at least one FILE\n", cmd);
			return 2;
		}
		for (i = 0; i < n_files; i++) {
			struct buf b = BUF_INIT;

			if (encode_file(desc, files[i], &b)) {
				failed++;
			} else if (cmd[0] == 'r') {
				printf("# %s: %zu bytes of %s\n", files[i], b.len,
				       pbtxt_message_name(desc));
				if (decode_buf(desc, files[i], &b))
					failed++;
			}
			buf_fini(&b);
		}
		return failed ? 1 : 0;
	}
	fprintf(stderr, "pfc_pbtxt: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"type", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const ProtobufCMessageDescriptor *desc;
	int c;

	while ((c = getopt_long(argc, argv, "+t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			g_args.type = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	desc = pbtxt_find_message(g_args.type);
	if (!desc) {
		fprintf(stderr, "pfc_pbtxt: unknown message type '%s'\n", g_args.type);
		return 2;
	}
	return run(desc, argv[optind], argc - optind - 1, argv + optind + 1);
}

// SPDX-License-Identifier: Apache-2.0
/*
 * psql_fn_args.c - what a call of a function defined in SQL passes
 * (psql_int.h): upstream's type check of each argument against the
 * prototype, with its messages, and binding the arguments to the body's
 * $names. Scalar functions (psql_function.c) and table functions
 * (psql_table_fn.c) both use it.
 */
#include "trace_processor/sql/psql/psql_int.h"

#include <sqlite3.h>
#include <stddef.h>

static const char *const k_expected[] = {"ANY", "LONG", "BOOL", "DOUBLE", "STRING", "BYTES"};

/* The SQLite storage class each type wants. */
static int sqlite_type(enum fn_type t)
{
	switch (t) {
	case T_LONG:
	case T_BOOL:
		return SQLITE_INTEGER;
	case T_DOUBLE:
		return SQLITE_FLOAT;
	case T_STRING:
		return SQLITE_TEXT;
	case T_BYTES:
		return SQLITE_BLOB;
	default:
		return 0;
	}
}

static const char *actual_name(int sqlite_type)
{
	switch (sqlite_type) {
	case SQLITE_INTEGER:
		return "BOOL/INT/UINT/LONG";
	case SQLITE_FLOAT:
		return "FLOAT/DOUBLE";
	case SQLITE_TEXT:
		return "STRING";
	case SQLITE_BLOB:
		return "BYTES/PROTO";
	default:
		return "NULL";
	}
}

char *psql_fn_check_args(const struct psql_fn *d, int argc, sqlite3_value **argv)
{
	size_t i;

	for (i = 0; i < (size_t)argc && i < d->n_args; i++) {
		int want = sqlite_type(d->types[i]), have = sqlite3_value_type(argv[i]);

		if (want && have != SQLITE_NULL && have != want)
			return sqlite3_mprintf("%s[arg=%s]: argument %d does not have expected "
					       "type: expected %s, actual %s",
					       d->name, sqlite3_value_text(argv[i]), (int)i,
					       k_expected[d->types[i]], actual_name(have));
	}
	return NULL;
}

void psql_fn_bind(const struct psql_fn *d, sqlite3_stmt *st, int argc, sqlite3_value **argv)
{
	size_t i;
	int idx;

	for (i = 0; i < (size_t)argc && i < d->n_args; i++) {
		idx = sqlite3_bind_parameter_index(st, d->args[i]);
		if (idx > 0)
			sqlite3_bind_value(st, idx, argv[i]);
	}
}


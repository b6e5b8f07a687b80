// SPDX-License-Identifier: Apache-2.0
/*
 * _pfc.c - perfetto_c._pfc, the CPython extension over libperfetto-c:
 * categories, tracks, slices as context managers, instants, counters, flows
 * and annotations. Called by Python threads holding the GIL (which guards
 * this file's caches); python/perfetto_c/__init__.py re-exports it. The
 * workload: many short slices per second from a few threads, the category
 * often off, so the disabled path allocates nothing and reads no values.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctx_method.h"
#include "perfetto-c/pfc.h"

/* Annotations one event carries (the SDK's limit; more are left out). */
#define PY_MAX_ARGS 32
/* Names (event and annotation) the cache keeps for the process's life. */
#define NAME_CACHE_DEFAULT_MAX 4096
/* Direct-mapped table in front of the cache, by object address. */
#define NAME_TAB_SLOTS 1024u
/* A thread compares its threading name with the one sent every this many
 * enabled events (a power of two). */
#define RENAME_CHECK_EVERY 256u
/* Slice objects without annotations kept for reuse. */
#define SLICE_FREE_MAX 64
/* slice(name, cat) objects kept by (name, category) to hand out again
 * (a power of two). */
#define SLICE_CACHE_SLOTS 64u
#define DEFAULT_CATEGORY "python"

struct category_obj;
struct track_obj;
struct slice_obj;

/*
 * The module's state. It is process-wide like the SDK it wraps (one SDK per
 * process; single-phase init, so one module object per process).
 */
static struct {
	PyObject *categories;        /* dict name -> Category; never shrinks */
	PyObject *names;             /* dict str -> same str: the name cache */
	Py_ssize_t names_max;
	struct {
		PyObject *s;         /* a str held by g.names */
		const char *utf8;
	} name_tab[NAME_TAB_SLOTS];
	PyObject *counter_tracks;    /* dict name -> Track (counter), by counter() */
	struct category_obj *default_cat;
	PyObject *last_cat_key;      /* the last str resolved to a category */
	struct category_obj *last_cat;
	PyObject *current_thread;    /* threading.current_thread */
	PyObject *thread_key;        /* our key in each thread state's dict */
	uint32_t init_gen;           /* bumped by every init() */
	uint64_t flow_seed, flow_next;
	PyObject *s_cat, *s_track, *s_flow, *s_term, *s_args, *s_name;
	PyObject *null_slice;
	struct slice_obj *free_slices[SLICE_FREE_MAX];
	int n_free_slices;
	struct slice_obj *slice_cache[SLICE_CACHE_SLOTS]; /* owned references */
} g = {.names_max = NAME_CACHE_DEFAULT_MAX};

/* Per thread: the init_gen its name was sent for, and an event count. */
static _Thread_local struct {
	uint32_t named_gen;
	uint32_t events;
} t_state __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ names ---- */

/*
 * The SDK interns names by address. A name in the cache is held for the
 * life of the process, so its address never comes to mean another string;
 * past the cache's limit names go with PFC_EVENT_DYNAMIC_NAMES (in full).
 */

static inline size_t name_slot(const PyObject *s)
{
	uintptr_t p = (uintptr_t)s;

	return (size_t)((p >> 4) ^ (p >> 14)) & (NAME_TAB_SLOTS - 1);
}

/* The name's UTF-8 when it has no NUL inside, else NULL with ValueError. */
static const char *utf8_no_nul(PyObject *s)
{
	Py_ssize_t n;
	const char *u = PyUnicode_AsUTF8AndSize(s, &n);

	if (u && strlen(u) != (size_t)n) {
		PyErr_SetString(PyExc_ValueError, "perfetto_c: a name contains a NUL character");
		return NULL;
	}
	return u;
}

/* Raises the TypeError of a name that is not a str. Return: NULL. */
static PyObject *bad_name(PyObject *s)
{
	PyErr_Format(PyExc_TypeError, "perfetto_c: a name must be str, not %.80s",
		     Py_TYPE(s)->tp_name);
	return NULL;
}

static __attribute__((noinline)) const char *name_utf8_slow(PyObject *s, bool *dynamic)
{
	PyObject *cached, *exact = NULL;
	const char *u;

	if (!PyUnicode_Check(s)) {
		bad_name(s);
		return NULL;
	}
	cached = PyDict_GetItemWithError(g.names, s);
	if (!cached && PyErr_Occurred())
		return NULL;
	if (!cached && PyDict_GET_SIZE(g.names) < g.names_max) {
		/* A str subclass is cached as a plain str of the same text. */
		exact = PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_FromObject(s);
		if (!exact)
			return NULL;
		if (!utf8_no_nul(exact) || PyDict_SetItem(g.names, exact, exact) < 0) {
			Py_DECREF(exact);
			return NULL;
		}
		cached = exact;
		Py_DECREF(exact); /* the dict holds it */
	}
	if (cached) {
		size_t i = name_slot(cached);

		u = PyUnicode_AsUTF8(cached);
		if (!u)
			return NULL;
		g.name_tab[i].s = cached;
		g.name_tab[i].utf8 = u;
		return u;
	}
	*dynamic = true;
	return utf8_no_nul(s);
}

/*
 * name_utf8() - The text of name @s for the SDK (borrowed).
 * Cached names live as long as the process, so the SDK may intern them by
 * address; otherwise *@dynamic is set and the text lives as long as @s.
 * Return: the text, or NULL with an exception (not a str, NUL inside).
 */
static inline const char *name_utf8(PyObject *s, bool *dynamic)
{
	size_t i = name_slot(s);

	if (PFC_LIKELY_(g.name_tab[i].s == s))
		return g.name_tab[i].utf8;
	return name_utf8_slow(s, dynamic);
}

/* ----------------------------------------------------- thread names ---- */

/* Sends threading.current_thread().name if it is new for this thread in
 * this init(). Never raises: tracing must not break the application. */
static __attribute__((noinline)) void thread_name_slow(void)
{
	PyObject *th = NULL, *name = NULL, *dict, *old;
	bool fresh = t_state.named_gen != g.init_gen;
	const char *u;
#if PY_VERSION_HEX >= 0x030C0000
	PyObject *exc = PyErr_GetRaisedException();
#else
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
#endif

	t_state.named_gen = g.init_gen;
	t_state.events = 1;
	dict = PyThreadState_GetDict();
	th = PyObject_CallNoArgs(g.current_thread);
	if (!th || !dict)
		goto out;
	name = PyObject_GetAttr(th, g.s_name);
	if (!name || !PyUnicode_Check(name))
		goto out;
	old = PyDict_GetItemWithError(dict, g.thread_key);
	if (!fresh && old && PyUnicode_Check(old) && PyUnicode_Compare(old, name) == 0)
		goto out;
	u = PyUnicode_AsUTF8(name);
	if (u && pfc_thread_set_name(u) == 0)
		(void)PyDict_SetItem(dict, g.thread_key, name);
out:
	Py_XDECREF(th);
	Py_XDECREF(name);
	PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
	PyErr_SetRaisedException(exc);
#else
	PyErr_Restore(type, value, tb);
#endif
}

/* Before an enabled event: the thread's track carries its threading name. */
static inline void thread_check(void)
{
	if (PFC_LIKELY_(t_state.named_gen == g.init_gen &&
			(++t_state.events & (RENAME_CHECK_EVERY - 1)) != 0))
		return;
	thread_name_slow();
}

/* -------------------------------------------------------- categories ---- */

struct category_obj {
	PyObject_HEAD
	struct pfc_category_ref ref; /* registered: the object lives forever */
	PyObject *name;
};

static PyTypeObject category_type;

static int errno_to_exc(int rc, const char *what)
{
	errno = -rc;
	if (rc == -EINVAL)
		PyErr_Format(PyExc_ValueError, "perfetto_c: %s: invalid argument", what);
	else if (rc == -ENOMEM)
		PyErr_NoMemory();
	else
		PyErr_Format(PyExc_OSError, "perfetto_c: %s: %s", what, strerror(-rc));
	return -1;
}

/* The category named @name (a str), registered if new. Return: new ref. */
static struct category_obj *category_get(PyObject *name, const char *desc, PyObject *tags)
{
	struct category_obj *c;
	const char *tag_s[64], *u;
	PyObject *seq = NULL;
	Py_ssize_t n_tags = 0, i;
	int rc;

	c = (struct category_obj *)PyDict_GetItemWithError(g.categories, name);
	if (c)
		return (struct category_obj *)Py_NewRef(c);
	if (PyErr_Occurred())
		return NULL;
	u = utf8_no_nul(name);
	if (!u)
		return NULL;
	if (!*u) {
		PyErr_SetString(PyExc_ValueError, "perfetto_c: a category needs a name");
		return NULL;
	}
	if (tags && tags != Py_None) {
		seq = PySequence_Fast(tags, "perfetto_c: tags must be a sequence of str");
		if (!seq)
			return NULL;
		n_tags = PySequence_Fast_GET_SIZE(seq);
		if (n_tags > (Py_ssize_t)(sizeof(tag_s) / sizeof(tag_s[0]))) {
			PyErr_SetString(PyExc_ValueError, "perfetto_c: at most 64 tags");
			goto fail;
		}
		for (i = 0; i < n_tags; i++) {
			PyObject *t = PySequence_Fast_GET_ITEM(seq, i);

			if (!PyUnicode_Check(t)) {
				PyErr_SetString(PyExc_TypeError, "perfetto_c: tags must be str");
				goto fail;
			}
			if (!(tag_s[i] = utf8_no_nul(t)))
				goto fail;
		}
	}
	c = PyObject_New(struct category_obj, &category_type);
	if (!c)
		goto fail;
	c->ref.enabled = &pfc_disabled_flag;
	c->ref.cat = NULL;
	c->name = PyUnicode_FromString(u);
	if (!c->name) {
		Py_DECREF(c);
		goto fail;
	}
	rc = pfc_category_register(&c->ref, u, desc, tag_s, (size_t)n_tags);
	if (rc < 0 && rc != -EEXIST) {
		Py_DECREF(c);
		errno_to_exc(rc, rc == -ENOSPC ? "too many categories" : "category");
		goto fail;
	}
	if (PyDict_SetItem(g.categories, c->name, (PyObject *)c) < 0) {
		/* Registered but unlisted: keep it alive, the SDK points into it. */
		goto fail;
	}
	Py_XDECREF(seq);
	return c;
fail:
	Py_XDECREF(seq);
	return NULL;
}

static PyObject *category_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"name", "description", "tags", NULL};
	PyObject *name, *tags = NULL;
	const char *desc = NULL;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "U|zO:Category", kwlist, &name, &desc, &tags))
		return NULL;
	return (PyObject *)category_get(name, desc, tags);
}

static void category_dealloc(PyObject *self)
{
	/* Only a category whose registration failed gets here. */
	Py_XDECREF(((struct category_obj *)self)->name);
	PyObject_Free(self);
}

static PyObject *category_enabled(PyObject *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(*((struct category_obj *)self)->ref.enabled != 0);
}

static PyObject *category_name(PyObject *self, void *closure)
{
	(void)closure;
	return Py_NewRef(((struct category_obj *)self)->name);
}

static PyObject *category_repr(PyObject *self)
{
	struct category_obj *c = (struct category_obj *)self;

	return PyUnicode_FromFormat("<perfetto_c.Category %R%s>", c->name,
				    *c->ref.enabled ? " enabled" : "");
}

static PyGetSetDef category_getset[] = {
	{"enabled", category_enabled, NULL,
	 PyDoc_STR("True while some tracing session records this category."), NULL},
	{"name", category_name, NULL, PyDoc_STR("The category's name."), NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(category_doc,
	     "Category(name, description=None, tags=())\n--\n\n"
	     "A trace category, registered with the SDK on first use. Categories are\n"
	     "off until a session's track_event_config enables them. Asking for a\n"
	     "name twice returns the same object; categories live as long as the\n"
	     "process. Functions taking a category also accept its name (a str).");

static PyTypeObject category_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c.Category",
	.tp_basicsize = sizeof(struct category_obj),
	.tp_dealloc = category_dealloc,
	.tp_repr = category_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = category_doc,
	.tp_getset = category_getset,
	.tp_new = category_new,
};

/* @o (None, a Category or a name) as a category. Return: borrowed (every
 * category lives forever), or NULL with an exception. */
static inline struct category_obj *resolve_cat(PyObject *o)
{
	struct category_obj *c;

	if (!o || o == Py_None)
		return g.default_cat;
	if (PFC_LIKELY_(Py_IS_TYPE(o, &category_type)))
		return (struct category_obj *)o;
	if (o == g.last_cat_key)
		return g.last_cat;
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError,
			     "perfetto_c: a category must be a Category or a str, not %.80s",
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	c = category_get(o, NULL, NULL);
	if (!c)
		return NULL;
	Py_DECREF(c); /* g.categories holds it */
	Py_INCREF(o);
	Py_XSETREF(g.last_cat_key, o);
	g.last_cat = c;
	return c;
}

/* ------------------------------------------------------------ tracks ---- */

struct track_obj {
	PyObject_HEAD
	struct pfc_track *t;
	PyObject *name;
	int kind;
};

static PyTypeObject track_type;

static const char *const k_kind_names[] = {"slices", "async", "counter"};

static struct track_obj *track_make(PyObject *name, int kind, uint64_t uuid)
{
	struct track_obj *tr;
	const char *u = utf8_no_nul(name);
	int rc;

	if (!u)
		return NULL;
	tr = PyObject_New(struct track_obj, &track_type);
	if (!tr)
		return NULL;
	tr->t = NULL;
	tr->kind = kind;
	tr->name = Py_NewRef(name);
	rc = pfc_track_create(u, (enum pfc_track_kind)kind, uuid, &tr->t);
	if (rc < 0) {
		Py_DECREF(tr);
		errno_to_exc(rc, "Track");
		return NULL;
	}
	return tr;
}

static PyObject *track_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"name", "kind", "uuid", NULL};
	PyObject *name;
	const char *kind = "slices";
	unsigned long long uuid = 0;
	int k;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "U|s$K:Track", kwlist, &name, &kind, &uuid))
		return NULL;
	for (k = 0; k < 3; k++) {
		if (!strcmp(kind, k_kind_names[k]))
			break;
	}
	if (k == 3) {
		PyErr_Format(PyExc_ValueError,
			     "perfetto_c: Track kind must be 'slices', 'async' or 'counter', not '%s'",
			     kind);
		return NULL;
	}
	if (PyUnicode_GET_LENGTH(name) == 0) {
		PyErr_SetString(PyExc_ValueError, "perfetto_c: a track needs a name");
		return NULL;
	}
	return (PyObject *)track_make(name, k, uuid);
}

static void track_dealloc(PyObject *self)
{
	struct track_obj *tr = (struct track_obj *)self;

	/* No event is using it: a slice on it holds a reference. */
	pfc_track_destroy(tr->t);
	Py_XDECREF(tr->name);
	PyObject_Free(self);
}

static PyObject *track_get_name(PyObject *self, void *closure)
{
	(void)closure;
	return Py_NewRef(((struct track_obj *)self)->name);
}

static PyObject *track_get_kind(PyObject *self, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(k_kind_names[((struct track_obj *)self)->kind]);
}

static PyObject *track_get_uuid(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(pfc_track_uuid(((struct track_obj *)self)->t));
}

static PyObject *track_repr(PyObject *self)
{
	struct track_obj *tr = (struct track_obj *)self;

	return PyUnicode_FromFormat("<perfetto_c.Track %R %s>", tr->name, k_kind_names[tr->kind]);
}

static PyGetSetDef track_getset[] = {
	{"name", track_get_name, NULL, PyDoc_STR("The track's name."), NULL},
	{"kind", track_get_kind, NULL, PyDoc_STR("'slices', 'async' or 'counter'."), NULL},
	{"uuid", track_get_uuid, NULL, PyDoc_STR("Its TrackDescriptor uuid."), NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(track_doc,
	     "Track(name, kind='slices', *, uuid=0)\n--\n\n"
	     "A named track of this process, besides each thread's own. 'slices':\n"
	     "slices that nest; 'async': the same for operations that move between\n"
	     "threads (begin() on one, end() on another); 'counter': values for\n"
	     "counter(). uuid=0 derives one from the name and the process.");

static PyTypeObject track_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c.Track",
	.tp_basicsize = sizeof(struct track_obj),
	.tp_dealloc = track_dealloc,
	.tp_repr = track_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = track_doc,
	.tp_getset = track_getset,
	.tp_new = track_new,
};

/* -------------------------------------------------------- annotations ---- */

/* An event's annotations: names and values (strong references; values
 * already reduced to bool, int, float, str or None). */
struct ann {
	Py_ssize_t n;
	PyObject *name[PY_MAX_ARGS];
	PyObject *val[PY_MAX_ARGS];
};

static void ann_clear(struct ann *a)
{
	Py_ssize_t i;

	for (i = 0; i < a->n; i++) {
		Py_DECREF(a->name[i]);
		Py_DECREF(a->val[i]);
	}
	a->n = 0;
}

/* @v as something pfc_arg can carry: bool, an int within 64 bits, float,
 * str, None; anything else (bigger ints too) as str(v). Return: new ref. */
static PyObject *ann_value(PyObject *v)
{
	if (PyBool_Check(v) || PyFloat_Check(v) || PyUnicode_Check(v) || v == Py_None)
		return Py_NewRef(v);
	if (PyLong_Check(v)) {
		int ovf;

		(void)PyLong_AsLongLongAndOverflow(v, &ovf);
		if (!ovf)
			return Py_NewRef(v);
		if (ovf > 0) {
			(void)PyLong_AsUnsignedLongLong(v);
			if (!PyErr_Occurred())
				return Py_NewRef(v);
			PyErr_Clear();
		}
	}
	return PyObject_Str(v);
}

static int ann_add(struct ann *a, PyObject *name, PyObject *v)
{
	PyObject *c;

	if (!PyUnicode_Check(name)) {
		PyErr_SetString(PyExc_TypeError, "perfetto_c: annotation names must be str");
		return -1;
	}
	if (a->n == PY_MAX_ARGS)
		return 0;
	c = ann_value(v);
	if (!c)
		return -1;
	a->name[a->n] = Py_NewRef(name);
	a->val[a->n] = c;
	a->n++;
	return 0;
}

/* Adds the items of dict @d (args=...). */
static int ann_add_dict(struct ann *a, PyObject *d)
{
	PyObject *items, *k, *v;
	Py_ssize_t i, n;
	int rc = 0;

	if (!PyDict_Check(d)) {
		PyErr_SetString(PyExc_TypeError, "perfetto_c: args must be a dict");
		return -1;
	}
	/* A snapshot: str(value) may run code that changes the dict. */
	items = PyDict_Items(d);
	if (!items)
		return -1;
	n = PyList_GET_SIZE(items);
	for (i = 0; i < n && rc == 0; i++) {
		PyObject *it = PyList_GET_ITEM(items, i);

		k = PyTuple_GET_ITEM(it, 0);
		v = PyTuple_GET_ITEM(it, 1);
		rc = ann_add(a, k, v);
	}
	Py_DECREF(items);
	return rc;
}

/* Fills @out from the @n pairs of @names and @vals (reduced by ann_value();
 * runs no Python code). Return: 0, or -1 with an exception (a name with a
 * NUL, a string that cannot be UTF-8). */
static int ann_fill(PyObject *const *names, PyObject *const *vals, Py_ssize_t n,
		    struct pfc_arg *out, bool *dynamic)
{
	Py_ssize_t i;

	for (i = 0; i < n; i++) {
		PyObject *v = vals[i];
		struct pfc_arg *p = &out[i];

		p->name = name_utf8(names[i], dynamic);
		if (!p->name)
			return -1;
		if (v == Py_True || v == Py_False) {
			p->type = PFC_ARG_BOOL;
			p->v.b = v == Py_True;
		} else if (PyFloat_Check(v)) {
			p->type = PFC_ARG_DOUBLE;
			p->v.d = PyFloat_AS_DOUBLE(v);
		} else if (PyLong_Check(v)) {
			int ovf;
			long long x = PyLong_AsLongLongAndOverflow(v, &ovf);

			if (!ovf) {
				p->type = PFC_ARG_INT;
				p->v.i = x;
			} else {
				p->type = PFC_ARG_UINT;
				p->v.u = PyLong_AsUnsignedLongLong(v);
			}
		} else if (v == Py_None) {
			p->type = PFC_ARG_STRING;
			p->v.s = "None";
		} else {
			p->type = PFC_ARG_STRING;
			p->v.s = PyUnicode_AsUTF8(v);
			if (!p->v.s)
				return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------- argument parsing ---- */

enum kw_kind { KW_ANN, KW_CAT, KW_TRACK, KW_FLOW, KW_TERM, KW_ARGS };

static enum kw_kind kw_classify(PyObject *k)
{
	if (k == g.s_cat)
		return KW_CAT;
	if (k == g.s_track)
		return KW_TRACK;
	if (k == g.s_flow)
		return KW_FLOW;
	if (k == g.s_term)
		return KW_TERM;
	if (k == g.s_args)
		return KW_ARGS;
	/* Interned strings are unique: another interned one differs. */
	if (PyUnicode_CHECK_INTERNED(k))
		return KW_ANN;
	if (!PyUnicode_Compare(k, g.s_cat))
		return KW_CAT;
	if (!PyUnicode_Compare(k, g.s_track))
		return KW_TRACK;
	if (!PyUnicode_Compare(k, g.s_flow))
		return KW_FLOW;
	if (!PyUnicode_Compare(k, g.s_term))
		return KW_TERM;
	if (!PyUnicode_Compare(k, g.s_args))
		return KW_ARGS;
	return KW_ANN;
}

/* An event call's arguments: (name, /, cat=None, *, track=None, flow=None,
 * terminating_flow=None, args=None, **annotations). All borrowed. */
struct ev_call {
	PyObject *name;
	PyObject *cat_arg;
	struct category_obj *cat;
	PyObject *track, *flow, *term, *args;
	PyObject *const *kw_vals;
	PyObject *kwnames;
	Py_ssize_t n_kw;
	bool has_ann;
	bool has_reserved_kw;        /* some keyword is not an annotation */
};

/*
 * The cheap part of parsing, enough to find the category: which keyword
 * is which. Positional: (name, cat) with @has_name, else (cat). Values are
 * checked later, and only if the category is on.
 * Return: 0, or -1 with a TypeError (or the category's error).
 */
static int parse_call(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
		      bool has_name, struct ev_call *c)
{
	Py_ssize_t i, max_pos = has_name ? 2 : 1, min_pos = has_name ? 1 : 0;

	c->name = NULL;
	c->cat_arg = NULL;
	c->track = c->flow = c->term = c->args = NULL;
	c->has_ann = false;
	c->has_reserved_kw = false;
	if (nargs < min_pos || nargs > max_pos) {
		PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd positional arguments (%zd given)",
			     fn, min_pos, max_pos, nargs);
		return -1;
	}
	if (has_name) {
		c->name = args[0];
		if (nargs > 1)
			c->cat_arg = args[1];
	} else if (nargs > 0) {
		c->cat_arg = args[0];
	}
	c->kwnames = kwnames;
	c->kw_vals = args + nargs;
	c->n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	for (i = 0; i < c->n_kw; i++) {
		PyObject *v = c->kw_vals[i];
		enum kw_kind k = kw_classify(PyTuple_GET_ITEM(kwnames, i));

		c->has_reserved_kw |= k != KW_ANN;
		switch (k) {
		case KW_CAT:
			if (c->cat_arg) {
				PyErr_Format(PyExc_TypeError, "%s() got multiple values for 'cat'", fn);
				return -1;
			}
			c->cat_arg = v;
			break;
		case KW_TRACK:
			c->track = v;
			break;
		case KW_FLOW:
			c->flow = v;
			break;
		case KW_TERM:
			c->term = v;
			break;
		case KW_ARGS:
			c->args = v;
			break;
		case KW_ANN:
			c->has_ann = true;
			break;
		}
	}
	if (!has_name && c->has_ann) {
		PyErr_Format(PyExc_TypeError, "%s() takes no annotations", fn);
		return -1;
	}
	c->cat = resolve_cat(c->cat_arg);
	return c->cat ? 0 : -1;
}

/* The keyword annotations and args=... of @c into @a. */
static int collect_ann(const struct ev_call *c, struct ann *a)
{
	Py_ssize_t i;

	a->n = 0;
	if (c->has_ann) {
		for (i = 0; i < c->n_kw; i++) {
			PyObject *k = PyTuple_GET_ITEM(c->kwnames, i);

			if ((!c->has_reserved_kw || kw_classify(k) == KW_ANN) &&
			    ann_add(a, k, c->kw_vals[i]) < 0)
				goto fail;
		}
	}
	if (c->args && c->args != Py_None && ann_add_dict(a, c->args) < 0)
		goto fail;
	return 0;
fail:
	ann_clear(a);
	return -1;
}

/* A flow id argument: None or 0 (none) or an int below 2^64. */
static int flow_arg(PyObject *o, uint64_t *out)
{
	unsigned long long v;

	*out = 0;
	if (!o || o == Py_None)
		return 0;
	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_SetString(PyExc_TypeError, "perfetto_c: a flow id must be an int");
		return -1;
	}
	v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_SetString(PyExc_ValueError, "perfetto_c: a flow id must be in [0, 2**64)");
		return -1;
	}
	*out = v;
	return 0;
}

/* A track argument for slices: None or a Track of slices or async slices. */
static int track_arg(PyObject *o, bool counter, struct track_obj **out)
{
	struct track_obj *tr;

	*out = NULL;
	if (!o || o == Py_None)
		return 0;
	if (!Py_IS_TYPE(o, &track_type)) {
		PyErr_Format(PyExc_TypeError, "perfetto_c: track must be a Track, not %.80s",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	tr = (struct track_obj *)o;
	if ((tr->kind == PFC_TRACK_COUNTER) != counter) {
		PyErr_SetString(PyExc_ValueError, counter ? "perfetto_c: not a counter track"
							  : "perfetto_c: a counter track takes no slices");
		return -1;
	}
	*out = tr;
	return 0;
}

/* -------------------------------------------------------------- events ---- */

/*
 * Writes one slice begin or instant of @c. @name_u: the event name's text
 * from name_utf8(), @dynamic as it said. @tr: a track or NULL (the
 * thread's); @flow/@term: flow ids or 0; @n_ann annotations from
 * ann_value(). Return: 0, or -1 with an exception (the annotations' text).
 */
static int write_named(struct category_obj *c, enum pfc_event_type type, const char *name_u,
		       bool dynamic, const struct track_obj *tr, uint64_t flow, uint64_t term,
		       PyObject *const *ann_names, PyObject *const *ann_vals, Py_ssize_t n_ann)
{
	struct pfc_arg pa[PY_MAX_ARGS];
	struct pfc_event e;

	if (n_ann == 0 && !dynamic && !tr && !flow && !term) {
		thread_check();
		if (type == PFC_EVENT_SLICE_BEGIN)
			pfc_te_slice_begin(c->ref.cat, name_u);
		else
			pfc_te_instant(c->ref.cat, name_u);
		return 0;
	}
	if (ann_fill(ann_names, ann_vals, n_ann, pa, &dynamic) < 0)
		return -1;
	memset(&e, 0, sizeof(e));
	e.type = type;
	e.flags = dynamic ? PFC_EVENT_DYNAMIC_NAMES : 0;
	e.name = name_u;
	e.track = tr ? tr->t : NULL;
	e.flow_id = flow;
	e.terminating_flow_id = term;
	e.args = pa;
	e.n_args = (size_t)n_ann;
	thread_check();
	pfc_te_event(c->ref.cat, &e);
	return 0;
}

static void write_end(struct category_obj *c, const struct track_obj *tr)
{
	struct pfc_event e;

	if (!tr) {
		pfc_te_slice_end(c->ref.cat);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.type = PFC_EVENT_SLICE_END;
	e.track = tr->t;
	pfc_te_event(c->ref.cat, &e);
}

/* instant() and begin(): parse and write at once. */
static PyObject *named_now(const char *fn, enum pfc_event_type type, PyObject *const *args,
			   Py_ssize_t nargs, PyObject *kwnames)
{
	struct ev_call c;
	struct track_obj *tr;
	struct ann a;
	uint64_t flow, term;
	const char *u;
	bool dynamic = false;
	int rc;

	if (parse_call(fn, args, nargs, kwnames, true, &c) < 0)
		return NULL;
	if (PFC_LIKELY_(!*c.cat->ref.enabled)) {
		if (PFC_UNLIKELY_(!PyUnicode_Check(c.name)))
			return bad_name(c.name);
		Py_RETURN_NONE;
	}
	if (!(u = name_utf8(c.name, &dynamic)) || track_arg(c.track, false, &tr) < 0 ||
	    flow_arg(c.flow, &flow) < 0 || flow_arg(c.term, &term) < 0)
		return NULL;
	if (!c.has_ann && !c.args)
		rc = write_named(c.cat, type, u, dynamic, tr, flow, term, NULL, NULL, 0);
	else if (collect_ann(&c, &a) < 0)
		return NULL;
	else {
		rc = write_named(c.cat, type, u, dynamic, tr, flow, term, a.name, a.val, a.n);
		ann_clear(&a);
	}
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(instant_doc,
	     "instant(name, /, cat=None, *, track=None, flow=None, terminating_flow=None,\n"
	     "        args=None, **annotations)\n--\n\n"
	     "An instant event (a slice of zero duration) on the calling thread's track\n"
	     "or on track. Keyword arguments become annotations (bool, int, float,\n"
	     "str, None; other values as str(value)); args= takes a dict for names\n"
	     "that are not identifiers or clash with the parameters.");

static PyObject *py_instant(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
	(void)m;
	return named_now("instant", PFC_EVENT_INSTANT, args, nargs, kw);
}

PyDoc_STRVAR(begin_doc,
	     "begin(name, /, cat=None, *, track=None, flow=None, terminating_flow=None,\n"
	     "      args=None, **annotations)\n--\n\n"
	     "Begins a slice that end() ends: on the calling thread's track, or on\n"
	     "track (an 'async' Track may end on another thread). Prefer slice(),\n"
	     "which cannot leave a slice open.");

static PyObject *py_begin(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
	(void)m;
	return named_now("begin", PFC_EVENT_SLICE_BEGIN, args, nargs, kw);
}

PyDoc_STRVAR(end_doc, "end(cat=None, *, track=None)\n--\n\n"
		      "Ends the innermost slice begun with begin() on the calling thread's\n"
		      "track, or on track. Use the category the slice began with.");

static PyObject *py_end(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	struct ev_call c;
	struct track_obj *tr;

	(void)m;
	if (parse_call("end", args, nargs, kwnames, false, &c) < 0)
		return NULL;
	if (c.flow || c.term || c.args) {
		PyErr_SetString(PyExc_TypeError, "end() takes only cat and track");
		return NULL;
	}
	if (!*c.cat->ref.enabled)
		Py_RETURN_NONE;
	if (track_arg(c.track, false, &tr) < 0)
		return NULL;
	write_end(c.cat, tr);
	Py_RETURN_NONE;
}

/* ------------------------------------------------------------ counters ---- */

PyDoc_STRVAR(counter_doc,
	     "counter(track, value, /, cat=None)\n--\n\n"
	     "A counter sample: track is a Track('...', 'counter') or a name (a\n"
	     "counter track of that name is made on first use); value an int\n"
	     "(64-bit; larger ones are sent as float) or a float.");

static PyObject *py_counter(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
			    PyObject *kwnames)
{
	PyObject *track, *value, *cat_arg = NULL;
	struct category_obj *c;
	struct track_obj *tr;
	Py_ssize_t i, n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	(void)m;
	if (nargs < 2 || nargs > 3) {
		PyErr_Format(PyExc_TypeError, "counter() takes 2 or 3 positional arguments (%zd given)",
			     nargs);
		return NULL;
	}
	track = args[0];
	value = args[1];
	if (nargs == 3)
		cat_arg = args[2];
	for (i = 0; i < n_kw; i++) {
		if (cat_arg || kw_classify(PyTuple_GET_ITEM(kwnames, i)) != KW_CAT) {
			PyErr_SetString(PyExc_TypeError, "counter() takes only the keyword 'cat'");
			return NULL;
		}
		cat_arg = args[nargs + i];
	}
	c = resolve_cat(cat_arg);
	if (!c)
		return NULL;
	if (PFC_LIKELY_(!*c->ref.enabled))
		Py_RETURN_NONE;
	if (PyUnicode_Check(track)) {
		tr = (struct track_obj *)PyDict_GetItemWithError(g.counter_tracks, track);
		if (!tr) {
			if (PyErr_Occurred())
				return NULL;
			if (PyUnicode_GET_LENGTH(track) == 0) {
				PyErr_SetString(PyExc_ValueError, "perfetto_c: a track needs a name");
				return NULL;
			}
			tr = track_make(track, PFC_TRACK_COUNTER, 0);
			if (!tr)
				return NULL;
			if (PyDict_SetItem(g.counter_tracks, track, (PyObject *)tr) < 0) {
				Py_DECREF(tr);
				return NULL;
			}
			Py_DECREF(tr);
		}
	} else if (track_arg(track, true, &tr) < 0) {
		return NULL;
	}
	if (PyLong_Check(value)) {
		int ovf;
		long long v = PyLong_AsLongLongAndOverflow(value, &ovf);

		if (v == -1 && PyErr_Occurred())
			return NULL;
		if (!ovf) {
			thread_check();
			pfc_te_counter_int(c->ref.cat, tr->t, v);
			Py_RETURN_NONE;
		}
	}
	{
		double d = PyFloat_AsDouble(value);

		if (d == -1.0 && PyErr_Occurred())
			return NULL;
		thread_check();
		pfc_te_counter_double(c->ref.cat, tr->t, d);
	}
	Py_RETURN_NONE;
}

/* -------------------------------------------------------------- slices ---- */

enum slice_state { SLICE_IDLE, SLICE_OPEN, SLICE_SKIPPED };

/* A slice to begin at __enter__; its annotations (name, value) pairs follow
 * the struct (ob_size pairs). Holds only str, int, float, bool and Track
 * references, so it cannot be part of a cycle (no GC). */
struct slice_obj {
	PyObject_VAR_HEAD
	struct category_obj *cat;    /* borrowed: categories live forever */
	PyObject *name;
	const char *name_u;
	bool dynamic;
	uint8_t state;
	struct track_obj *track;     /* or NULL */
	uint64_t flow, term;
	PyObject *ann[];             /* names at [0, n), values at [n, 2n) */
};

static PyTypeObject slice_type, null_slice_type;

static struct slice_obj *slice_alloc(Py_ssize_t n)
{
	struct slice_obj *s;

	if (n == 0 && g.n_free_slices > 0) {
		s = g.free_slices[--g.n_free_slices];
		return (struct slice_obj *)PyObject_InitVar((PyVarObject *)s, &slice_type, 0);
	}
	/* ob_size counts pointers: two per annotation. */
	return PyObject_NewVar(struct slice_obj, &slice_type, 2 * n);
}

static void slice_dealloc(PyObject *self)
{
	struct slice_obj *s = (struct slice_obj *)self;
	Py_ssize_t i, n = Py_SIZE(s);

	Py_DECREF(s->name);
	Py_XDECREF(s->track);
	for (i = 0; i < n; i++)
		Py_DECREF(s->ann[i]);
	if (n == 0 && g.n_free_slices < SLICE_FREE_MAX)
		g.free_slices[g.n_free_slices++] = s;
	else
		PyObject_Free(self);
}

PyDoc_STRVAR(slice_fn_doc,
	     "slice(name, /, cat=None, *, track=None, flow=None, terminating_flow=None,\n"
	     "      args=None, **annotations)\n--\n\n"
	     "A slice as a context manager: `with slice('load_batch', train, n=3):`\n"
	     "begins it and ends it when the block exits, also by an exception.\n"
	     "cat: a Category or its name (default: the 'python' category). track: a\n"
	     "Track of slices (default: the calling thread's). flow: an id that joins\n"
	     "this slice to other slices with the same id (also in other threads and\n"
	     "processes); terminating_flow: the flow ends at this slice. Keyword\n"
	     "arguments become annotations (bool, int, float, str, None; other values\n"
	     "as str(value); at most 32). When the category is off (checked here) it\n"
	     "returns a shared object that does nothing.");

/*
 * The cache slot of slice(name, cat) without keywords. A cached object is
 * handed out again only while the cache holds its one reference: then no
 * `with` (of any thread) has it open and nobody kept it, so its state can
 * start over. A name's str is the same object at each call from one line
 * of code, so the cache saves making and freeing an object per slice.
 */
static unsigned slice_cache_slot(const PyObject *name, const struct category_obj *cat)
{
	uintptr_t h = ((uintptr_t)name >> 4) ^ ((uintptr_t)cat >> 6);

	return (unsigned)(h ^ (h >> 7)) & (SLICE_CACHE_SLOTS - 1);
}

static PyObject *py_slice(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	struct ev_call c;
	struct slice_obj *s, **cached;
	struct track_obj *tr;
	struct ann a;
	uint64_t flow, term;
	const char *u;
	bool dynamic = false;
	Py_ssize_t i;

	(void)m;
	if (parse_call("slice", args, nargs, kwnames, true, &c) < 0)
		return NULL;
	if (PFC_LIKELY_(!*c.cat->ref.enabled)) {
		if (PFC_UNLIKELY_(!PyUnicode_Check(c.name)))
			return bad_name(c.name);
		return Py_NewRef(g.null_slice);
	}
	cached = c.n_kw == 0 ? &g.slice_cache[slice_cache_slot(c.name, c.cat)] : NULL;
	if (cached && *cached && (*cached)->name == c.name && (*cached)->cat == c.cat &&
	    Py_REFCNT(*cached) == 1) {
		(*cached)->state = SLICE_IDLE;
		return Py_NewRef(*cached);
	}
	cached = c.n_kw == 0 ? &g.slice_cache[slice_cache_slot(c.name, c.cat)] : NULL;
	if (cached && *cached && (*cached)->name == c.name && (*cached)->cat == c.cat &&
	    Py_REFCNT(*cached) == 1) {
		(*cached)->state = SLICE_IDLE;
		return Py_NewRef(*cached);
	}
	if (!(u = name_utf8(c.name, &dynamic)) || track_arg(c.track, false, &tr) < 0 ||
	    flow_arg(c.flow, &flow) < 0 || flow_arg(c.term, &term) < 0)
		return NULL;
	a.n = 0;
	if ((c.has_ann || c.args) && collect_ann(&c, &a) < 0)
		return NULL;
	s = slice_alloc(a.n);
	if (!s) {
		ann_clear(&a);
		return NULL;
	}
	s->cat = c.cat;
	s->name = Py_NewRef(c.name);
	s->name_u = u;
	s->dynamic = dynamic;
	s->state = SLICE_IDLE;
	s->track = tr ? (struct track_obj *)Py_NewRef(tr) : NULL;
	s->flow = flow;
	s->term = term;
	/* The references move from @a into the object. */
	for (i = 0; i < a.n; i++) {
		s->ann[i] = a.name[i];
		s->ann[a.n + i] = a.val[i];
	}
	if (cached && PyUnicode_CheckExact(c.name))
		Py_XSETREF(*cached, (struct slice_obj *)Py_NewRef(s));
	return (PyObject *)s;
}

static PyObject *slice_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	struct slice_obj *s = (struct slice_obj *)self;
	Py_ssize_t n = Py_SIZE(s) / 2;

	(void)args;
	(void)nargs;
	if (PFC_UNLIKELY_(s->state != SLICE_IDLE)) {
		PyErr_SetString(PyExc_RuntimeError, "perfetto_c: this slice is already open");
		return NULL;
	}
	if (!*s->cat->ref.enabled) {
		s->state = SLICE_SKIPPED;
		return Py_NewRef(self);
	}
	if (write_named(s->cat, PFC_EVENT_SLICE_BEGIN, s->name_u, s->dynamic, s->track, s->flow,
			s->term, s->ann, s->ann + n, n) < 0)
		return NULL;
	s->state = SLICE_OPEN;
	return Py_NewRef(self);
}

static PyObject *slice_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	struct slice_obj *s = (struct slice_obj *)self;

	(void)args;
	(void)nargs;
	if (s->state == SLICE_OPEN)
		write_end(s->cat, s->track);
	s->state = SLICE_IDLE;
	Py_RETURN_FALSE;
}

static PyObject *slice_repr(PyObject *self)
{
	struct slice_obj *s = (struct slice_obj *)self;

	return PyUnicode_FromFormat("<perfetto_c.Slice %R in %R>", s->name, s->cat->name);
}

static PyTypeObject slice_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c.Slice",
	.tp_basicsize = sizeof(struct slice_obj),
	.tp_itemsize = sizeof(PyObject *),
	.tp_dealloc = slice_dealloc,
	.tp_repr = slice_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = PyDoc_STR("An open or pending slice; made by perfetto_c.slice()."),
};

/* What slice() returns while its category is off: does nothing. */
static PyObject *null_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)args;
	(void)nargs;
	return Py_NewRef(self);
}

static PyObject *null_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	(void)args;
	(void)nargs;
	Py_RETURN_FALSE;
}

static PyTypeObject null_slice_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c.NullSlice",
	.tp_basicsize = sizeof(PyObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = PyDoc_STR("slice() of a category that is off: does nothing."),
};

/* ------------------------------------------------- traced functions ---- */

/* A function wrapped so that each call is a slice (perfetto_c.traced). */
struct traced_obj {
	PyObject_HEAD
	PyObject *func;
	struct category_obj *cat;    /* borrowed: categories live forever */
	PyObject *name;
	const char *name_u;
	bool dynamic;
	vectorcallfunc vectorcall;
	PyObject *dict;              /* __name__, __doc__, __wrapped__, ... */
};

static PyTypeObject traced_type;

static PyObject *traced_call(PyObject *self, PyObject *const *args, size_t nargsf,
			     PyObject *kwnames)
{
	struct traced_obj *t = (struct traced_obj *)self;
	struct category_obj *c = t->cat;
	PyObject *res;

	if (PFC_LIKELY_(!*c->ref.enabled))
		return PyObject_Vectorcall(t->func, args, nargsf, kwnames);
	if (write_named(c, PFC_EVENT_SLICE_BEGIN, t->name_u, t->dynamic, NULL, 0, 0, NULL, NULL,
			0) < 0)
		return NULL;
	res = PyObject_Vectorcall(t->func, args, nargsf, kwnames);
	pfc_te_slice_end(c->ref.cat);
	return res;
}

static PyObject *traced_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"func", "name", "cat", NULL};
	PyObject *func, *name, *cat = NULL;
	struct category_obj *c;
	struct traced_obj *t;
	const char *u;
	bool dynamic = false;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OU|O:_traced", kwlist, &func, &name, &cat))
		return NULL;
	if (!PyCallable_Check(func)) {
		PyErr_SetString(PyExc_TypeError, "perfetto_c: traced needs a callable");
		return NULL;
	}
	if (!(c = resolve_cat(cat)) || !(u = name_utf8(name, &dynamic)))
		return NULL;
	t = (struct traced_obj *)type->tp_alloc(type, 0);
	if (!t)
		return NULL;
	t->func = Py_NewRef(func);
	t->cat = c;
	t->name = Py_NewRef(name);
	t->name_u = u;
	t->dynamic = dynamic;
	t->vectorcall = traced_call;
	t->dict = NULL;
	return (PyObject *)t;
}

static int traced_traverse(PyObject *self, visitproc visit, void *arg)
{
	struct traced_obj *t = (struct traced_obj *)self;

	Py_VISIT(t->func);
	Py_VISIT(t->dict);
	return 0;
}

static int traced_clear(PyObject *self)
{
	struct traced_obj *t = (struct traced_obj *)self;

	Py_CLEAR(t->func);
	Py_CLEAR(t->dict);
	return 0;
}

static void traced_dealloc(PyObject *self)
{
	struct traced_obj *t = (struct traced_obj *)self;

	PyObject_GC_UnTrack(self);
	traced_clear(self);
	Py_CLEAR(t->name);
	Py_TYPE(self)->tp_free(self);
}

/* As a method: bound like a function. */
static PyObject *traced_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None)
		return Py_NewRef(self);
	return PyMethod_New(self, obj);
}

static PyObject *traced_repr(PyObject *self)
{
	struct traced_obj *t = (struct traced_obj *)self;

	return PyUnicode_FromFormat("<perfetto_c.traced %R of %R>", t->name, t->func);
}

static PyObject *traced_get_func(PyObject *self, void *closure)
{
	(void)closure;
	return Py_NewRef(((struct traced_obj *)self)->func);
}

static PyGetSetDef traced_getset[] = {
	{"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
	{"__func__", traced_get_func, NULL, PyDoc_STR("The wrapped callable."), NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject traced_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c._traced",
	.tp_basicsize = sizeof(struct traced_obj),
	.tp_dealloc = traced_dealloc,
	.tp_vectorcall_offset = offsetof(struct traced_obj, vectorcall),
	.tp_repr = traced_repr,
	.tp_call = PyVectorcall_Call,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = PyDoc_STR("_traced(func, name, cat=None): func whose calls are slices."),
	.tp_traverse = traced_traverse,
	.tp_clear = traced_clear,
	.tp_getset = traced_getset,
	.tp_descr_get = traced_get,
	.tp_dictoffset = offsetof(struct traced_obj, dict),
	.tp_alloc = PyType_GenericAlloc,
	.tp_new = traced_new,
	.tp_free = PyObject_GC_Del,
};

/* ----------------------------------------------------------- lifecycle ---- */

PyDoc_STRVAR(init_doc,
	     "init(backend='system', name=None, *, socket=None, output=None, config=None,\n"
	     "     shm_size_kb=0)\n--\n\n"
	     "Starts the SDK. backend 'system': a producer of the tracing service\n"
	     "(traced) on socket (default: $PERFETTO_PRODUCER_SOCK_NAME or Perfetto's\n"
	     "default); returns at once and connects in the background. backend\n"
	     "'in_process': a private service in this process writes the trace to\n"
	     "output (a path) until shutdown(); config is a serialized TraceConfig\n"
	     "(see in_process_config()), default: every category. name: how the\n"
	     "service lists this process (default 'pfc.<program>'). Raises\n"
	     "RuntimeError if already initialized, OSError if the output or the\n"
	     "private service fails.");

static PyObject *py_init(PyObject *m, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"backend", "name", "socket", "output", "config", "shm_size_kb",
				 NULL};
	const char *backend = "system", *name = NULL, *sock = NULL, *path = NULL;
	PyObject *output = NULL, *output_b = NULL, *config = NULL;
	Py_buffer cfg = {0};
	unsigned int shm_kb = 0;
	enum pfc_backend b;
	int rc;

	(void)m;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|sz$zOOI:init", kwlist, &backend, &name,
					 &sock, &output, &config, &shm_kb))
		return NULL;
	if (!strcmp(backend, "system")) {
		b = PFC_BACKEND_SYSTEM;
	} else if (!strcmp(backend, "in_process")) {
		b = PFC_BACKEND_IN_PROCESS;
	} else {
		PyErr_Format(PyExc_ValueError,
			     "perfetto_c: backend must be 'system' or 'in_process', not '%s'",
			     backend);
		return NULL;
	}
	if (output == Py_None)
		output = NULL;
	if (config == Py_None)
		config = NULL;
	if (b == PFC_BACKEND_SYSTEM && (output || config)) {
		PyErr_SetString(PyExc_ValueError,
				"perfetto_c: output and config are for the 'in_process' backend");
		return NULL;
	}
	if (b == PFC_BACKEND_IN_PROCESS) {
		if (!output) {
			PyErr_SetString(PyExc_ValueError,
					"perfetto_c: the 'in_process' backend needs output=PATH");
			return NULL;
		}
		if (!PyUnicode_FSConverter(output, &output_b))
			return NULL;
		path = PyBytes_AS_STRING(output_b);
		if (config && PyObject_GetBuffer(config, &cfg, PyBUF_SIMPLE) < 0)
			goto fail;
	}
	if ((rc = pfc_set_socket(sock)) < 0 || (rc = pfc_set_shm_size_kb(shm_kb)) < 0 ||
	    (path && (rc = pfc_set_in_process_output(path, cfg.buf, (size_t)cfg.len)) < 0)) {
		if (rc == -EBUSY)
			goto busy;
		errno_to_exc(rc, "init");
		goto fail;
	}
	/* Threads name themselves afresh for this session of the SDK. */
	g.init_gen++;
	Py_BEGIN_ALLOW_THREADS
	rc = pfc_init(b, name);
	Py_END_ALLOW_THREADS
	if (rc == -EALREADY)
		goto busy;
	if (rc < 0) {
		if (path) {
			errno = -rc;
			PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, output);
		} else {
			errno_to_exc(rc, "init");
		}
		goto fail;
	}
	if (cfg.obj)
		PyBuffer_Release(&cfg);
	Py_XDECREF(output_b);
	Py_RETURN_NONE;
busy:
	PyErr_SetString(PyExc_RuntimeError, "perfetto_c: already initialized");
fail:
	if (cfg.obj)
		PyBuffer_Release(&cfg);
	Py_XDECREF(output_b);
	return NULL;
}

PyDoc_STRVAR(flush_doc,
	     "flush(timeout_ms=5000)\n--\n\n"
	     "Hands every thread's buffered events to the service and waits until it\n"
	     "has them (at most timeout_ms). Returns True if it did; False on a\n"
	     "timeout, without a service, or before init().");

static PyObject *py_flush(PyObject *m, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"timeout_ms", NULL};
	unsigned int ms = 5000;
	int rc;

	(void)m;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|I:flush", kwlist, &ms))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = pfc_flush(ms);
	Py_END_ALLOW_THREADS
	return PyBool_FromLong(rc == 0);
}

PyDoc_STRVAR(shutdown_doc,
	     "shutdown()\n--\n\n"
	     "Flushes (at most 1 s), disconnects and stops the SDK; the in_process\n"
	     "backend's trace file is complete when it returns. Events after it are\n"
	     "dropped; init() may start it again. Also runs at interpreter exit.\n"
	     "Holds the GIL, so no other Python thread is inside an event meanwhile.");

static PyObject *py_shutdown(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	pfc_shutdown();
	Py_RETURN_NONE;
}

PyDoc_STRVAR(stats_doc, "stats()\n--\n\n"
			"The SDK's counters as a dict: events_written, events_dropped,\n"
			"events_dropped_no_service, chunks_committed, chunks_reclaimed,\n"
			"writers, connections.");

static PyObject *py_stats(PyObject *m, PyObject *unused)
{
	struct pfc_stats s;

	(void)m;
	(void)unused;
	memset(&s, 0, sizeof(s));
	(void)pfc_get_stats(&s, sizeof(s));
	return Py_BuildValue("{sKsKsKsKsKsKsK}", "events_written",
			     (unsigned long long)s.events_written, "events_dropped",
			     (unsigned long long)s.events_dropped, "events_dropped_no_service",
			     (unsigned long long)s.events_dropped_no_service, "chunks_committed",
			     (unsigned long long)s.chunks_committed, "chunks_reclaimed",
			     (unsigned long long)s.chunks_reclaimed, "writers",
			     (unsigned long long)s.writers, "connections",
			     (unsigned long long)s.connections);
}

PyDoc_STRVAR(new_flow_id_doc,
	     "new_flow_id()\n--\n\n"
	     "A flow id no other call in this process returns (and, being random,\n"
	     "unlikely in any other process): pass it as flow= to the slice where the\n"
	     "flow starts and as flow= or terminating_flow= where it continues.");

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static PyObject *py_new_flow_id(PyObject *m, PyObject *unused)
{
	uint64_t id;

	(void)m;
	(void)unused;
	/* A bijection of a counter: distinct within the process. */
	do
		id = mix64(g.flow_seed + g.flow_next++);
	while (!id);
	return PyLong_FromUnsignedLongLong(id);
}

PyDoc_STRVAR(name_cache_doc,
	     "_name_cache(limit=None)\n--\n\n"
	     "(entries, limit) of the name cache, after setting its limit if given.\n"
	     "Names past the limit are sent in full with every event. For tests.");

static PyObject *py_name_cache(PyObject *m, PyObject *args)
{
	Py_ssize_t limit = -1;

	(void)m;
	if (!PyArg_ParseTuple(args, "|n:_name_cache", &limit))
		return NULL;
	if (limit >= 0)
		g.names_max = limit;
	return Py_BuildValue("(nn)", PyDict_GET_SIZE(g.names), g.names_max);
}

static PyMethodDef module_methods[] = {
	{"init", (PyCFunction)(void (*)(void))py_init, METH_VARARGS | METH_KEYWORDS, init_doc},
	{"flush", (PyCFunction)(void (*)(void))py_flush, METH_VARARGS | METH_KEYWORDS, flush_doc},
	{"shutdown", py_shutdown, METH_NOARGS, shutdown_doc},
	{"stats", py_stats, METH_NOARGS, stats_doc},
	{"slice", (PyCFunction)(void (*)(void))py_slice, METH_FASTCALL | METH_KEYWORDS,
	 slice_fn_doc},
	{"instant", (PyCFunction)(void (*)(void))py_instant, METH_FASTCALL | METH_KEYWORDS,
	 instant_doc},
	{"begin", (PyCFunction)(void (*)(void))py_begin, METH_FASTCALL | METH_KEYWORDS, begin_doc},
	{"end", (PyCFunction)(void (*)(void))py_end, METH_FASTCALL | METH_KEYWORDS, end_doc},
	{"counter", (PyCFunction)(void (*)(void))py_counter, METH_FASTCALL | METH_KEYWORDS,
	 counter_doc},
	{"new_flow_id", py_new_flow_id, METH_NOARGS, new_flow_id_doc},
	{"_name_cache", py_name_cache, METH_VARARGS, name_cache_doc},
	{NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc, "perfetto_c._pfc: the C part of perfetto_c (see perfetto_c).");

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "perfetto_c._pfc",
	.m_doc = module_doc,
	.m_size = -1,
	.m_methods = module_methods,
};

static int add_type(PyObject *mod, PyTypeObject *type, const char *name)
{
	if (PyType_Ready(type) < 0)
		return -1;
	Py_INCREF(type);
	if (PyModule_AddObject(mod, name, (PyObject *)type) < 0) {
		Py_DECREF(type);
		return -1;
	}
	return 0;
}

static int module_setup(PyObject *mod)
{
	PyObject *threading, *dflt;
	unsigned long long s;

	if (add_type(mod, &category_type, "Category") < 0 ||
	    add_type(mod, &track_type, "Track") < 0 || add_type(mod, &slice_type, "Slice") < 0 ||
	    add_type(mod, &null_slice_type, "NullSlice") < 0 ||
	    add_type(mod, &traced_type, "_traced") < 0)
		return -1;
	if (ctx_methods_ready() < 0 ||
	    ctx_methods_add(&slice_type, slice_enter, slice_exit, "Begins the slice.",
			    "Ends the slice (whatever the exception); returns False.") < 0 ||
	    ctx_methods_add(&null_slice_type, null_enter, null_exit, "Does nothing.",
			    "Does nothing; returns False.") < 0)
		return -1;
	if (!(g.categories = PyDict_New()) || !(g.names = PyDict_New()) ||
	    !(g.counter_tracks = PyDict_New()))
		return -1;
	if (!(g.s_cat = PyUnicode_InternFromString("cat")) ||
	    !(g.s_track = PyUnicode_InternFromString("track")) ||
	    !(g.s_flow = PyUnicode_InternFromString("flow")) ||
	    !(g.s_term = PyUnicode_InternFromString("terminating_flow")) ||
	    !(g.s_args = PyUnicode_InternFromString("args")) ||
	    !(g.s_name = PyUnicode_InternFromString("name")) ||
	    !(g.thread_key = PyUnicode_InternFromString("perfetto_c.thread_name")))
		return -1;
	if (!(g.null_slice = PyObject_New(PyObject, &null_slice_type)))
		return -1;
	threading = PyImport_ImportModule("threading");
	if (!threading)
		return -1;
	g.current_thread = PyObject_GetAttrString(threading, "current_thread");
	Py_DECREF(threading);
	if (!g.current_thread)
		return -1;
	/* Flow ids: random per process, from os.urandom. */
	{
		PyObject *os = PyImport_ImportModule("os"), *b = NULL;

		if (os)
			b = PyObject_CallMethod(os, "urandom", "i", 8);
		if (b && PyBytes_Check(b) && PyBytes_GET_SIZE(b) == 8)
			memcpy(&s, PyBytes_AS_STRING(b), 8);
		else
			s = (unsigned long long)(uintptr_t)&g ^ 0x9e3779b97f4a7c15ull;
		Py_XDECREF(b);
		Py_XDECREF(os);
		PyErr_Clear();
	}
	g.flow_seed = s;
	dflt = PyUnicode_FromString(DEFAULT_CATEGORY);
	if (!dflt)
		return -1;
	g.default_cat = category_get(dflt, "Python events without a category", NULL);
	Py_DECREF(dflt);
	if (!g.default_cat)
		return -1;
	if (PyModule_AddObjectRef(mod, "default_category", (PyObject *)g.default_cat) < 0)
		return -1;
	Py_DECREF(g.default_cat); /* g.categories holds it */
	return 0;
}

PyMODINIT_FUNC PyInit__pfc(void)
{
	PyObject *mod = PyModule_Create(&module_def);

	if (mod && module_setup(mod) < 0)
		Py_CLEAR(mod);
	return mod;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * ctx_method.c - the `with` statement looks __enter__ and __exit__ up on
 * the type and binds each to the object. A method from tp_methods binds
 * into a new builtin method object, tracked by the garbage collector, at
 * every `with`: two of them cost about as much as the slice's two events.
 * Here each is a descriptor whose binding is a small untracked object from
 * a free list, called through vectorcall. A binding holds only its object;
 * the objects it is used for hold no containers, so no cycle can form.
 * Everything runs under the GIL.
 */
#include "ctx_method.h"

#include <stdbool.h>
#include <stddef.h>

/* Bindings kept for reuse. */
#define BOUND_FREE_MAX 32

struct ctx_descr {
	PyObject_HEAD
	ctx_fn fn;
	bool no_args;                /* __enter__: a call with arguments fails */
	const char *name;
	const char *doc;
};

struct ctx_bound {
	PyObject_HEAD
	vectorcallfunc vectorcall;
	struct ctx_descr *descr;     /* strong */
	PyObject *self;              /* strong */
};

static PyTypeObject descr_type, bound_type;
static struct ctx_bound *g_free[BOUND_FREE_MAX];
static int g_n_free;

static PyObject *call(struct ctx_descr *d, PyObject *self, PyObject *const *args, Py_ssize_t n)
{
	if (d->no_args && n != 0) {
		PyErr_Format(PyExc_TypeError, "%s() takes no arguments (%zd given)", d->name, n);
		return NULL;
	}
	return d->fn(self, args, n);
}

static PyObject *bound_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
				  PyObject *kwnames)
{
	struct ctx_bound *b = (struct ctx_bound *)callable;

	if (kwnames && PyTuple_GET_SIZE(kwnames)) {
		PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", b->descr->name);
		return NULL;
	}
	return call(b->descr, b->self, args, PyVectorcall_NARGS(nargsf));
}

static void bound_dealloc(PyObject *o)
{
	struct ctx_bound *b = (struct ctx_bound *)o;

	Py_DECREF(b->self);
	Py_DECREF(b->descr);
	if (g_n_free < BOUND_FREE_MAX)
		g_free[g_n_free++] = b;
	else
		PyObject_Free(o);
}

static PyObject *bound_repr(PyObject *o)
{
	struct ctx_bound *b = (struct ctx_bound *)o;

	return PyUnicode_FromFormat("<method %s of %R>", b->descr->name, b->self);
}

static PyTypeObject bound_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c._BoundContextMethod",
	.tp_basicsize = sizeof(struct ctx_bound),
	.tp_dealloc = bound_dealloc,
	.tp_repr = bound_repr,
	.tp_call = PyVectorcall_Call,
	.tp_vectorcall_offset = offsetof(struct ctx_bound, vectorcall),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
};

static PyObject *descr_get(PyObject *o, PyObject *self, PyObject *type)
{
	struct ctx_bound *b;

	(void)type;
	if (!self || self == Py_None)
		return Py_NewRef(o);
	if (g_n_free > 0) {
		b = g_free[--g_n_free];
		PyObject_Init((PyObject *)b, &bound_type);
	} else if (!(b = PyObject_New(struct ctx_bound, &bound_type))) {
		return NULL;
	}
	b->vectorcall = bound_vectorcall;
	b->descr = (struct ctx_descr *)Py_NewRef(o);
	b->self = Py_NewRef(self);
	return (PyObject *)b;
}

/* Called on the class: Type.__exit__(obj, ...). */
static PyObject *descr_call(PyObject *o, PyObject *args, PyObject *kwargs)
{
	struct ctx_descr *d = (struct ctx_descr *)o;
	Py_ssize_t n = PyTuple_GET_SIZE(args);

	if ((kwargs && PyDict_GET_SIZE(kwargs)) || n < 1) {
		PyErr_Format(PyExc_TypeError, "%s() needs its object and no keyword arguments",
			     d->name);
		return NULL;
	}
	return call(d, PyTuple_GET_ITEM(args, 0), &PyTuple_GET_ITEM(args, 1), n - 1);
}

static PyObject *descr_get_doc(PyObject *o, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(((struct ctx_descr *)o)->doc);
}

static PyGetSetDef descr_getset[] = {
	{"__doc__", descr_get_doc, NULL, NULL, NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject descr_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "perfetto_c._ContextMethod",
	.tp_basicsize = sizeof(struct ctx_descr),
	.tp_dealloc = (destructor)PyObject_Free,
	.tp_call = descr_call,
	.tp_descr_get = descr_get,
	.tp_getset = descr_getset,
	.tp_flags = Py_TPFLAGS_DEFAULT,
};

int ctx_methods_ready(void)
{
	return PyType_Ready(&descr_type) < 0 || PyType_Ready(&bound_type) < 0 ? -1 : 0;
}

static int add(PyTypeObject *type, const char *name, ctx_fn fn, bool no_args, const char *doc)
{
	struct ctx_descr *d = PyObject_New(struct ctx_descr, &descr_type);
	int rc;

	if (!d)
		return -1;
	d->fn = fn;
	d->no_args = no_args;
	d->name = name;
	d->doc = doc;
	rc = PyDict_SetItemString(type->tp_dict, name, (PyObject *)d);
	Py_DECREF(d);
	return rc;
}

int ctx_methods_add(PyTypeObject *type, ctx_fn enter, ctx_fn exit, const char *enter_doc,
		    const char *exit_doc)
{
	if (add(type, "__enter__", enter, true, enter_doc) < 0 ||
	    add(type, "__exit__", exit, false, exit_doc) < 0)
		return -1;
	PyType_Modified(type);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0
/*
 * ctx_method.h - __enter__ and __exit__ for the module's C context
 * managers, bound without a new garbage-collected object per `with`.
 */
#ifndef PFC_PY_CTX_METHOD_H
#define PFC_PY_CTX_METHOD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* A context manager method: @self and the call's positional arguments. */
typedef PyObject *(*ctx_fn)(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* Readies the method types; once, before ctx_methods_add(). */
int ctx_methods_ready(void);

/*
 * Sets @type's __enter__ (takes no arguments) and __exit__ (any number of
 * positional ones) after PyType_Ready(@type). Return: 0, or -1 with an
 * exception set.
 */
int ctx_methods_add(PyTypeObject *type, ctx_fn enter, ctx_fn exit, const char *enter_doc,
		    const char *exit_doc);

#endif

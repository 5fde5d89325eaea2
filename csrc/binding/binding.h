/* What the files of the binding (csrc/binding/) share.  The binding is the
 * only C that knows Python: it converts and validates arguments, releases
 * the GIL around stepping and turns the core's status codes into
 * exceptions; no scheduling logic lives here. */
#ifndef PS_BINDING_H
#define PS_BINDING_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "module_state.h"
#include "policy_lib.h"
#include "py_policy.h"
#include "pysched.h"

/* These were file-local before the binding was split into files: hidden,
 * they stay out of the extension's exported symbols, which the policy
 * libraries linked against it see. */
#pragma GCC visibility push(hidden)

/* ---- convert.c ---- */

/* ValueError(msg); returns NULL. */
PyObject *raise_value(const char *msg);
const char *name_utf8(PyObject *o, const char *what);
int u64_arg(PyObject *o, const char *what, uint64_t *out);
const psPreset *preset_arg(const module_state *st, PyObject *o);
int apply_params(psModel *m, PyObject *params, PyObject *config_error);
int build_model(psModel *m, const psPreset *pre, int cpus, int hz, uint64_t seed,
                PyObject *params, PyObject *config_error);

/* ---- py_ext.c ---- */

/* the exit of the sched_ext scheduler a state runs (ps_ext_exit_info) as
 * (kind, message, dump, op or None, pid, ns, held_ns, dsq_id, problem or None) */
PyObject *ext_exit_tuple(const psModel *m, const psData *d);

/* ---- library.c ---- */

const psPreset *known_preset(const module_state *st, int i);
const psPreset *find_preset(const module_state *st, const char *name);
/* (name, policy, doc, hz) of a preset, as presets() lists it */
PyObject *preset_tuple(const psPreset *p);
const psPreset *snapshot_preset(const module_state *st, const Py_buffer *view, int lib);
PyObject *mod_load_policy_library(PyObject *self, PyObject *args);
PyObject *mod_activate_policy_library(PyObject *self, PyObject *args);

/* ---- sim.c ---- */

extern PyType_Spec Sim_spec;

#pragma GCC visibility pop

#endif

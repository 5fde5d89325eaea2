/* pysched._core, the module: its state (module_state.h), made, traversed
 * and released here, the exceptions, and the module-level functions
 * (presets, policy_info, record_layouts, formula, derived; the policy
 * libraries' are in library.c).  Records cross as bytes whose layout the
 * core describes (record_layouts), so Python builds NumPy structured arrays
 * without the binding touching the NumPy C API. */
#include "binding.h"

/* 1 in the sanitizer build (PYSCHED_SANITIZE=1: AddressSanitizer and
 * UBSan), where pysched.build_policy builds a policy library so too. */
#if defined(__SANITIZE_ADDRESS__)
#define PS_SANITIZE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PS_SANITIZE 1
#endif
#endif
#ifndef PS_SANITIZE
#define PS_SANITIZE 0
#endif

static PyObject *field_list(const psFieldInfo *f, int n) {
  PyObject *l = PyList_New(n);
  if (!l) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject *t = Py_BuildValue("(ss)", f[i].name, f[i].doc ? f[i].doc : "");
    if (!t) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, i, t);
  }
  return l;
}

/* The names of the task fields (generic, then the policy's) read as
 * unsigned 64-bit values (PS_F_U64: cpus_allowed). */
static PyObject *unsigned_fields(const psPolicy *pol) {
  PyObject *l = PyList_New(0);
  for (int k = 0; l && k < 2; k++) {
    const psFieldInfo *f = k ? pol->task_fields : ps_task_fields;
    int n = k ? pol->ntask_fields : ps_ntask_fields;
    for (int i = 0; i < n; i++) {
      if (f[i].type != PS_F_U64) continue;
      PyObject *name = PyUnicode_FromString(f[i].name);
      if (!name || PyList_Append(l, name)) { Py_XDECREF(name); Py_CLEAR(l); break; }
      Py_DECREF(name);
    }
  }
  return l;
}

/* ---- module functions ---- */

static PyObject *mod_presets(PyObject *self, PyObject *noargs) {
  const module_state *st = PyModule_GetState(self);
  PyObject *l = PyList_New(0);
  const psPreset *p;
  for (int i = 0; l && (p = known_preset(st, i)); i++) {
    PyObject *t = preset_tuple(p);
    if (!t || PyList_Append(l, t)) Py_CLEAR(l);
    Py_XDECREF(t);
  }
  return l;
}

static PyObject *name_list(const char *const *names) {
  PyObject *l = PyList_New(0);
  for (int i = 0; l && names && names[i]; i++) {
    PyObject *o = PyUnicode_FromString(names[i]);
    if (!o || PyList_Append(l, o)) Py_CLEAR(l);
    Py_XDECREF(o);
  }
  return l;
}

/* policy_info(preset, hz=0) -> dict: params (name, default, min, max, unit,
 * doc, hz_scaled) for that preset at that HZ (0: its default), the
 * state-field tables and the names of the unsigned 64-bit task fields, the headline fields, the queue columns (name,
 * labels) and the formulas (name, args, doc). */
static PyObject *mod_policy_info(PyObject *self, PyObject *args) {
  PyObject *name;
  int hz = 0;
  if (!PyArg_ParseTuple(args, "O|i", &name, &hz)) return NULL;
  const psPreset *pre = preset_arg(PyModule_GetState(self), name);
  if (!pre) return NULL;
  psModel m;
  char err[PS_ERRLEN];
  /* the defaults as the table gives them, whether or not they fit together
   * at this HZ (Simulator(params=) may replace those that do not) */
  if (ps_model_defaults(&m, pre, 1, hz, 0, err, sizeof err)) return raise_value(err);
  const psPolicy *pol = pre->policy;
  PyObject *params = PyList_New(pol->nparams);
  for (int i = 0; params && i < pol->nparams; i++) {
    const psParamInfo *p = &pol->params[i];
    PyObject *t = Py_BuildValue("(sLLLssi)", p->name, (long long)m.param[i], (long long)p->min,
                                (long long)p->max, p->unit, p->doc, p->hz_scaled);
    if (!t) { Py_CLEAR(params); break; }
    PyList_SET_ITEM(params, i, t);
  }
  int ncol;
  const psColumn *cols = ps_queue_columns(pol, &ncol);
  PyObject *columns = PyList_New(ncol);
  for (int i = 0; columns && i < ncol; i++) {
    PyObject *t = Py_BuildValue("(sz)", cols[i].name, cols[i].labels);
    if (!t) { Py_CLEAR(columns); break; }
    PyList_SET_ITEM(columns, i, t);
  }
  PyObject *formulas = PyList_New(pol->nformulas);
  for (int i = 0; formulas && i < pol->nformulas; i++) {
    const psFormula *f = &pol->formulas[i];
    PyObject *t = Py_BuildValue("(sss)", f->name, f->args, f->doc);
    if (!t) { Py_CLEAR(formulas); break; }
    PyList_SET_ITEM(formulas, i, t);
  }
  int model_hz = m.hz;
  ps_model_free(&m);
  if (!params || !columns || !formulas) {
    Py_XDECREF(params);
    Py_XDECREF(columns);
    Py_XDECREF(formulas);
    return NULL;
  }
  return Py_BuildValue("{s:s,s:s,s:s,s:i,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:i}", "preset", pre->name,
                       "policy", pol->name, "doc", pol->doc, "hz", model_hz, "params", params,
                       "task_fields", field_list(pol->task_fields, pol->ntask_fields), "rq_fields",
                       field_list(pol->rq_fields, pol->nrq_fields), "generic_fields",
                       field_list(ps_task_fields, ps_ntask_fields), "unsigned_fields",
                       unsigned_fields(pol), "headline",
                       name_list(pol->headline), "queue_columns", columns, "formulas", formulas,
                       "max_prio", pol->max_prio);
}

#define LAYOUT(type, field, fmt) Py_BuildValue("(sns)", #field, (Py_ssize_t)offsetof(type, field), fmt)
static PyObject *mod_record_layouts(PyObject *self, PyObject *noargs) {
  PyObject *ev = Py_BuildValue("[NNNNNNN]", LAYOUT(psEventRec, time_ns, "<i8"),
                               LAYOUT(psEventRec, cpu, "<i4"), LAYOUT(psEventRec, kind, "<i2"),
                               LAYOUT(psEventRec, pid, "<i4"), LAYOUT(psEventRec, other, "<i4"),
                               LAYOUT(psEventRec, prio, "<i2"), LAYOUT(psEventRec, value, "<i8"));
  PyObject *lat = Py_BuildValue("[NNNN]", LAYOUT(psLatencyRec, time_ns, "<i8"),
                                LAYOUT(psLatencyRec, pid, "<i4"), LAYOUT(psLatencyRec, cpu, "<i4"),
                                LAYOUT(psLatencyRec, latency_ns, "<i8"));
  PyObject *ser = Py_BuildValue("[NNNN]", LAYOUT(psSampleRec, time_ns, "<i8"),
                                LAYOUT(psSampleRec, pid, "<i4"), LAYOUT(psSampleRec, field, "<i4"),
                                LAYOUT(psSampleRec, value, "<i8"));
  PyObject *per = Py_BuildValue(
      "[NNNNNNNNN]", LAYOUT(psPeriodicRec, start_ns, "<i8"), LAYOUT(psPeriodicRec, due_ns, "<i8"),
      LAYOUT(psPeriodicRec, latency_ns, "<i8"), LAYOUT(psPeriodicRec, finish_ns, "<i8"),
      LAYOUT(psPeriodicRec, missed_latency_ns, "<i8"), LAYOUT(psPeriodicRec, pid, "<i4"),
      LAYOUT(psPeriodicRec, met, "<i4"), LAYOUT(psPeriodicRec, missed, "<i4"),
      LAYOUT(psPeriodicRec, dropped, "<i4"));
  return Py_BuildValue("{s:(Nn),s:(Nn),s:(Nn),s:(Nn)}", "event", ev, (Py_ssize_t)sizeof(psEventRec),
                       "latency", lat, (Py_ssize_t)sizeof(psLatencyRec), "series", ser,
                       (Py_ssize_t)sizeof(psSampleRec), "periodic", per,
                       (Py_ssize_t)sizeof(psPeriodicRec));
}

/* A model of `preset` at `hz` (0: its default) with `params` applied, for
 * the formula calls. */
static int formula_model(PyObject *mod, psModel *m, const char *preset, int hz, PyObject *params) {
  const psPreset *pre = find_preset(PyModule_GetState(mod), preset);
  if (!pre) return -1;
  return build_model(m, pre, 1, hz, 0, params,
                     ((module_state *)PyModule_GetState(mod))->config_error);
}

/* formula(preset, name, hz, params, args) -> int: the policy's own C, as
 * its formula table declares it. */
static PyObject *mod_formula(PyObject *self, PyObject *args) {
  const char *preset, *fn;
  int hz;
  PyObject *params, *fargs;
  if (!PyArg_ParseTuple(args, "ssiOO!", &preset, &fn, &hz, &params, &PyTuple_Type, &fargs))
    return NULL;
  psModel m;
  if (formula_model(self, &m, preset, hz, params)) return NULL;
  int i = ps_formula_index(m.policy, fn);
  if (i < 0) {
    PyErr_Format(PyExc_KeyError, "policy %s has no formula '%s'", m.policy->name, fn);
    ps_model_free(&m);
    return NULL;
  }
  int64_t a[4] = {0};
  Py_ssize_t n = PyTuple_GET_SIZE(fargs);
  for (Py_ssize_t k = 0; k < n && k < 4; k++) {
    a[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(fargs, k));
    if (a[k] == -1 && PyErr_Occurred()) {
      ps_model_free(&m);
      return NULL;
    }
  }
  int64_t r;
  char err[PS_ERRLEN];
  int rc = ps_formula_call(&m, i, a, (int)n, &r, err, sizeof err);
  ps_model_free(&m);
  if (rc) return raise_value(err);
  return PyLong_FromLongLong(r);
}

/* derived(preset, hz, params) -> dict of the policy's derived constants. */
static PyObject *mod_derived(PyObject *self, PyObject *args) {
  const char *preset;
  int hz;
  PyObject *params;
  if (!PyArg_ParseTuple(args, "siO", &preset, &hz, &params)) return NULL;
  psModel m;
  if (formula_model(self, &m, preset, hz, params)) return NULL;
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < m.policy->nderived_fields; i++) {
    PyObject *v = PyLong_FromLongLong(ps_derived_value(&m, i));
    if (!v || PyDict_SetItemString(d, m.policy->derived_fields[i].name, v)) Py_CLEAR(d);
    Py_XDECREF(v);
  }
  ps_model_free(&m);
  return d;
}

static PyMethodDef module_methods[] = {
    {"presets", mod_presets, METH_NOARGS, "[(preset, policy, doc)]"},
    {"policy_info", mod_policy_info, METH_VARARGS, "policy_info(preset, hz=0)"},
    {"record_layouts", mod_record_layouts, METH_NOARGS, "layouts of the record types"},
    {"formula", mod_formula, METH_VARARGS, "formula(preset, name, hz, params, args)"},
    {"derived", mod_derived, METH_VARARGS, "derived(preset, hz, params): derived constants"},
    {"load_policy_library", mod_load_policy_library, METH_VARARGS,
     "load_policy_library(path, origin) -> (index, presets): load and check, inactive"},
    {"activate_policy_library", mod_activate_policy_library, METH_VARARGS,
     "activate_policy_library(index, replaces=-1): its presets become known by name"},
    {NULL, NULL, 0, NULL},
};

/* A new exception class pysched._core.name deriving from Error and `also`
 * (NULL: from Exception), added to the module. */
static PyObject *new_error(PyObject *mod, const char *name, PyObject *error, PyObject *also,
                           const char *doc) {
  char qual[64];
  snprintf(qual, sizeof qual, "pysched._core.%s", name);
  PyObject *bases = error ? PyTuple_Pack(2, error, also) : NULL;
  if (error && !bases) return NULL;
  PyObject *e = PyErr_NewExceptionWithDoc(qual, doc, bases, NULL);
  Py_XDECREF(bases);
  if (e && PyModule_AddObjectRef(mod, name, e) < 0) Py_CLEAR(e);
  return e;
}

static int module_exec(PyObject *mod) {
  module_state *st = PyModule_GetState(mod);
  st->error = new_error(mod, "Error", NULL, NULL, "Every error pysched raises of its own.");
  if (!st->error) return -1;
  st->config_error = new_error(mod, "ConfigError", st->error, PyExc_ValueError,
                               "A value outside what the simulator accepts (names it and "
                               "the allowed range).");
  st->state_error = new_error(mod, "StateError", st->error, PyExc_RuntimeError,
                              "The simulator cannot do this now: a run stopped (buffer full, "
                              "task limit, livelock), it is busy in another thread, or a "
                              "record level is off.");
  st->invariant_error = new_error(mod, "InvariantError", st->error, PyExc_AssertionError,
                                  "A scheduler or engine invariant does not hold (check()).");
  st->policy_error = new_error(mod, "PolicyError", st->error, PyExc_RuntimeError,
                               "A policy's hook raised or returned what the engine cannot "
                               "use; the message names the hook and the time, a Python "
                               "hook's exception is the cause.");
  if (!st->config_error || !st->state_error || !st->invariant_error || !st->policy_error) return -1;
  if (pyp_add_types(mod, st)) return -1;
  st->sim_type = PyType_FromModuleAndSpec(mod, &Sim_spec, NULL);
  if (!st->sim_type) return -1;
  if (PyModule_AddObjectRef(mod, "Sim", st->sim_type) < 0) return -1;
  if (PyModule_AddIntConstant(mod, "MAX_CPUS", PS_MAX_CPUS) < 0) return -1;
  if (PyModule_AddIntConstant(mod, "ABI_VERSION", PS_ABI_VERSION) < 0) return -1;
  if (PyModule_AddIntConstant(mod, "SANITIZE", PS_SANITIZE) < 0) return -1;
  return 0;
}

static int module_traverse(PyObject *mod, visitproc visit, void *arg) {
  module_state *st = PyModule_GetState(mod);
  Py_VISIT(st->sim_type);
  Py_VISIT(st->policydef_type);
  Py_VISIT(st->context_type);
  Py_VISIT(st->task_type);
  Py_VISIT(st->runqueue_type);
  Py_VISIT(st->error);
  Py_VISIT(st->config_error);
  Py_VISIT(st->state_error);
  Py_VISIT(st->invariant_error);
  Py_VISIT(st->policy_error);
  return 0;
}

static int module_clear(PyObject *mod) {
  module_state *st = PyModule_GetState(mod);
  Py_CLEAR(st->sim_type);
  Py_CLEAR(st->policydef_type);
  Py_CLEAR(st->context_type);
  Py_CLEAR(st->task_type);
  Py_CLEAR(st->runqueue_type);
  Py_CLEAR(st->error);
  Py_CLEAR(st->config_error);
  Py_CLEAR(st->state_error);
  Py_CLEAR(st->invariant_error);
  Py_CLEAR(st->policy_error);
  return 0;
}

/* The libraries stay loaded (see loaded_library); only the list goes. */
static void module_free(void *mod) {
  module_state *st = PyModule_GetState(mod);
  for (int l = 0; l < st->nlibs; l++) PyMem_Free(st->libs[l].origin);
  PyMem_Free(st->libs);
  st->libs = NULL;
  st->nlibs = st->cap_libs = 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_core", "pysched core: the C simulator and its policies.",
    sizeof(module_state), module_methods, module_slots, module_traverse, module_clear,
    module_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&module_def); }

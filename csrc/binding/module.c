/* pysched._core: the CPython binding.  It converts and validates arguments,
 * releases the GIL around stepping, and turns the core's status codes into
 * exceptions; no scheduling logic lives here.  Records cross as bytes whose
 * layout the core describes (record_layouts), so Python builds NumPy
 * structured arrays without this file touching the NumPy C API. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <dlfcn.h>

#include "module_state.h"
#include "policy_lib.h"
#include "py_policy.h"
#include "pysched.h"

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

typedef struct {
  PyObject_HEAD
  psModel m;
  psData d;
  int ready;
  /* run() is under way with the GIL released, or a Python policy's hooks
   * may run: every other call on this simulator, from any thread, is
   * refused until it returns */
  int busy;
  /* a Python policy: its PolicyDef and the context of its instance */
  PyObject *pdef, *pctx;
} SimObject;

static module_state *sim_state(SimObject *self) {
  return (module_state *)PyType_GetModuleState(Py_TYPE(self));
}

static PyObject *raise_value(const char *msg) {
  PyErr_SetString(PyExc_ValueError, msg);
  return NULL;
}

/* ---- helpers ---- */

/* The UTF-8 text of a str that names something, or NULL with an error: a
 * name with an embedded NUL would be cut short by the C side. */
static const char *name_utf8(PyObject *o, const char *what) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
    return NULL;
  }
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(o, &n);
  if (s && (size_t)n != strlen(s)) {
    PyErr_Format(PyExc_ValueError, "%s %R contains a NUL character", what, o);
    return NULL;
  }
  return s;
}

/* An unsigned 64-bit value (a seed, a CPU mask), or -1 with ValueError
 * naming it: "K" would wrap a negative or oversized int silently. */
static int u64_arg(PyObject *o, const char *what, uint64_t *out) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(o)->tp_name);
    return -1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s=%R is outside the allowed range 0..2**64-1", what, o);
    return -1;
  }
  *out = v;
  return 0;
}

/* ---- presets: the built-in ones, then those of the active libraries ---- */

/* Preset `name` of library lib, or NULL. */
static const psPreset *library_preset(const psPolicyLibrary *lib, const char *name) {
  for (int k = 0; k < lib->npolicies; k++)
    for (int i = 0; i < lib->policies[k]->npresets; i++)
      if (!strcmp(lib->policies[k]->presets[i].name, name)) return &lib->policies[k]->presets[i];
  return NULL;
}

/* Preset i of all those known now, in the order presets() lists them:
 * built-in, then the active libraries' in load order; NULL past the end. */
static const psPreset *known_preset(const module_state *st, int i) {
  if (i < ps_npresets()) return ps_preset(i);
  i -= ps_npresets();
  for (int l = 0; l < st->nlibs; l++) {
    const psPolicyLibrary *lib = st->libs[l].lib;
    for (int k = 0; st->libs[l].active && k < lib->npolicies; k++) {
      if (i < lib->policies[k]->npresets) return &lib->policies[k]->presets[i];
      i -= lib->policies[k]->npresets;
    }
  }
  return NULL;
}

/* The preset `name`, or NULL with KeyError listing the known ones. */
static const psPreset *find_preset(const module_state *st, const char *name) {
  const psPreset *p;
  for (int i = 0; (p = known_preset(st, i)); i++)
    if (!strcmp(p->name, name)) return p;
  PyObject *names = PyList_New(0);
  for (int i = 0; names && (p = known_preset(st, i)); i++) {
    PyObject *s = PyUnicode_FromString(p->name);
    if (!s || PyList_Append(names, s)) Py_CLEAR(names);
    Py_XDECREF(s);
  }
  if (names) {
    PyErr_Format(PyExc_KeyError, "unknown preset '%s'; known presets: %R", name, names);
    Py_DECREF(names);
  }
  return NULL;
}

/* The preset a Python argument names: a preset name or a PolicyDef. */
static const psPreset *preset_arg(const module_state *st, PyObject *o) {
  const psPreset *p = pyp_preset(st, o);
  if (p) return p;
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "preset must be a str or a Python policy, not %.100s",
                 Py_TYPE(o)->tp_name);
    return NULL;
  }
  const char *name = PyUnicode_AsUTF8(o);
  return name ? find_preset(st, name) : NULL;
}

/* Apply a dict of parameter overrides to m, as one set (all or nothing);
 * a value the policy refuses raises config_error (ConfigError). */
static int apply_params(psModel *m, PyObject *params, PyObject *config_error) {
  const char *names[PS_MAX_PARAMS] = {0};
  int64_t values[PS_MAX_PARAMS] = {0};
  int n = 0;
  char err[PS_ERRLEN];
  if (!params || params == Py_None) goto apply;
  if (!PyDict_Check(params)) {
    PyErr_Format(PyExc_TypeError, "params must be a dict, not %.100s", Py_TYPE(params)->tp_name);
    return -1;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(params, &pos, &key, &value)) {
    const char *name = name_utf8(key, "parameter name");
    if (!name) return -1;
    int i = ps_param_index(m, name);
    if (i < 0) {
      PyErr_Format(PyExc_KeyError, "unknown parameter '%s' for policy %s", name, m->policy->name);
      return -1;
    }
    const psParamInfo *info = &m->policy->params[i];
    if (!PyLong_Check(value) || (PyBool_Check(value) && strcmp(info->unit, "bool"))) {
      PyErr_Format(PyExc_TypeError, "parameter %s must be an int, not %.100s", name,
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
      PyErr_Format(config_error, "%s=%R is outside the allowed range %lld..%lld", name, value,
                   (long long)info->min, (long long)info->max);
      return -1;
    }
    names[n] = name;
    values[n++] = v;  /* a dict holds each name once: n <= nparams */
  }
apply:
  if (ps_set_params(m, names, values, n, err, sizeof err)) {
    if (n)
      PyErr_SetString(config_error, err);
    else  /* nothing was overridden: the preset's defaults do not fit this HZ */
      PyErr_Format(config_error, "%s (the preset's default at hz=%d: choose it with params=)",
                   err, m->hz);
    return -1;
  }
  return 0;
}

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

static PyObject *preset_tuple(const psPreset *p) {
  return Py_BuildValue("(sszi)", p->name, p->policy->name, p->doc, ps_preset_hz(p));
}

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

/* A model of preset `pre` with `params` applied before the parameter set
 * is checked (so that params may replace a default that does not fit hz);
 * 0, or -1 with ConfigError (or TypeError / KeyError) set. */
static int build_model(psModel *m, const psPreset *pre, int cpus, int hz, uint64_t seed,
                       PyObject *params, PyObject *config_error) {
  char err[PS_ERRLEN];
  if (ps_model_defaults(m, pre, cpus, hz, seed, err, sizeof err)) {
    PyErr_SetString(config_error, err);
    return -1;
  }
  if (apply_params(m, params, config_error)) {
    ps_model_free(m);
    return -1;
  }
  return 0;
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

/* ---- policy libraries (pysched/build.py builds them) ---- */

/* load_policy_library(path, origin) -> (index, [preset tuples]): open the
 * shared library at path, built from the source `origin`, and check it
 * (ABI, sizes, tables) before anything of it is used.  It is loaded
 * inactive: activate_policy_library makes its presets known by name.
 * Loading a library already loaded returns its index again.
 *
 * RTLD_LOCAL keeps its symbols out of the process's namespace; the engine
 * functions it calls resolve because it is linked against this very file
 * (build.py says why).  RTLD_NOW reports a missing symbol here, not in the
 * middle of a run. */
static PyObject *mod_load_policy_library(PyObject *self, PyObject *args) {
  module_state *st = PyModule_GetState(self);
  PyObject *path_obj;
  const char *origin;
  if (!PyArg_ParseTuple(args, "O&s", PyUnicode_FSConverter, &path_obj, &origin)) return NULL;
  const char *path = PyBytes_AS_STRING(path_obj);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    PyErr_Format(st->config_error, "cannot load the policy library of %s: %s", origin, dlerror());
    Py_DECREF(path_obj);
    return NULL;
  }
  Py_DECREF(path_obj);
  int index = -1;
  for (int l = 0; l < st->nlibs; l++)
    if (st->libs[l].handle == handle) index = l;
  if (index >= 0) {
    dlclose(handle);  /* the loader counts opens: keep one */
  } else {
    const psPolicyLibrary *lib = dlsym(handle, PS_POLICY_LIBRARY_SYMBOL);
    char err[PS_ERRLEN];
    if (!lib) {
      PyErr_Format(st->config_error, "%s is not a pysched policy library: it does not define "
                   "%s (end it with PS_POLICY_LIBRARY(&your_policy))", origin,
                   PS_POLICY_LIBRARY_SYMBOL);
      dlclose(handle);
      return NULL;
    }
    if (ps_policy_library_check(lib, origin, err, sizeof err)) {
      PyErr_SetString(st->config_error, err);
      dlclose(handle);
      return NULL;
    }
    if (st->nlibs == st->cap_libs) {
      int cap = st->cap_libs ? 2 * st->cap_libs : 8;
      loaded_library *l = PyMem_Realloc(st->libs, (size_t)cap * sizeof *l);
      if (!l) {
        dlclose(handle);
        return PyErr_NoMemory();
      }
      st->libs = l;
      st->cap_libs = cap;
    }
    char *copy = PyMem_Malloc(strlen(origin) + 1);
    if (!copy) {
      dlclose(handle);
      return PyErr_NoMemory();
    }
    strcpy(copy, origin);
    st->libs[st->nlibs] = (loaded_library){handle, lib, copy, 0};
    index = st->nlibs++;
  }
  const psPolicyLibrary *lib = st->libs[index].lib;
  PyObject *presets = PyList_New(0);
  for (int k = 0; presets && k < lib->npolicies; k++)
    for (int i = 0; presets && i < lib->policies[k]->npresets; i++) {
      PyObject *t = preset_tuple(&lib->policies[k]->presets[i]);
      if (!t || PyList_Append(presets, t)) Py_CLEAR(presets);
      Py_XDECREF(t);
    }
  return presets ? Py_BuildValue("(iN)", index, presets) : NULL;
}

/* activate_policy_library(index, replaces=-1): the library's presets become
 * known by name, in place of those of library `replaces` (an earlier
 * version of it), which stays loaded for the simulators made from it.  A
 * preset name that is built in or that another active library declares is
 * refused (ConfigError), and nothing changes. */
static PyObject *mod_activate_policy_library(PyObject *self, PyObject *args) {
  module_state *st = PyModule_GetState(self);
  int index, replaces = -1;
  if (!PyArg_ParseTuple(args, "i|i", &index, &replaces)) return NULL;
  if (index < 0 || index >= st->nlibs || replaces < -1 || replaces >= st->nlibs)
    return raise_value("no such policy library");
  const loaded_library *new = &st->libs[index];
  for (int k = 0; k < new->lib->npolicies; k++)
    for (int i = 0; i < new->lib->policies[k]->npresets; i++) {
      const char *name = new->lib->policies[k]->presets[i].name;
      if (ps_preset_find(name)) {
        PyErr_Format(st->config_error, "%s declares preset '%s', which is a built-in preset: "
                     "choose another name", new->origin, name);
        return NULL;
      }
      for (int l = 0; l < st->nlibs; l++)
        if (l != index && l != replaces && st->libs[l].active &&
            library_preset(st->libs[l].lib, name)) {
          PyErr_Format(st->config_error, "%s declares preset '%s', which %s already declares: "
                       "choose another name", new->origin, name, st->libs[l].origin);
          return NULL;
        }
    }
  if (replaces >= 0) st->libs[replaces].active = 0;
  st->libs[index].active = 1;
  Py_RETURN_NONE;
}

/* ---- the Sim type ---- */

static int Sim_init(SimObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"preset", "cpus", "hz", "seed", "params", NULL};
  PyObject *preset;
  int cpus, hz;
  uint64_t seed;
  PyObject *seed_obj, *params = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OiiO|O", kwlist, &preset, &cpus, &hz, &seed_obj,
                                   &params) ||
      u64_arg(seed_obj, "seed", &seed))
    return -1;
  if (self->ready) {
    PyErr_SetString(sim_state(self)->state_error, "Sim is already initialised");
    return -1;
  }
  const psPreset *pre = preset_arg(sim_state(self), preset);
  if (!pre) return -1;
  char err[PS_ERRLEN];
  if (build_model(&self->m, pre, cpus, hz, seed, params, sim_state(self)->config_error)) return -1;
  if (ps_data_init(&self->m, &self->d, err, sizeof err)) {
    ps_model_free(&self->m);
    PyErr_SetString(PyExc_MemoryError, err);
    return -1;
  }
  if (pyp_preset(sim_state(self), preset)) self->pdef = Py_NewRef(preset);
  self->ready = 1;
  return 0;
}

static void Sim_dealloc(SimObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  if (self->pctx) {
    pyp_detach(self->pctx);
    Py_DECREF(self->pctx);
  }
  Py_XDECREF(self->pdef);
  if (self->ready) {
    ps_data_free(&self->d);
    ps_model_free(&self->m);
  }
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* 0 if the simulator may be used now, else -1 with StateError set. */
static int sim_unavailable(SimObject *self) {
  if (!self->ready) {
    PyErr_SetString(sim_state(self)->state_error, "Sim is not initialised");
    return -1;
  }
  if (self->pdef && !self->pctx) {
    PyErr_SetString(sim_state(self)->state_error, "the Python policy's instance is not attached");
    return -1;
  }
  if (self->busy) {
    PyErr_SetString(sim_state(self)->state_error,
                    "the simulator is running in another thread: one thread at a time may use "
                    "a Simulator (give each thread its own, e.g. sim.copy())");
    return -1;
  }
  return 0;
}

#define READY(self) \
  if (sim_unavailable(self)) return NULL

/* A call that changes the state or runs hooks: refused once a Python
 * policy's hook failed, or a C policy's broke the hooks' contract
 * (PS_FAILED_POLICY): the state may be half-updated; reading is fine. */
static int sim_broken(SimObject *self) {
  const char *where = self->pctx ? pyp_failure(self->pctx) : NULL;
  if (!where && self->d.failed == PS_FAILED_POLICY) where = self->d.errmsg;
  if (!where) return 0;
  PyErr_Format(sim_state(self)->state_error, "the simulator stopped in a failed policy hook and "
               "cannot go on (%s); read its results, or continue from a copy made before", where);
  return -1;
}

#define READY_TO_CHANGE(self) \
  if (sim_unavailable(self) || sim_broken(self)) return NULL

/* After a call that may have run a Python policy's hooks (and that
 * sim_broken let through): a hook that failed becomes a PolicyError, its
 * exception the cause; from then on sim_broken refuses changes. */
static int hooks_failed(SimObject *self) {
  return self->pctx ? pyp_raise_failure(self->pctx, sim_state(self)->policy_error) : 0;
}

/* attach(instance): the Python policy's instance for this simulator (a
 * Sim of a Python policy does nothing before). */
static PyObject *Sim_attach(SimObject *self, PyObject *inst) {
  if (!self->ready || !self->pdef || self->pctx) {
    PyErr_SetString(sim_state(self)->state_error, "attach: not a Python policy's simulator, or "
                    "already attached");
    return NULL;
  }
  self->pctx = pyp_attach(sim_state(self), self->pdef, inst, &self->m, &self->d);
  if (!self->pctx) return NULL;
  Py_RETURN_NONE;
}

static PyObject *Sim_set_params(SimObject *self, PyObject *params) {
  READY_TO_CHANGE(self);
  if (apply_params(&self->m, params, sim_state(self)->config_error)) return NULL;
  ps_params_changed(&self->m, &self->d);
  Py_RETURN_NONE;
}

static PyObject *Sim_get_params(SimObject *self, PyObject *noargs) {
  READY(self);
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < self->m.policy->nparams; i++) {
    PyObject *v = PyLong_FromLongLong(self->m.param[i]);
    if (!v || PyDict_SetItemString(d, self->m.policy->params[i].name, v)) {
      Py_XDECREF(v);
      Py_CLEAR(d);
      break;
    }
    Py_DECREF(v);
  }
  return d;
}

/* configure(events, latency, series_fields, series_every, max_trace_bytes,
 * overwrite, debug_checks, max_tasks, keep_exited, switch_cost_ns, stagger);
 * flags are 0 or 1 (Python passes bools) */
static PyObject *Sim_configure(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  int events, latency, every, overwrite, debug, stagger;
  long long max_bytes, max_tasks, keep_exited, switch_cost;
  PyObject *fields;
  if (!PyArg_ParseTuple(args, "iiOiLiiLLLi", &events, &latency, &fields, &every, &max_bytes,
                        &overwrite, &debug, &max_tasks, &keep_exited, &switch_cost, &stagger))
    return NULL;
  if ((events | latency | overwrite | debug | stagger) & ~1)
    return raise_value("events, latency, overwrite, debug and stagger must each be 0 or 1");
  if (!PyList_Check(fields) || PyList_GET_SIZE(fields) > PS_MAX_SERIES_FIELDS)
    return raise_value("series fields must be a list of at most 16 names");
  int32_t sf[PS_MAX_SERIES_FIELDS];
  Py_ssize_t nf = PyList_GET_SIZE(fields);
  for (Py_ssize_t k = 0; k < nf; k++) {
    const char *name = name_utf8(PyList_GET_ITEM(fields, k), "series field");
    if (!name) return NULL;
    sf[k] = ps_field_index(&self->m, name);
    if (sf[k] < 0) {
      PyErr_Format(PyExc_KeyError, "unknown task field '%s'", name);
      return NULL;
    }
  }
  if (every < 1) return raise_value("series_every must be >= 1 tick");
  if (max_bytes < 0) return raise_value("max_trace_bytes must be >= 0");
  if (max_tasks < 1 || max_tasks > 10000000) return raise_value("max_tasks must be in 1..10000000");
  if (keep_exited < 0 || keep_exited > 10000000)
    return raise_value("keep_exited must be in 0..10000000");
  if (keep_exited != self->m.keep_exited && self->d.next_pid > 1)
    return raise_value("keep_exited can only be chosen before the first spawn");
  if (switch_cost < 0 || switch_cost > self->m.tick_ns)
    return raise_value("switch_cost_ns must be in 0..one tick");
  psModel *m = &self->m;
  m->rec_events = events;
  m->rec_latency = latency;
  m->rec_series = nf > 0;
  m->nseries = (int32_t)nf;
  memcpy(m->series, sf, (size_t)nf * sizeof(int32_t));
  m->series_every = every;
  m->max_trace_bytes = max_bytes;
  m->overwrite = overwrite;
  m->debug_checks = debug;
  m->max_tasks = (int32_t)max_tasks;
  m->keep_exited = (int32_t)keep_exited;
  m->switch_cost_ns = switch_cost;
  if (stagger != m->stagger_ticks) {
    if (self->d.jiffies || self->d.next_pid > 1)
      return raise_value("stagger can only be chosen before the first spawn or step");
    m->stagger_ticks = stagger;
    for (int c = 0; c < m->ncpu; c++)
      self->d.next_tick_ns[c] = m->tick_ns + (stagger ? c * (m->tick_ns / m->ncpu) : 0);
  }
  Py_RETURN_NONE;
}

static PyObject *Sim_ensure_channels(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0 || n > 1000000) return raise_value("channels must number 0..1000000");
  char err[PS_ERRLEN];
  if (ps_ensure_channels(&self->m, &self->d, (int)n, err, sizeof err)) return raise_value(err);
  Py_RETURN_NONE;
}

/* add_program([(kind, arg, arg2, dist, a, b), ...]) -> program id */
static PyObject *Sim_add_program(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  PyObject *seq = PySequence_Fast(arg, "a program is a sequence of op tuples");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  psOp *ops = PyMem_Calloc(n ? (size_t)n : 1, sizeof(psOp));
  if (!ops) { Py_DECREF(seq); return PyErr_NoMemory(); }
  for (Py_ssize_t i = 0; i < n; i++) {
    psOp *o = &ops[i];
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iiiidd;an op is (kind, arg, arg2, dist, a, b)",
                          &o->kind, &o->arg, &o->arg2, &o->d.kind, &o->d.a, &o->d.b)) {
      PyMem_Free(ops);
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  char err[PS_ERRLEN];
  int id = ps_add_program(&self->m, ops, (int)n, err, sizeof err);
  PyMem_Free(ops);
  if (id < 0) return raise_value(err);
  return PyLong_FromLong(id);
}

static PyObject *Sim_add_source(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  psSourceDef s;
  if (!PyArg_ParseTuple(args, "iiLLL", &s.chan, &s.kind, &s.period_ns, &s.start_ns, &s.count)) return NULL;
  if (s.chan < 0 || s.chan >= self->m.nchan) return raise_value("source channel does not exist");
  if (s.kind != PS_SRC_EVERY && s.kind != PS_SRC_POISSON) return raise_value("unknown source kind");
  /* a denser source only stalls the run: nothing of a scheduler shows above 1 MHz */
  if (s.period_ns < 1000 || s.period_ns > PS_MAX_DURATION_NS)
    return raise_value("a source's period must lie in 1 us .. 10^6 s (at most 1 MHz)");
  if (s.start_ns < self->d.now_ns || s.start_ns > self->d.now_ns + PS_MAX_DURATION_NS)
    return raise_value("source start out of range");
  char err[PS_ERRLEN];
  if (ps_add_source(&self->m, &self->d, &s, err, sizeof err)) return raise_value(err);
  return PyLong_FromLong(self->m.nsrc - 1);
}

/* spawn(prog, name, nice, policy, rt_priority, cpus_mask, cpu, init, time_slice):
 * init is a dict of policy task fields to set before the policy starts the task. */
static PyObject *Sim_spawn(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  int prog, nice, policy, rt, cpu, time_slice;
  const char *name;
  uint64_t mask;
  PyObject *mask_obj, *init;
  if (!PyArg_ParseTuple(args, "isiiiOiO!i", &prog, &name, &nice, &policy, &rt, &mask_obj, &cpu,
                        &PyDict_Type, &init, &time_slice) ||
      u64_arg(mask_obj, "cpus_allowed mask", &mask))
    return NULL;
  const psPolicy *pol = self->m.policy;
  int32_t fields[32];
  int64_t values[32];
  int ninit = 0;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(init, &pos, &key, &value)) {
    const char *fname = name_utf8(key, "init field");
    if (!fname) return NULL;
    int idx = -1;
    for (int i = 0; i < pol->ntask_fields; i++)
      if (!strcmp(pol->task_fields[i].name, fname)) idx = i;
    if (idx < 0 || ninit == 32) {
      PyErr_Format(PyExc_KeyError, "'%s' is not a %s task field", fname, pol->name);
      return NULL;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred()) return NULL;
    int type = pol->task_fields[idx].type;
    long long lo = type == PS_F_I32 ? INT32_MIN : type == PS_F_U32 ? 0 : INT64_MIN;
    long long hi = type == PS_F_I32 ? INT32_MAX : type == PS_F_U32 ? UINT32_MAX : INT64_MAX;
    if (overflow || v < lo || v > hi) {
      PyErr_Format(PyExc_ValueError, "%s=%R is outside the field's range %lld..%lld", fname, value,
                   lo, hi);
      return NULL;
    }
    fields[ninit] = idx;
    values[ninit++] = v;
  }
  char err[PS_ERRLEN];
  self->busy = 1;
  int pid = ps_spawn(&self->m, &self->d, prog, name, nice, policy, rt, mask, cpu, ninit, fields,
                     values, time_slice, err, sizeof err);
  self->busy = 0;
  if (hooks_failed(self)) return NULL;
  if (pid < 0) return raise_value(err);
  return PyLong_FromLong(pid);
}

/* run_until(t_end_ns): deliver everything due up to t_end with the GIL
 * released, in pieces of at most 100,000 ticks and RUN_INSTANTS instants,
 * checking for Ctrl-C between them: a few milliseconds of work (tens with
 * the invariant checks under the sanitizers), however dense the events. */
#define RUN_INSTANTS 20000
/* under a Python policy an instant may run any amount of Python: check
 * for Ctrl-C after a few instants (the checks cost little beside hooks);
 * one that comes while a hook runs stops the run as that hook returns
 * (py_policy.c) */
#define RUN_INSTANTS_PY 16
static PyObject *Sim_run_until(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  long long t_end = PyLong_AsLongLong(arg);
  if (t_end == -1 && PyErr_Occurred()) return NULL;
  if (t_end < self->d.now_ns) return raise_value("cannot run backwards in time");
  char err[PS_ERRLEN];
  if (ps_check_time(t_end, err, sizeof err)) {
    PyErr_SetString(sim_state(self)->state_error, err);
    return NULL;
  }
  const int64_t chunk = 100000 * self->m.tick_ns;
  /* a Python policy's hooks need the GIL: its run keeps it, checks for
   * Ctrl-C after a few instants, and keeps other threads off this
   * simulator while a hook runs their code */
  int python = self->pctx != NULL;
  int rc = 0;
  if (!python && t_end - self->d.now_ns <= 64 * self->m.tick_ns) {
    rc = ps_run_until(&self->m, &self->d, t_end, 0, err, sizeof err);
  } else {
    self->busy = 1;
    while (rc >= 0 && self->d.now_ns < t_end) {
      int64_t t = t_end - self->d.now_ns > chunk ? self->d.now_ns + chunk : t_end;
      if (python) {
        rc = ps_run_until(&self->m, &self->d, t, RUN_INSTANTS_PY, err, sizeof err);
      } else {
        Py_BEGIN_ALLOW_THREADS
        rc = ps_run_until(&self->m, &self->d, t, RUN_INSTANTS, err, sizeof err);
        Py_END_ALLOW_THREADS
      }
      if (rc >= 0 && PyErr_CheckSignals()) break;
    }
    self->busy = 0;
    if (hooks_failed(self) || PyErr_Occurred()) return NULL;
  }
  if (rc < 0) {
    module_state *st = sim_state(self);
    PyErr_SetString(self->d.failed == PS_FAILED_POLICY ? st->policy_error : st->state_error, err);
    return NULL;
  }
  Py_RETURN_NONE;
}

/* step(ticks): run to the tick `ticks` jiffies ahead (the fast path of sim.step). */
static PyObject *Sim_step(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0 || n > (long long)(PS_MAX_DURATION_NS / self->m.tick_ns))
    return raise_value("ticks out of range");
  PyObject *t = PyLong_FromLongLong(ps_jiffy_time(&self->m, self->d.jiffies + (uint64_t)n));
  if (!t) return NULL;
  PyObject *r = Sim_run_until(self, t);
  Py_DECREF(t);
  return r;
}

static PyObject *sim_syscall(SimObject *self, int pid, psSyscall sc) {
  char err[PS_ERRLEN];
  if (sim_broken(self)) return NULL;
  self->busy = 1;
  int rc = ps_syscall_from_python(&self->m, &self->d, pid, &sc, err, sizeof err);
  self->busy = 0;
  if (hooks_failed(self)) return NULL;
  if (rc) return raise_value(err);
  Py_RETURN_NONE;
}

static PyObject *Sim_renice(SimObject *self, PyObject *args) {
  READY(self);
  int pid, nice;
  if (!PyArg_ParseTuple(args, "ii", &pid, &nice)) return NULL;
  return sim_syscall(self, pid, (psSyscall){.kind = PS_SYS_NICE, .arg = nice});
}

static PyObject *Sim_setscheduler(SimObject *self, PyObject *args) {
  READY(self);
  int pid, policy, rt;
  if (!PyArg_ParseTuple(args, "iii", &pid, &policy, &rt)) return NULL;
  return sim_syscall(self, pid, (psSyscall){.kind = PS_SYS_SETSCHED, .arg = policy, .arg2 = rt});
}

/* post(chan, n): n posts of a channel from outside any task */
static PyObject *Sim_post(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  int chan;
  long long n;
  if (!PyArg_ParseTuple(args, "iL", &chan, &n)) return NULL;
  char err[PS_ERRLEN];
  self->busy = 1;
  int rc = ps_post_from_python(&self->m, &self->d, chan, n, err, sizeof err);
  self->busy = 0;
  if (hooks_failed(self)) return NULL;
  if (rc) return raise_value(err);
  Py_RETURN_NONE;
}

static PyObject *Sim_set_affinity(SimObject *self, PyObject *args) {
  READY(self);
  int pid;
  uint64_t mask;
  PyObject *mask_obj;
  if (!PyArg_ParseTuple(args, "iO", &pid, &mask_obj) || u64_arg(mask_obj, "cpus_allowed mask", &mask))
    return NULL;
  return sim_syscall(self, pid, (psSyscall){.kind = PS_SYS_AFFINITY, .mask = mask});
}

/* task(pid) -> dict of every generic and policy field, plus name. */
static PyObject *task_dict(SimObject *self, const psTask *t) {
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < ps_nfields(&self->m); i++) {
    PyObject *o = pyp_field_value(ps_field_info(&self->m, i), ps_task_value(&self->m, &self->d, t, i));
    if (!o || PyDict_SetItemString(d, ps_field_info(&self->m, i)->name, o)) Py_CLEAR(d);
    Py_XDECREF(o);
  }
  PyObject *name = PyUnicode_DecodeUTF8(t->name, (Py_ssize_t)strnlen(t->name, PS_NAME_LEN), "replace");
  if (d && (!name || PyDict_SetItemString(d, "name", name))) Py_CLEAR(d);
  Py_XDECREF(name);
  return d;
}

static PyObject *Sim_task(SimObject *self, PyObject *arg) {
  READY(self);
  long pid = PyLong_AsLong(arg);
  if (pid == -1 && PyErr_Occurred()) return NULL;
  const psTask *t = pid > INT32_MAX ? NULL : ps_task_by_pid(&self->m, &self->d, (int)pid);
  psTask gone;
  if (t) return task_dict(self, t);
  if (pid < INT32_MAX && ps_exited_by_pid(&self->d, (int)pid, &gone)) return task_dict(self, &gone);
  if (pid >= 1 && pid < self->d.next_pid)
    PyErr_Format(PyExc_KeyError, "pid %ld has exited and its record was dropped (the simulator "
                 "keeps the last keep_exited=%d)", pid, self->m.keep_exited);
  else
    PyErr_Format(PyExc_KeyError, "no task with pid %ld (pids are 1..%d)", pid, self->d.next_pid - 1);
  return NULL;
}

/* table() -> (names, bytes, task names): every generic then policy field of
 * every live task and every kept exited one, as an int64 matrix, one row
 * per task (slot order, then exit order: Python sorts by pid). */
static PyObject *Sim_table(SimObject *self, PyObject *noargs) {
  READY(self);
  const psModel *m = &self->m;
  const psData *d = &self->d;
  int nf = ps_nfields(m);
  Py_ssize_t nt = (Py_ssize_t)(d->ntask - m->ncpu) + d->exited.n;  /* at most */
  const psTask **rows = PyMem_Malloc((size_t)(nt ? nt : 1) * sizeof(*rows));
  psTask *gone = PyMem_Malloc((size_t)(d->exited.n ? d->exited.n : 1) * sizeof(psTask));
  if (!rows || !gone) {
    PyMem_Free(rows);
    PyMem_Free(gone);
    return PyErr_NoMemory();
  }
  nt = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].pid) rows[nt++] = &d->task[i];
  psu_ring_read(&d->exited, gone);
  for (int64_t k = 0; k < d->exited.n; k++) rows[nt++] = &gone[k];
  PyObject *names = PyList_New(nf);
  PyObject *buf = PyBytes_FromStringAndSize(NULL, nt * nf * 8);
  PyObject *tnames = PyList_New(nt);
  for (int i = 0; names && i < nf; i++)
    PyList_SET_ITEM(names, i, PyUnicode_FromString(ps_field_info(m, i)->name));
  if (buf) {
    int64_t *out = (int64_t *)PyBytes_AS_STRING(buf);
    for (Py_ssize_t k = 0; k < nt; k++)
      for (int i = 0; i < nf; i++) out[(size_t)k * nf + i] = ps_task_value(m, d, rows[k], i);
  }
  for (Py_ssize_t k = 0; tnames && k < nt; k++) {
    const char *s = rows[k]->name;
    PyList_SET_ITEM(tnames, k, PyUnicode_DecodeUTF8(s, (Py_ssize_t)strnlen(s, PS_NAME_LEN), "replace"));
  }
  PyMem_Free(rows);
  PyMem_Free(gone);
  if (!names || !buf || !tnames) {
    Py_XDECREF(names);
    Py_XDECREF(buf);
    Py_XDECREF(tnames);
    return NULL;
  }
  return Py_BuildValue("(NNN)", names, buf, tnames);
}

static PyObject *ring_bytes(const psRing *r) {
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(r->n * (int64_t)r->elem));
  if (b) psu_ring_read(r, PyBytes_AS_STRING(b));
  return b;
}

static PyObject *Sim_events(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.events); }
static PyObject *Sim_latencies(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.latencies); }
static PyObject *Sim_samples(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.series); }
static PyObject *Sim_periodic(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.periodic); }

static PyObject *Sim_clear(SimObject *self, PyObject *noargs) {
  READY(self);
  psu_ring_clear(&self->d.events);
  psu_ring_clear(&self->d.latencies);
  psu_ring_clear(&self->d.series);
  psu_ring_clear(&self->d.periodic);
  Py_RETURN_NONE;
}

static PyObject *Sim_runqueue(SimObject *self, PyObject *arg) {
  READY(self);
  long cpu = PyLong_AsLong(arg);
  if (cpu == -1 && PyErr_Occurred()) return NULL;
  if (cpu < 0 || cpu >= self->m.ncpu) return raise_value("cpu out of range");
  const psPolicy *pol = self->m.policy;
  const void *rq = ps_rq(&self->m, &self->d, (int)cpu);
  const psCpu *c = &self->d.cpu[cpu];
  PyObject *d = Py_BuildValue("{s:i,s:i,s:L,s:L,s:L,s:L}", "curr", self->d.task[c->curr].pid,
                              "need_resched", c->need_resched, "nr_switches", (long long)c->nr_switches,
                              "ticks", (long long)c->ticks, "busy_ticks", (long long)c->busy_ticks,
                              "busy_ns", (long long)c->busy_ns);
  for (int i = 0; d && i < pol->nrq_fields; i++) {
    PyObject *o = pyp_field_value(&pol->rq_fields[i], psu_field_read(rq, &pol->rq_fields[i]));
    if (!o || PyDict_SetItemString(d, pol->rq_fields[i].name, o)) { Py_XDECREF(o); Py_CLEAR(d); }
    Py_XDECREF(o);
  }
  return d;
}

/* queue(cpu) -> [tuple of the policy's queue columns] in scheduling order
 * (policy.h, dump) */
static PyObject *Sim_queue(SimObject *self, PyObject *arg) {
  READY(self);
  long cpu = PyLong_AsLong(arg);
  if (cpu == -1 && PyErr_Occurred()) return NULL;
  if (cpu < 0 || cpu >= self->m.ncpu) return raise_value("cpu out of range");
  int max = self->d.ntask, ncol;
  ps_queue_columns(self->m.policy, &ncol);
  int32_t *buf = PyMem_Malloc((size_t)max * ncol * sizeof(int32_t));
  if (!buf) return PyErr_NoMemory();
  int n = self->m.hooks.dump(&self->m, &self->d, (int)cpu, buf, max);
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    PyObject *t = PyTuple_New(ncol);
    for (int k = 0; t && k < ncol; k++) {
      PyObject *v = PyLong_FromLong(buf[i * ncol + k]);
      if (!v) { Py_CLEAR(t); break; }
      PyTuple_SET_ITEM(t, k, v);
    }
    if (!t) { Py_CLEAR(l); break; }
    PyList_SET_ITEM(l, i, t);
  }
  PyMem_Free(buf);
  return l;
}

static PyObject *Sim_counters(SimObject *self, PyObject *noargs) {
  READY(self);
  const psData *d = &self->d;
  long long dropped = d->events.dropped + d->latencies.dropped + d->series.dropped +
                      d->periodic.dropped;
  return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:i,s:i,s:L,s:L}", "starving_expiries",
                       (long long)self->d.warn[PS_WARN_STARVING], "trace_dropped",
                       dropped, "forks",
                       (long long)self->d.nr_forks, "exits", (long long)self->d.nr_exits,
                       "events_dropped", (long long)self->d.events.dropped, "live_tasks",
                       self->d.nlive, "task_slots", self->d.ntask - self->m.ncpu, "exited_kept", (long long)self->d.exited.n,
                       "exited_dropped", (long long)self->d.exited.dropped);
}

static PyObject *Sim_check(SimObject *self, PyObject *noargs) {
  READY(self);
  char err[PS_ERRLEN];
  if (ps_check(&self->m, &self->d, err, sizeof err)) {
    PyErr_SetString(sim_state(self)->invariant_error, err);
    return NULL;
  }
  Py_RETURN_NONE;
}

/* copy(instance=None): an independent twin; a Python policy's twin is
 * attached to `instance`, the caller's copy of the policy instance. */
static PyObject *Sim_copy(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  PyObject *inst = Py_None;
  if (!PyArg_ParseTuple(args, "|O", &inst)) return NULL;
  if ((inst == Py_None) != !self->pdef) {
    PyErr_SetString(PyExc_TypeError, "copy: a Python policy's simulator needs the copy of its "
                    "instance, and only it");
    return NULL;
  }
  PyTypeObject *tp = Py_TYPE(self);
  SimObject *c = (SimObject *)tp->tp_alloc(tp, 0);
  if (!c) return NULL;
  if (ps_model_copy(&c->m, &self->m)) { Py_DECREF(c); return PyErr_NoMemory(); }
  if (ps_data_copy(&c->m, &c->d, &self->d)) { ps_model_free(&c->m); Py_DECREF(c); return PyErr_NoMemory(); }
  c->ready = 1;
  if (self->pdef) {
    c->pdef = Py_NewRef(self->pdef);
    if (!(c->pctx = pyp_attach(sim_state(self), c->pdef, inst, &c->m, &c->d))) {
      Py_DECREF(c);
      return NULL;
    }
  }
  return (PyObject *)c;
}

static PyObject *Sim_snapshot(SimObject *self, PyObject *noargs) {
  READY_TO_CHANGE(self);
  unsigned char *buf;
  size_t len;
  if (ps_snapshot_save(&self->m, &self->d, &buf, &len)) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
  free(buf);
  return b;
}

/* The preset a snapshot names: library `lib`'s (an index into the loaded
 * libraries, active or not) or, when lib is -1, the one known by that name
 * now; NULL with ValueError. */
static const psPreset *snapshot_preset(const module_state *st, const Py_buffer *view, int lib) {
  char name[PS_SNAPSHOT_NAME], err[PS_ERRLEN];
  if (ps_snapshot_preset_name(view->buf, (size_t)view->len, name, err, sizeof err)) {
    PyErr_SetString(PyExc_ValueError, err);
    return NULL;
  }
  if (lib < -1 || lib >= st->nlibs) {
    PyErr_Format(PyExc_ValueError, "library=%d: no such policy library (%d loaded)", lib, st->nlibs);
    return NULL;
  }
  const psPreset *pre = lib >= 0 ? library_preset(st->libs[lib].lib, name) : NULL;
  for (int i = 0; lib < 0 && !pre && known_preset(st, i); i++)
    if (!strcmp(known_preset(st, i)->name, name)) pre = known_preset(st, i);
  if (!pre)
    PyErr_Format(PyExc_ValueError, "the snapshot is of preset '%s', which %s", name,
                 lib >= 0 ? "its policy library does not declare"
                          : "is not known here (a C policy: pysched.build_policy loads it)");
  return pre;
}

/* Sim.restore(bytes, policy_def=None, instance=None, library=-1) -> a new
 * Sim from a snapshot.  A Python policy's snapshot needs its PolicyDef and
 * the policy instance restored beside; a C policy library's, the index of
 * the library it was made with (-1: the preset its name finds now). */
static PyObject *Sim_restore(PyObject *cls, PyObject *args) {
  Py_buffer view;
  PyObject *pdef = Py_None, *inst = Py_None;
  int lib = -1;
  if (!PyArg_ParseTuple(args, "y*|OOi", &view, &pdef, &inst, &lib)) return NULL;
  PyTypeObject *tp = (PyTypeObject *)cls;
  module_state *st = PyType_GetModuleState(tp);
  const psPreset *pre = pdef == Py_None ? NULL : pyp_preset(st, pdef);
  if ((pdef != Py_None && !pre) || (pdef == Py_None) != (inst == Py_None)) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_TypeError, "restore: a Python policy's PolicyDef and instance go together");
    return NULL;
  }
  if (!pre) pre = snapshot_preset(st, &view, lib);
  SimObject *s = pre ? (SimObject *)tp->tp_alloc(tp, 0) : NULL;
  if (!s) {
    PyBuffer_Release(&view);
    return NULL;
  }
  char err[PS_ERRLEN];
  int rc = ps_snapshot_load(view.buf, (size_t)view.len, pre, &s->m, &s->d, err, sizeof err);
  PyBuffer_Release(&view);
  if (rc == PS_SNAPSHOT_OTHER_LAYOUT && pdef != Py_None)
    snprintf(err, sizeof err, "the snapshot's Python policy '%s' has changed since it was made: "
             "its class now declares other parameters, task fields or runqueue fields (restore "
             "it with the class as it was)", pre->name);
  if (rc) {
    Py_DECREF(s);
    return raise_value(err);
  }
  s->ready = 1;
  if (pdef != Py_None) {
    s->pdef = Py_NewRef(pdef);
    if (!(s->pctx = pyp_attach(st, pdef, inst, &s->m, &s->d))) {
      Py_DECREF(s);
      return NULL;
    }
  }
  return (PyObject *)s;
}

static PyObject *Sim_get_now(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromLongLong(self->d.now_ns);
}
static PyObject *Sim_get_jiffies(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromUnsignedLongLong(self->d.jiffies);
}
static PyObject *Sim_get_ntasks(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromLong(self->d.next_pid - 1);
}
static PyObject *Sim_get_hz(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromLong(self->m.hz);
}
static PyObject *Sim_get_tick_ns(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromLongLong(self->m.tick_ns);
}

static PyMethodDef Sim_methods[] = {
    {"set_params", (PyCFunction)Sim_set_params, METH_O, "set_params(dict): all or nothing"},
    {"attach", (PyCFunction)Sim_attach, METH_O, "attach(instance) of the Python policy"},
    {"get_params", (PyCFunction)Sim_get_params, METH_NOARGS, "dict of parameter values"},
    {"configure", (PyCFunction)Sim_configure, METH_VARARGS, "recording and machine options"},
    {"ensure_channels", (PyCFunction)Sim_ensure_channels, METH_O, "make room for n channels"},
    {"add_program", (PyCFunction)Sim_add_program, METH_O, "add a program, return its id"},
    {"add_source", (PyCFunction)Sim_add_source, METH_VARARGS, "add an external source"},
    {"spawn", (PyCFunction)Sim_spawn, METH_VARARGS, "create a task, return its pid"},
    {"run_until", (PyCFunction)Sim_run_until, METH_O, "advance to t_end ns (inclusive)"},
    {"step", (PyCFunction)Sim_step, METH_O, "advance by n ticks"},
    {"renice", (PyCFunction)Sim_renice, METH_VARARGS, "set_user_nice"},
    {"post", (PyCFunction)Sim_post, METH_VARARGS, "post a channel n times (waker: none)"},
    {"setscheduler", (PyCFunction)Sim_setscheduler, METH_VARARGS, "sched_setscheduler"},
    {"set_affinity", (PyCFunction)Sim_set_affinity, METH_VARARGS, "set_cpus_allowed"},
    {"task", (PyCFunction)Sim_task, METH_O, "dict of a task's fields"},
    {"table", (PyCFunction)Sim_table, METH_NOARGS, "(field names, int64 rows, task names)"},
    {"events", (PyCFunction)Sim_events, METH_NOARGS, "event records as bytes"},
    {"latencies", (PyCFunction)Sim_latencies, METH_NOARGS, "latency records as bytes"},
    {"periodic", (PyCFunction)Sim_periodic, METH_NOARGS, "timed-op call records as bytes"},
    {"samples", (PyCFunction)Sim_samples, METH_NOARGS, "series samples as bytes"},
    {"clear", (PyCFunction)Sim_clear, METH_NOARGS, "empty the recorded buffers"},
    {"runqueue", (PyCFunction)Sim_runqueue, METH_O, "dict of a CPU's runqueue fields"},
    {"queue", (PyCFunction)Sim_queue, METH_O, "rows of the policy's queue columns, in order"},
    {"counters", (PyCFunction)Sim_counters, METH_NOARGS, "global counters and warnings"},
    {"check", (PyCFunction)Sim_check, METH_NOARGS, "check invariants (InvariantError)"},
    {"copy", (PyCFunction)Sim_copy, METH_VARARGS, "deep copy (branch the run)"},
    {"snapshot", (PyCFunction)Sim_snapshot, METH_NOARGS, "model and state as bytes"},
    {"restore", (PyCFunction)Sim_restore, METH_VARARGS | METH_CLASS,
     "restore(bytes, policy_def=None, instance=None, library=-1): a new Sim from snapshot bytes"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Sim_getset[] = {
    {"now_ns", (getter)Sim_get_now, NULL, "simulated time, ns", NULL},
    {"jiffies", (getter)Sim_get_jiffies, NULL, "ticks so far", NULL},
    {"tick_ns", (getter)Sim_get_tick_ns, NULL, "ns per tick", NULL},
    {"hz", (getter)Sim_get_hz, NULL, "ticks per second", NULL},
    {"ntasks", (getter)Sim_get_ntasks, NULL, "tasks created so far (pids 1..ntasks)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Sim_slots[] = {
    {Py_tp_doc, "Sim(preset, cpus, hz, seed, params=None): the core simulator (use pysched.Simulator)"},
    {Py_tp_init, Sim_init},
    {Py_tp_dealloc, Sim_dealloc},
    {Py_tp_methods, Sim_methods},
    {Py_tp_getset, Sim_getset},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec Sim_spec = {"pysched._core.Sim", sizeof(SimObject), 0, Py_TPFLAGS_DEFAULT, Sim_slots};

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

/* Python values to the core's: the checks and conversions that the
 * module functions and the Sim type share (names, unsigned 64-bit values,
 * the preset an argument names, parameter sets, models). */
#include "binding.h"

PyObject *raise_value(const char *msg) {
  PyErr_SetString(PyExc_ValueError, msg);
  return NULL;
}

/* The UTF-8 text of a str that names something, or NULL with an error: a
 * name with an embedded NUL would be cut short by the C side. */
const char *name_utf8(PyObject *o, const char *what) {
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
int u64_arg(PyObject *o, const char *what, uint64_t *out) {
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

/* A set of CPUs from a Python int (bit c: CPU c), or -1 with TypeError or
 * ValueError naming it. */
int cpumask_arg(PyObject *o, const char *what, psCpuMask *out) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *bits = PyObject_CallMethod(o, "bit_length", NULL);
  if (!bits) return -1;
  long nbits = PyLong_AsLong(bits);
  Py_DECREF(bits);
  if (nbits == -1 && PyErr_Occurred()) return -1;
  int negative = PyObject_RichCompareBool(o, Py_False, Py_LT);
  if (negative < 0) return -1;
  if (negative || nbits > PS_MAX_CPUS) {
    PyErr_Format(PyExc_ValueError, "%s=%R is outside the allowed range 0..2**%d-1 (CPUs 0..%d)",
                 what, o, PS_MAX_CPUS, PS_MAX_CPUS - 1);
    return -1;
  }
  ps_cpumask_zero(out);
  Py_INCREF(o);
  for (int i = 0; i < PS_CPUMASK_WORDS && o; i++) {
    out->w[i] = PyLong_AsUnsignedLongLongMask(o);
    PyObject *shift = PyLong_FromLong(64), *rest = shift ? PyNumber_Rshift(o, shift) : NULL;
    Py_XDECREF(shift);
    Py_DECREF(o);
    o = rest;
  }
  if (!o) return -1;
  Py_DECREF(o);
  return 0;
}

/* A set of CPUs as a Python int (bit c: CPU c). */
PyObject *cpumask_to_int(const psCpuMask *s) {
  int top = PS_CPUMASK_WORDS - 1;
  while (top > 0 && !s->w[top]) top--;
  PyObject *r = PyLong_FromUnsignedLongLong(s->w[top]);
  PyObject *shift = PyLong_FromLong(64);
  for (int i = top - 1; r && shift && i >= 0; i--) {
    PyObject *up = PyNumber_Lshift(r, shift);
    Py_DECREF(r);
    PyObject *word = up ? PyLong_FromUnsignedLongLong(s->w[i]) : NULL;
    r = word ? PyNumber_Or(up, word) : NULL;
    Py_XDECREF(up);
    Py_XDECREF(word);
  }
  if (!shift) Py_CLEAR(r);
  Py_XDECREF(shift);
  return r;
}

PyObject *pyp_task_field(const psModel *m, const psData *d, const psTask *t, int i) {
  const psFieldInfo *f = ps_field_info(m, i);
  if (i < ps_ntask_fields && f->offset == offsetof(psTask, cpus_allowed))
    return cpumask_to_int(&t->cpus_allowed);
  return pyp_field_value(f, ps_task_value(m, d, t, i));
}

/* The preset a Python argument names: a preset name or a PolicyDef. */
const psPreset *preset_arg(const module_state *st, PyObject *o) {
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
int apply_params(psModel *m, PyObject *params, PyObject *config_error) {
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

/* A model of preset `pre` with `params` applied before the parameter set
 * is checked (so that params may replace a default that does not fit hz);
 * 0, or -1 with ConfigError (or TypeError / KeyError) set. */
int build_model(psModel *m, const psPreset *pre, int cpus, int hz, uint64_t seed,
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

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

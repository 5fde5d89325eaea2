/* Python policies.  A PolicyDef is built once per pysched.Policy subclass:
 * it owns a psPolicy whose tables come from the class's declarations
 * (params, task_fields, rq_fields) and whose hooks are the adapters below,
 * each calling the method of the same name.  A PolicyContext ties one
 * instance of the class to one simulator (psModel.ctx); the engine calls
 * the adapters with the GIL held.
 *
 * Tasks cross to Python as Task views (a slot and a pid, checked on every
 * use, so that a view kept past its task's exit or its simulator raises
 * instead of reading freed memory) and runqueues as Runqueue views.  A hook
 * that raises, or returns what the engine cannot use, fails the step with
 * a message naming the hook, the time and the task; the exception is kept
 * and raised by the binding as the cause of a PolicyError.
 *
 * Ctrl-C (pysched.policy.base's SIGINT handler, installed for a run, asks
 * Context.sigint what to do): while no hook runs, KeyboardInterrupt at
 * once.  A first Ctrl-C while a hook runs lets it finish, and the step
 * fails as it returns; at a second Ctrl-C, or when the hook has not
 * returned after a grace period (Context.interrupt_hook, from a timer,
 * sends the main thread a SIGINT, which also ends a blocking call),
 * KeyboardInterrupt is raised inside the hook.  Either way the step fails
 * as at any hook's error, and the binding raises that KeyboardInterrupt
 * itself.
 *
 * PolicyDef and the hooks stay in one file, a little over 600 lines: the
 * hooks are the table a PolicyDef fills (PolicyDef_new keeps those the
 * class defines, by hook_names, which hook_failed names them by too).  The
 * context's methods and the views are in views.c. */
#include "py_policy_internal.h"

static const char *const hook_names[NHOOKS] = {
    "task_spawn", "wakeup", "deactivate", "pick_next", "task_fork", "task_exit", "put_prev",
    "tick", "yield_", "set_nice", "set_scheduler", "migrate", "check"};

/* ---- PolicyDef ---- */

/* A str kept alive by def, as UTF-8 without NUL (and not empty if it is
 * a name); NULL with an error. */
static const char *keep_text(PolicyDef *def, PyObject *o, const char *what, int name) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
    return NULL;
  }
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(o, &n);
  if (!s) return NULL;
  if ((size_t)n != strlen(s) || (name && n == 0)) {
    PyErr_Format(PyExc_ValueError, "%s %R is empty or contains a NUL character", what, o);
    return NULL;
  }
  if (PyList_Append(def->strings, o)) return NULL;
  return s;
}

static const char *keep_str(PolicyDef *def, PyObject *o, const char *what) {
  return keep_text(def, o, what, 1);
}

static int name_taken(PolicyDef *def, const char *name) {
  PyObject *k = PyUnicode_FromString(name);
  int r = k ? PyDict_Contains(def->field_index, k) : -1;
  Py_XDECREF(k);
  return r;
}

static void PolicyDef_dealloc(PolicyDef *self) {
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(self->strings);
  Py_XDECREF(self->field_index);
  Py_XDECREF(self->rq_index);
  for (int h = 0; h < NHOOKS; h++) Py_XDECREF(self->funcs[h]);
  for (int h = 0; h < PYX_NOPS; h++) Py_XDECREF(self->ext_funcs[h]);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static const psHooks pyp_hooks;
static void x_retune(const psModel *m, psData *d);

_Static_assert(offsetof(PolicyDef, ops) - offsetof(PolicyDef, pol) == offsetof(psExtPolicy, ops),
               "a PolicyDef's pol and ops must be laid out as a psExtPolicy");

/* PolicyDef(cls, name, doc, params, task_fields, rq_fields, headline,
 * max_prio, hz): params as (name, default, min, max, unit, doc, hz_scaled)
 * tuples, fields as names; pysched.policy builds the call from the class. */
static PyObject *PolicyDef_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *cls, *name, *doc, *params, *tfields, *rfields, *headline;
  PyObject *ext = Py_None;
  int max_prio, hz;
  if (!PyArg_ParseTuple(args, "OUUO!O!O!O!ii|O", &cls, &name, &doc, &PyList_Type, &params,
                        &PyList_Type, &tfields, &PyList_Type, &rfields, &PyList_Type, &headline,
                        &max_prio, &hz, &ext))
    return NULL;
  if (ext != Py_None && (PyList_GET_SIZE(tfields) || PyList_GET_SIZE(rfields) ||
                         PyList_GET_SIZE(headline))) {
    PyErr_SetString(PyExc_ValueError, "a sched_ext scheduler declares no task_fields, "
                    "rq_fields or headline: the class's own are shown");
    return NULL;
  }
  if (max_prio < 1 || max_prio > 1000000) {
    PyErr_Format(PyExc_ValueError, "max_prio=%d is outside the allowed range 1..1000000", max_prio);
    return NULL;
  }
  if (hz < 1 || hz > 100000 || 1000000000 % hz) {
    PyErr_Format(PyExc_ValueError, "hz=%d must be in 1..100000 and divide 10^9", hz);
    return NULL;
  }
  if (PyList_GET_SIZE(params) > PS_MAX_PARAMS) {
    PyErr_Format(PyExc_ValueError, "%zd parameters: at most %d", PyList_GET_SIZE(params), PS_MAX_PARAMS);
    return NULL;
  }
  if (PyList_GET_SIZE(tfields) > PYP_MAX_TASK_FIELDS) {
    PyErr_Format(PyExc_ValueError, "%zd task fields: at most %d (int64 each in the task's "
                 "%d-byte policy area)", PyList_GET_SIZE(tfields), PYP_MAX_TASK_FIELDS, PS_TASK_PRIV);
    return NULL;
  }
  if (PyList_GET_SIZE(rfields) > PYP_MAX_RQ_FIELDS) {
    PyErr_Format(PyExc_ValueError, "%zd runqueue fields: at most %d", PyList_GET_SIZE(rfields),
                 PYP_MAX_RQ_FIELDS);
    return NULL;
  }
  if (PyList_GET_SIZE(headline) > PYP_MAX_TASK_FIELDS + 1) {
    PyErr_Format(PyExc_ValueError, "headline has %zd fields: at most %d", PyList_GET_SIZE(headline),
                 PYP_MAX_TASK_FIELDS + 1);
    return NULL;
  }
  PolicyDef *self = (PolicyDef *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->strings = PyList_New(0);
  self->field_index = PyDict_New();
  self->rq_index = PyDict_New();
  if (!self->strings || !self->field_index || !self->rq_index) goto fail;
  psPolicy *pol = &self->pol;
  if (!(pol->name = keep_str(self, name, "policy name")) || !(pol->doc = keep_text(self, doc, "doc", 0)))
    goto fail;
  for (int i = 0; i < ps_ntask_fields; i++) {
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyDict_SetItemString(self->field_index, ps_task_fields[i].name, v)) { Py_XDECREF(v); goto fail; }
    Py_DECREF(v);
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(params); k++) {
    psParamInfo *p = &self->params[k];
    PyObject *n, *unit, *pdoc;
    long long def_, lo, hi;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(params, k), "ULLLUUp;a parameter is (name, default, "
                          "min, max, unit, doc, hz_scaled)", &n, &def_, &lo, &hi, &unit, &pdoc,
                          &p->hz_scaled))
      goto fail;
    if (!(p->name = keep_str(self, n, "parameter name")) || !(p->unit = keep_text(self, unit, "unit", 0)) ||
        !(p->doc = keep_text(self, pdoc, "parameter doc", 0)))
      goto fail;
    if (lo > hi || def_ < lo || def_ > hi) {
      PyErr_Format(PyExc_ValueError, "parameter %s: default %lld is outside its range %lld..%lld",
                   p->name, def_, lo, hi);
      goto fail;
    }
    for (Py_ssize_t j = 0; j < k; j++)
      if (!strcmp(self->params[j].name, p->name)) {
        PyErr_Format(PyExc_ValueError, "parameter %s is declared twice", p->name);
        goto fail;
      }
    p->def = def_;
    p->min = lo;
    p->max = hi;
  }
  pol->params = self->params;
  pol->nparams = (int)PyList_GET_SIZE(params);
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(tfields); k++) {
    psFieldInfo *f = &self->task_fields[k];
    if (!(f->name = keep_str(self, PyList_GET_ITEM(tfields, k), "task field name"))) goto fail;
    int taken = name_taken(self, f->name);
    if (taken) {
      if (taken > 0)
        PyErr_Format(PyExc_ValueError, "task field %s is a generic field or declared twice", f->name);
      goto fail;
    }
    f->type = PS_F_I64;
    f->offset = (size_t)k * 8;
    f->doc = "";
    f->at = PS_AT_PRIV;
    PyObject *v = PyLong_FromLong(ps_ntask_fields + (long)k);
    if (!v || PyDict_SetItemString(self->field_index, f->name, v)) { Py_XDECREF(v); goto fail; }
    Py_DECREF(v);
  }
  pol->task_fields = self->task_fields;
  pol->ntask_fields = (int)PyList_GET_SIZE(tfields);
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(rfields); k++) {
    psFieldInfo *f = &self->rq_fields[k];
    if (!(f->name = keep_str(self, PyList_GET_ITEM(rfields, k), "runqueue field name"))) goto fail;
    PyObject *v = PyLong_FromSsize_t(k);
    if (!v || PyDict_Contains(self->rq_index, PyList_GET_ITEM(rfields, k))) {
      if (v) PyErr_Format(PyExc_ValueError, "runqueue field %s is declared twice", f->name);
      Py_XDECREF(v);
      goto fail;
    }
    if (PyDict_SetItem(self->rq_index, PyList_GET_ITEM(rfields, k), v)) { Py_DECREF(v); goto fail; }
    Py_DECREF(v);
    f->type = PS_F_I64;
    f->offset = (size_t)k * 8;
    f->doc = "";
    f->at = PS_AT_PRIV;
  }
  pol->rq_fields = self->rq_fields;
  pol->nrq_fields = (int)PyList_GET_SIZE(rfields);
  pol->rq_size = PyList_GET_SIZE(rfields) ? (size_t)PyList_GET_SIZE(rfields) * 8 : 8;
  if (ext != Py_None) {
    /* the sched_ext class's tables and hooks; its fields by name; the
     * fallback's (EEVDF's) parameters first, then the scheduler's */
    const psPolicy *x = &ps_ext_class.pol, *fb = &ps_policy_eevdf;
    int nuser = pol->nparams;
    if (nuser + fb->nparams > PS_MAX_PARAMS) {
      PyErr_Format(PyExc_ValueError, "%d parameters: a sched_ext scheduler has at most %d "
                   "besides EEVDF's", nuser, PS_MAX_PARAMS - fb->nparams);
      goto fail;
    }
    for (int k = 0; k < nuser; k++)
      for (int j = 0; j < fb->nparams; j++)
        if (!strcmp(self->params[k].name, fb->params[j].name)) {
          PyErr_Format(PyExc_ValueError, "parameter %s is the fallback's (EEVDF's)",
                       self->params[k].name);
          goto fail;
        }
    memmove(self->params + fb->nparams, self->params, (size_t)nuser * sizeof self->params[0]);
    memcpy(self->params, fb->params, (size_t)fb->nparams * sizeof self->params[0]);
    pol->nparams = nuser + fb->nparams;
    pol->derived_fields = fb->derived_fields;
    pol->nderived_fields = fb->nderived_fields;
    self->ext = 1;
    pol->task_fields = x->task_fields;
    pol->ntask_fields = x->ntask_fields;
    pol->rq_fields = x->rq_fields;
    pol->nrq_fields = x->nrq_fields;
    pol->rq_size = x->rq_size;
    pol->headline = x->headline;
    pol->max_prio = x->max_prio;
    pol->hooks = x->hooks;
    pol->hooks.retune = x_retune;
    pol->family = fb->family;
    self->ops = &self->ext_ops;
    for (int k = 0; k < x->ntask_fields; k++) {
      PyObject *v = PyLong_FromLong(ps_ntask_fields + k);
      if (!v || PyDict_SetItemString(self->field_index, x->task_fields[k].name, v)) { Py_XDECREF(v); goto fail; }
      Py_DECREF(v);
    }
    for (int k = 0; k < x->nrq_fields; k++) {
      PyObject *v = PyLong_FromLong(k);
      if (!v || PyDict_SetItemString(self->rq_index, x->rq_fields[k].name, v)) { Py_XDECREF(v); goto fail; }
      Py_DECREF(v);
    }
    if (pyx_def_init(self, cls, ext)) goto fail;
    goto presets;
  }
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(headline); k++) {
    if (!(self->headline[k] = keep_str(self, PyList_GET_ITEM(headline, k), "headline field"))) goto fail;
    if (name_taken(self, self->headline[k]) != 1) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "headline field %s is not a task field", self->headline[k]);
      goto fail;
    }
  }
  pol->headline = self->headline;
  pol->max_prio = max_prio;
  pol->hooks = pyp_hooks;
  for (int h = 0; h < NHOOKS; h++) {
    PyObject *fn = PyObject_GetAttrString(cls, hook_names[h]);
    if (!fn) {
      if (h <= H_PICK_NEXT) goto fail;
      PyErr_Clear();
      continue;
    }
    if (!PyCallable_Check(fn)) {
      PyErr_Format(PyExc_TypeError, "%s.%s must be a method", pol->name, hook_names[h]);
      Py_DECREF(fn);
      goto fail;
    }
    self->funcs[h] = fn;
  }
  /* an optional hook the class does not define runs the engine's default */
  if (!self->funcs[H_TASK_FORK]) pol->hooks.task_fork = NULL;
  if (!self->funcs[H_TASK_EXIT]) pol->hooks.task_exit = NULL;
  if (!self->funcs[H_PUT_PREV]) pol->hooks.put_prev = NULL;
  if (!self->funcs[H_TICK]) pol->hooks.tick = NULL;
  if (!self->funcs[H_YIELD]) pol->hooks.yield = NULL;
  if (!self->funcs[H_SET_NICE]) pol->hooks.set_nice = NULL;
  if (!self->funcs[H_SET_SCHEDULER]) pol->hooks.set_scheduler = NULL;
  if (!self->funcs[H_MIGRATE]) pol->hooks.migrate = NULL;
  if (!self->funcs[H_CHECK]) pol->hooks.check = NULL;
presets:
  self->preset.name = pol->name;
  self->preset.policy = pol;
  self->preset.doc = pol->doc;
  self->preset.hz = hz;
  pol->presets = &self->preset;
  pol->npresets = 1;
  return (PyObject *)self;
fail:
  Py_DECREF(self);
  return NULL;
}

const psPreset *pyp_preset(const module_state *st, PyObject *o) {
  return PyObject_TypeCheck(o, st->policydef_type) ? &((PolicyDef *)o)->preset : NULL;
}

/* ---- the hooks' context ---- */

static Context *CTX(const psModel *m) { return (Context *)m->ctx; }

/* Record a failed hook (the Python error is set): keep the exception, fail
 * the step.  Later hooks of this step do nothing. */
void pyp_failed(Context *c, const char *name, const psTask *t, const char *what) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value && tb) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  if (!c->exc) {
    c->exc = value ? value : Py_NewRef(Py_None);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!msg) PyErr_Clear();
    char task[32] = "";
    if (t) snprintf(task, sizeof task, " (pid %d)", t->pid);
    if (value && PyErr_GivenExceptionMatches(value, PyExc_KeyboardInterrupt))
      snprintf(c->where, sizeof c->where, "policy hook %s was interrupted by Ctrl-C at t=%lld ns%s",
               name, (long long)c->d->now_ns, task);
    else
      snprintf(c->where, sizeof c->where, "policy hook %s %s at t=%lld ns%s: %s%s%.120s",
               name, what, (long long)c->d->now_ns, task,
               value ? type_name(value) : "", value ? ": " : "", msg ? msg : "");
    Py_XDECREF(s);
  } else {
    Py_XDECREF(value);
  }
  ps_fail(c->d, "%s", c->where);
}

static void hook_failed(Context *c, int h, const psTask *t, const char *what) {
  pyp_failed(c, hook_names[h], t, what);
}

/* Run hook h's function on argv (the instance first, n in all): its
 * result, or NULL with the error set.  A Ctrl-C noted while it ran
 * (`pending`), or a signal whose handler raises once it has returned (the
 * handlers run here, not a few instants later), turns its result into a
 * KeyboardInterrupt: the run stops after the hook that was running. */
PyObject *pyp_invoke(Context *c, PyObject *func, PyObject *const *argv, size_t n) {
  c->in_hook++;
  PyObject *r = PyObject_Vectorcall(func, argv, n, NULL);
  c->in_hook--;
  if (c->in_hook) return r;
  int interrupted = c->pending;
  c->pending = 0;
  if (r) {
    if (PyErr_CheckSignals() || interrupted) {
      Py_CLEAR(r);
      if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  } else if (c->grace_sent) {
    /* the hook raised before the grace period's SIGINT reached the
     * handler: it is taken here (and dropped), not after the run */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyErr_CheckSignals()) PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
  return r;
}

static PyObject *invoke(Context *c, int h, PyObject *const *argv, size_t n) {
  return pyp_invoke(c, c->def->funcs[h], argv, n);
}

/* Call hook h with the instance and n arguments (stolen; NULL means an
 * argument could not be made); the result, or NULL after hook_failed. */
static PyObject *call(Context *c, int h, const psTask *subject, PyObject **args, int n) {
  PyObject *argv[5];
  argv[0] = c->inst;
  int ok = 1;
  for (int k = 0; k < n; k++) ok &= (argv[k + 1] = args[k]) != NULL;
  PyObject *r = ok ? invoke(c, h, argv, (size_t)n + 1) : NULL;
  for (int k = 0; k < n; k++) Py_XDECREF(args[k]);
  if (!r) hook_failed(c, h, subject, "raised");
  return r;
}

/* The truth of a hook's result (preempt or not); 0 after a failure. */
static int truth(Context *c, int h, const psTask *subject, PyObject *r) {
  if (!r) return 0;
  int v = PyObject_IsTrue(r);
  Py_DECREF(r);
  if (v < 0) {
    hook_failed(c, h, subject, "returned a value without a truth value");
    return 0;
  }
  return v;
}

static int skip(const psModel *m, const psData *d) { return !CTX(m) || CTX(m)->exc || d->failed; }

#define VIEW(t) task_view(c, (t))
#define INT(i) PyLong_FromLong(i)

/* ---- the hooks ---- */

static int a_task_spawn(const psModel *m, psData *d, psTask *p) {
  if (skip(m, d)) return 0;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p)};
  return truth(c, H_TASK_SPAWN, p, call(c, H_TASK_SPAWN, p, args, 1));
}

static int a_wakeup(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  if (skip(m, d)) return 0;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p), waker ? VIEW(waker) : Py_NewRef(Py_None), PyBool_FromLong(sync)};
  /* it may move p (p.cpu = ...): the view's setter keeps it within its affinity */
  return truth(c, H_WAKEUP, p, call(c, H_WAKEUP, p, args, 3));
}

static void a_deactivate(const psModel *m, psData *d, psTask *prev) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(prev)};
  Py_XDECREF(call(c, H_DEACTIVATE, prev, args, 1));
}

/* pick_next returns a Task view, a pid, or None for the idle task; the
 * task must be runnable here: queued, on this CPU, not running elsewhere. */
static psTask *a_pick_next(const psModel *m, psData *d, int cpu) {
  psTask *idle = &d->task[d->cpu[cpu].idle];
  if (skip(m, d)) return idle;
  Context *c = CTX(m);
  PyObject *args[] = {INT(cpu)};
  PyObject *r = call(c, H_PICK_NEXT, NULL, args, 1);
  if (!r) return idle;
  psTask *t = NULL;
  if (r == Py_None) {
    t = idle;
  } else if (PyObject_TypeCheck(r, binding_state((PyObject *)c)->task_type)) {
    if (((TaskView *)r)->ctx != c)
      PyErr_Format(PyExc_ValueError, "it returned a task of another simulator");
    else
      t = view_task((TaskView *)r);
  } else if (PyIndex_Check(r) && !PyBool_Check(r)) {
    long pid;
    if (!index_arg(r, "pid", &pid)) {
      t = pid > 0 && pid < INT32_MAX ? ps_task_by_pid(m, d, (int)pid) : NULL;
      if (!t) PyErr_Format(PyExc_ValueError, "it returned pid %ld, which is not a live task", pid);
    }
  } else {
    PyErr_Format(PyExc_TypeError, "it returned %.100s %R: a Task, a pid or None (idle) was expected",
                 Py_TYPE(r)->tp_name, r);
  }
  Py_DECREF(r);
  if (t && t != idle) {
    int elsewhere = 0;
    for (int o = 0; o < m->ncpu; o++) elsewhere |= o != cpu && &d->task[d->cpu[o].curr] == t;
    if (t->is_idle || !t->on_rq || t->cpu != cpu || elsewhere) {
      PyErr_Format(PyExc_ValueError, "it returned pid %d, which is not runnable on cpu %d (%s)",
                   t->pid, cpu, t->is_idle ? "another CPU's idle task" : !t->on_rq ? "not queued"
                   : t->cpu != cpu ? "queued on another CPU" : "running on another CPU");
      t = NULL;
    }
  }
  if (!t) {
    hook_failed(c, H_PICK_NEXT, NULL, "returned an unusable task");
    return idle;
  }
  return t;
}

static void a_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(parent), VIEW(child)};
  Py_XDECREF(call(c, H_TASK_FORK, child, args, 2));
}

static void a_task_exit(const psModel *m, psData *d, psTask *p, psTask *parent) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p), parent ? VIEW(parent) : Py_NewRef(Py_None)};
  Py_XDECREF(call(c, H_TASK_EXIT, p, args, 2));
}

static void a_put_prev(const psModel *m, psData *d, psTask *prev) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(prev)};
  Py_XDECREF(call(c, H_PUT_PREV, prev, args, 1));
}

static void a_tick(const psModel *m, psData *d, int cpu) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  psTask *curr = ps_curr(d, cpu);
  PyObject *args[] = {INT(cpu), VIEW(curr)};
  Py_XDECREF(call(c, H_TICK, curr, args, 2));
}

static void a_yield(const psModel *m, psData *d, psTask *p) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p)};
  Py_XDECREF(call(c, H_YIELD, p, args, 1));
}

static void a_set_nice(const psModel *m, psData *d, psTask *p, int nice) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p), INT(nice)};
  Py_XDECREF(call(c, H_SET_NICE, p, args, 2));
}

/* The class's set_scheduler replaces the engine's default, which is what
 * sets p->policy and p->rt_priority, and a policy may not write them: the
 * adapter sets them after the hook, as the engine sets p->nice after
 * set_nice (the hook sees the old values on p, the new ones as arguments). */
static void a_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p), INT(policy), INT(rt)};
  PyObject *r = call(c, H_SET_SCHEDULER, p, args, 3);
  if (!r) return;
  Py_DECREF(r);
  p->policy = policy;
  p->rt_priority = rt;
}

static void a_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  if (skip(m, d)) return;
  Context *c = CTX(m);
  PyObject *args[] = {VIEW(p), INT(dest)};
  c->moving = ps_index(d, p);
  Py_XDECREF(call(c, H_MIGRATE, p, args, 2));
  c->moving = -1;
  if (!c->exc && p->cpu != dest) {
    PyErr_Format(PyExc_ValueError, "it left pid %d on cpu %d, not on cpu %d", p->pid, p->cpu, dest);
    hook_failed(c, H_MIGRATE, p, "misbehaved");
  }
}

/* check() raises (an AssertionError, say) when an invariant of the
 * policy's own state fails: that is a broken invariant, not a failed step.
 * Ctrl-C while it runs fails the step, as in any other hook. */
static int a_check(const psModel *m, const psData *d, char *err, int errlen) {
  Context *c = CTX(m);
  if (!c || c->exc) return 0;
  PyObject *argv[] = {c->inst};
  PyObject *r = invoke(c, H_CHECK, argv, 1);
  if (r) {
    Py_DECREF(r);
    return 0;
  }
  if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
    hook_failed(c, H_CHECK, NULL, "raised");
    return 0;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *s = value ? PyObject_Str(value) : NULL;
  const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
  snprintf(err, errlen, "policy check: %s: %s", type ? ((PyTypeObject *)type)->tp_name : "error",
           msg ? msg : "");
  PyErr_Clear();
  Py_XDECREF(s);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return -1;
}

/* A parameter change: the instance's attributes of the parameters follow. */
static void a_retune(const psModel *m, psData *d) {
  Context *c = CTX(m);
  if (!c) return;
  for (int i = 0; i < m->policy->nparams; i++) {
    PyObject *v = PyLong_FromLongLong(m->param[i]);
    if (!v || PyObject_SetAttrString(c->inst, m->policy->params[i].name, v)) PyErr_Clear();
    Py_XDECREF(v);
  }
}

/* A sched_ext scheduler's parameter change: the class's own retune (it has
 * none yet), then the instance's attributes, which its ops read. */
static void x_retune(const psModel *m, psData *d) {
  if (ps_ext_class.pol.hooks.retune) ps_ext_class.pol.hooks.retune(m, d);
  a_retune(m, d);
}

static const psHooks pyp_hooks = {
    .task_spawn = a_task_spawn, .wakeup = a_wakeup, .deactivate = a_deactivate,
    .pick_next = a_pick_next, .task_fork = a_task_fork, .task_exit = a_task_exit,
    .put_prev = a_put_prev, .tick = a_tick, .yield = a_yield, .set_nice = a_set_nice,
    .set_scheduler = a_set_scheduler, .migrate = a_migrate, .check = a_check,
    .retune = a_retune,
};

/* ---- attaching ---- */

PyObject *pyp_attach(const module_state *st, PyObject *def, PyObject *inst, psModel *m,
                     psData *d) {
  if (!PyObject_TypeCheck(def, st->policydef_type)) {
    PyErr_SetString(PyExc_TypeError, "not a PolicyDef");
    return NULL;
  }
  Context *c = PyObject_GC_New(Context, st->context_type);
  if (!c) return NULL;
  c->def = (PolicyDef *)Py_NewRef(def);
  c->inst = Py_NewRef(inst);
  c->m = m;
  c->d = d;
  c->views = NULL;
  c->nviews = 0;
  c->exc = NULL;
  c->where[0] = 0;
  c->in_hook = c->pending = c->grace_sent = 0;
  c->moving = -1;
  c->rqs = PyMem_Calloc((size_t)m->ncpu, sizeof(PyObject *));
  PyObject_GC_Track(c);
  if (!c->rqs || PyObject_SetAttrString(inst, "_ctx", (PyObject *)c)) {
    if (!c->rqs) PyErr_NoMemory();
    c->m = NULL;
    Py_DECREF(c);
    return NULL;
  }
  m->ctx = c;
  a_retune(m, d);
  /* a sched_ext scheduler's ops.init, once for a state */
  if (c->def->ext) ps_ext_enable(m, d);
  return (PyObject *)c;
}

void pyp_detach(PyObject *ctx) {
  Context *c = (Context *)ctx;
  /* the cached views refer back to the context: drop them, so that the
   * context and its instance are freed with the simulator */
  for (int32_t i = 0; i < c->nviews; i++) Py_CLEAR(c->views[i]);
  if (c->rqs)
    for (int k = 0; k < c->m->ncpu; k++) Py_CLEAR(c->rqs[k]);
  PyMem_Free(c->rqs);
  c->rqs = NULL;
  c->m = NULL;
  c->d = NULL;
}

PyObject *pyp_instance(PyObject *ctx) { return ((Context *)ctx)->inst; }

const char *pyp_failure(PyObject *ctx) {
  Context *c = (Context *)ctx;
  return c->exc ? c->where : NULL;
}

int pyp_raise_failure(PyObject *ctx, PyObject *policy_error) {
  Context *c = (Context *)ctx;
  if (!c || !c->exc) return 0;
  if (PyErr_GivenExceptionMatches(c->exc, PyExc_KeyboardInterrupt)) {
    /* Ctrl-C: the KeyboardInterrupt itself (raised inside the hook, its
     * traceback through it), saying where the run stopped */
    PyObject *args = Py_BuildValue("(N)", PyUnicode_FromFormat("%s; the simulator cannot go on",
                                                                c->where));
    if (args) {
      PyObject_SetAttrString(c->exc, "args", args);
      Py_DECREF(args);
    }
    PyErr_Clear();
    PyErr_SetObject((PyObject *)Py_TYPE(c->exc), c->exc);
    return -1;
  }
  PyObject *msg = PyUnicode_FromString(c->where);
  PyObject *e = msg ? PyObject_CallOneArg(policy_error, msg) : NULL;
  Py_XDECREF(msg);
  if (e) {
    if (c->exc != Py_None) PyException_SetCause(e, Py_NewRef(c->exc));
    PyErr_SetObject(policy_error, e);
    Py_DECREF(e);
  }
  return -1;
}

/* ---- types ---- */

static PyType_Slot PolicyDef_slots[] = {
    {Py_tp_new, PolicyDef_new},
    {Py_tp_dealloc, PolicyDef_dealloc},
    {Py_tp_doc, "A Python policy class compiled into the engine's tables (pysched.policy)."},
    {0, NULL},
};

static PyType_Spec PolicyDef_spec = {"pysched._core.PolicyDef", sizeof(PolicyDef), 0,
                                     Py_TPFLAGS_DEFAULT, PolicyDef_slots};

/* Made with the module, so that an object of any of them reaches the
 * module's state (binding_state); st keeps a reference to each. */
int pyp_add_types(PyObject *module, module_state *st) {
  PyTypeObject **types[] = {&st->policydef_type, &st->context_type, &st->task_type,
                            &st->runqueue_type};
  const char *names[] = {"PolicyDef", "PolicyContext", "Task", "Runqueue"};
  PyType_Spec *specs[] = {&PolicyDef_spec, &pyp_context_spec, &pyp_task_spec,
                          &pyp_runqueue_spec};
  for (int k = 0; k < 4; k++) {
    PyObject *t = PyType_FromModuleAndSpec(module, specs[k], NULL);
    if (!t || PyModule_AddObjectRef(module, names[k], t)) {
      Py_XDECREF(t);
      return -1;
    }
    *types[k] = (PyTypeObject *)t;
  }
  return 0;
}

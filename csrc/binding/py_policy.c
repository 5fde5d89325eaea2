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
 * Ctrl-C (pysched.policy's SIGINT handler, installed for a run, asks
 * Context.sigint what to do): while no hook runs, KeyboardInterrupt at
 * once.  A first Ctrl-C while a hook runs lets it finish, and the step
 * fails as it returns; at a second Ctrl-C, or when the hook has not
 * returned after a grace period (Context.interrupt_hook, from a timer,
 * sends the main thread a SIGINT, which also ends a blocking call),
 * KeyboardInterrupt is raised inside the hook.  Either way the step fails
 * as at any hook's error, and the binding raises that KeyboardInterrupt
 * itself. */
#include "py_policy.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "engine_internal.h"

#define PYP_MAX_TASK_FIELDS (PS_TASK_PRIV / 8)
#define PYP_MAX_RQ_FIELDS 32

/* The hooks a Python class may define, in psHooks order of meaning. */
enum {
  H_TASK_SPAWN, H_WAKEUP, H_DEACTIVATE, H_PICK_NEXT,  /* mandatory */
  H_TASK_FORK, H_TASK_EXIT, H_PUT_PREV, H_TICK, H_YIELD, H_SET_NICE, H_SET_SCHEDULER,
  H_MIGRATE, H_CHECK, NHOOKS
};
static const char *const hook_names[NHOOKS] = {
    "task_spawn", "wakeup", "deactivate", "pick_next", "task_fork", "task_exit", "put_prev",
    "tick", "yield_", "set_nice", "set_scheduler", "migrate", "check"};

static int index_arg(PyObject *o, const char *what, long *out);

/* A type's name as Python's type(o).__name__ gives it (no module). */
static const char *type_name(PyObject *o) {
  const char *n = Py_TYPE(o)->tp_name, *dot = strrchr(n, '.');
  return dot ? dot + 1 : n;
}

/* ---- PolicyDef ---- */

typedef struct {
  PyObject_HEAD
  psPolicy pol;
  psPreset preset;
  psParamInfo params[PS_MAX_PARAMS];
  psFieldInfo task_fields[PYP_MAX_TASK_FIELDS];
  psFieldInfo rq_fields[PYP_MAX_RQ_FIELDS];
  const char *headline[PYP_MAX_TASK_FIELDS + 2];
  PyObject *strings;              /* keeps alive every str whose UTF-8 the tables point to */
  PyObject *field_index;          /* task field name -> index (generic, then the policy's) */
  PyObject *rq_index;             /* rq field name -> index */
  PyObject *funcs[NHOOKS];        /* the class's functions, NULL where it defines none */
} PolicyDef;

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
  tp->tp_free(self);
  Py_DECREF(tp);
}

static const psHooks pyp_hooks;

/* PolicyDef(cls, name, doc, params, task_fields, rq_fields, headline,
 * max_prio, hz): params as (name, default, min, max, unit, doc, hz_scaled)
 * tuples, fields as names; pysched.policy builds the call from the class. */
static PyObject *PolicyDef_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *cls, *name, *doc, *params, *tfields, *rfields, *headline;
  int max_prio, hz;
  if (!PyArg_ParseTuple(args, "OUUO!O!O!O!ii", &cls, &name, &doc, &PyList_Type, &params,
                        &PyList_Type, &tfields, &PyList_Type, &rfields, &PyList_Type, &headline,
                        &max_prio, &hz))
    return NULL;
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

/* ---- PolicyContext ---- */

typedef struct {
  PyObject_HEAD
  PolicyDef *def;
  PyObject *inst;
  psModel *m;                     /* NULL once the simulator is gone */
  psData *d;
  PyObject **views;               /* a Task view per slot, made on first use */
  int32_t nviews;
  PyObject **rqs;                 /* a Runqueue view per CPU */
  /* the first hook failure of a step: the exception and where */
  PyObject *exc;
  char where[PS_ERRLEN];
  /* Ctrl-C: while a hook runs, pysched's SIGINT handler notes the first
   * (`pending`), so that the hook may finish: the step fails as it returns.
   * `grace_sent`: the grace period's SIGINT is on its way (interrupt_hook) */
  int in_hook, pending, grace_sent;
  /* slot of the task the engine hands to migrate() now, -1 otherwise: the
   * one running task whose cpu a policy may set (a prev whose affinity
   * changed while it ran is moved in schedule(), still current) */
  int32_t moving;
} Context;

/* Task and Runqueue views begin alike: a view holds its context. */
typedef struct {
  PyObject_HEAD
  Context *ctx;
} View;

typedef struct {
  PyObject_HEAD
  Context *ctx;
  int32_t slot, pid;
} TaskView;

typedef struct {
  PyObject_HEAD
  Context *ctx;
  int cpu;
} RqView;

static Context *CTX(const psModel *m) { return (Context *)m->ctx; }

static int alive(Context *c) {
  if (c->m) return 1;
  PyErr_SetString(binding_state((PyObject *)c)->state_error, "this policy's simulator is gone");
  return 0;
}

static void Context_dealloc(Context *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  for (int32_t i = 0; i < self->nviews; i++) Py_XDECREF(self->views[i]);
  PyMem_Free(self->views);
  if (self->rqs && self->m)
    for (int c = 0; c < self->m->ncpu; c++) Py_XDECREF(self->rqs[c]);
  PyMem_Free(self->rqs);
  Py_XDECREF(self->def);
  Py_XDECREF(self->inst);
  Py_XDECREF(self->exc);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static int Context_clear(Context *self) {
  Py_CLEAR(self->inst);
  Py_CLEAR(self->exc);
  return 0;
}

static int Context_traverse(Context *self, visitproc visit, void *arg) {
  Py_VISIT(self->inst);
  Py_VISIT(self->exc);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

/* The view of task t (a new reference), or NULL with an error. */
static PyObject *task_view(Context *c, const psTask *t) {
  int32_t slot = ps_index(c->d, t);
  if (slot >= c->nviews) {
    int32_t n = c->nviews ? c->nviews : 16;
    while (n <= slot) n *= 2;
    PyObject **v = PyMem_Realloc(c->views, (size_t)n * sizeof(PyObject *));
    if (!v) return PyErr_NoMemory();
    memset(v + c->nviews, 0, (size_t)(n - c->nviews) * sizeof(PyObject *));
    c->views = v;
    c->nviews = n;
  }
  TaskView *v = (TaskView *)c->views[slot];
  if (!v || v->pid != t->pid) {
    v = PyObject_New(TaskView, binding_state((PyObject *)c)->task_type);
    if (!v) return NULL;
    Py_INCREF(c);
    v->ctx = c;
    v->slot = slot;
    v->pid = t->pid;
    Py_XSETREF(c->views[slot], (PyObject *)v);
  }
  Py_INCREF(v);
  return (PyObject *)v;
}

/* The task a view names, or NULL with an error (its task exited, or its
 * simulator is gone). */
static psTask *view_task(TaskView *v) {
  Context *c = v->ctx;
  if (!alive(c)) return NULL;
  if (v->slot < c->d->ntask) {
    psTask *t = &c->d->task[v->slot];
    if (t->pid == v->pid && (v->pid || t->is_idle)) return t;
  }
  PyErr_Format(binding_state((PyObject *)c)->state_error,
               "task %d has exited: keep pids, not Task views, in the policy's state", v->pid);
  return NULL;
}

/* Record a failed hook (the Python error is set): keep the exception, fail
 * the step.  Later hooks of this step do nothing. */
static void hook_failed(Context *c, int h, const psTask *t, const char *what) {
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
               hook_names[h], (long long)c->d->now_ns, task);
    else
      snprintf(c->where, sizeof c->where, "policy hook %s %s at t=%lld ns%s: %s%s%.120s",
               hook_names[h], what, (long long)c->d->now_ns, task,
               value ? type_name(value) : "", value ? ": " : "", msg ? msg : "");
    Py_XDECREF(s);
  } else {
    Py_XDECREF(value);
  }
  ps_fail(c->d, "%s", c->where);
}

/* Run hook h's function on argv (the instance first, n in all): its
 * result, or NULL with the error set.  A Ctrl-C noted while it ran
 * (`pending`), or a signal whose handler raises once it has returned (the
 * handlers run here, not a few instants later), turns its result into a
 * KeyboardInterrupt: the run stops after the hook that was running. */
static PyObject *invoke(Context *c, int h, PyObject *const *argv, size_t n) {
  c->in_hook++;
  PyObject *r = PyObject_Vectorcall(c->def->funcs[h], argv, n, NULL);
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

/* ---- the context's methods (pysched.Policy calls them) ---- */

/* An integer argument: any integer-like (a NumPy int ...) but no bool,
 * float or other; 0, or -1 with TypeError / OverflowError naming it. */
static int index_arg(PyObject *o, const char *what, long *out) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, type_name(o));
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  int overflow;
  *out = PyLong_AsLongAndOverflow(i, &overflow);
  if (overflow)
    PyErr_Format(PyExc_ValueError, "%s=<an int of %zu bits> is outside the allowed range", what,
                 _PyLong_NumBits(i));
  Py_DECREF(i);
  return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static psTask *pid_task(Context *c, PyObject *arg) {
  long pid;
  if (index_arg(arg, "pid", &pid)) return NULL;
  psTask *t = pid > 0 && pid < INT32_MAX ? ps_task_by_pid(c->m, c->d, (int)pid) : NULL;
  if (!t) PyErr_Format(PyExc_KeyError, "no live task with pid %ld", pid);
  return t;
}

static int cpu_arg(Context *c, PyObject *arg, int *cpu) {
  long v;
  if (index_arg(arg, "cpu", &v)) return -1;
  if (v < 0 || v >= c->m->ncpu) {
    PyErr_Format(PyExc_ValueError, "cpu=%ld is outside the allowed range 0..%d", v, c->m->ncpu - 1);
    return -1;
  }
  *cpu = (int)v;
  return 0;
}

static PyObject *Context_task(Context *c, PyObject *arg) {
  if (!alive(c)) return NULL;
  psTask *t = pid_task(c, arg);
  return t ? task_view(c, t) : NULL;
}

static PyObject *Context_curr(Context *c, PyObject *arg) {
  int cpu;
  if (!alive(c) || cpu_arg(c, arg, &cpu)) return NULL;
  return task_view(c, ps_curr(c->d, cpu));
}

static PyObject *Context_idle(Context *c, PyObject *arg) {
  int cpu;
  if (!alive(c) || cpu_arg(c, arg, &cpu)) return NULL;
  return task_view(c, &c->d->task[c->d->cpu[cpu].idle]);
}

static PyObject *Context_resched(Context *c, PyObject *arg) {
  int cpu;
  if (!alive(c) || cpu_arg(c, arg, &cpu)) return NULL;
  ps_resched_cpu(c->d, cpu);
  Py_RETURN_NONE;
}

static PyObject *Context_rq(Context *c, PyObject *arg) {
  int cpu;
  if (!alive(c) || cpu_arg(c, arg, &cpu)) return NULL;
  if (!c->rqs[cpu]) {
    RqView *v = PyObject_New(RqView, binding_state((PyObject *)c)->runqueue_type);
    if (!v) return NULL;
    v->ctx = (Context *)Py_NewRef(c);
    v->cpu = cpu;
    c->rqs[cpu] = (PyObject *)v;
  }
  return Py_NewRef(c->rqs[cpu]);
}

/* tasks() -> the live tasks' views, in pid order (for a policy that walks
 * every task, as 2.4's recalculation does). */
static PyObject *Context_tasks(Context *c, PyObject *noargs) {
  if (!alive(c)) return NULL;
  PyObject *l = PyList_New(0);
  for (int32_t i = c->m->ncpu; l && i < c->d->ntask; i++) {
    const psTask *t = &c->d->task[i];
    if (!t->pid || t->exit_ns >= 0) continue;
    PyObject *v = task_view(c, t);
    if (!v || PyList_Append(l, v)) Py_CLEAR(l);
    Py_XDECREF(v);
  }
  if (l && PyList_Sort(l)) Py_CLEAR(l);
  return l;
}

/* sigint(): what pysched's SIGINT handler does during a Python policy's
 * run.  True: raise KeyboardInterrupt -- no hook runs, or one does and
 * this is a second Ctrl-C or the grace period's signal.  False: a first
 * Ctrl-C while a hook runs, noted; the hook may finish (the handler starts
 * the grace period's timer).  None: the grace period's signal, come after
 * its hook returned; nothing to do. */
static PyObject *Context_sigint(Context *c, PyObject *noargs) {
  if (c->in_hook && !c->pending) {
    c->pending = 1;
    Py_RETURN_FALSE;
  }
  if (!c->in_hook && c->grace_sent) {
    c->grace_sent = 0;
    Py_RETURN_NONE;
  }
  c->grace_sent = 0;
  Py_RETURN_TRUE;
}

/* interrupt_hook(thread): the grace period after a first Ctrl-C is over
 * (pysched.policy's timer, in another thread).  If the hook it came in
 * still runs, send thread (the main thread, where it runs: its ident) a
 * SIGINT, which ends a blocking call there and makes the handler raise
 * inside the hook.  The check and the signal are made holding the GIL, so
 * the hook cannot return between them.  Returns whether it sent one. */
static PyObject *Context_interrupt_hook(Context *c, PyObject *arg) {
  unsigned long thread = PyLong_AsUnsignedLong(arg);
  if (thread == (unsigned long)-1 && PyErr_Occurred()) return NULL;
  if (!c->in_hook || !c->pending || c->grace_sent) Py_RETURN_FALSE;
  int err = pthread_kill((pthread_t)thread, SIGINT);
  if (err) {
    errno = err;
    return PyErr_SetFromErrno(PyExc_OSError);
  }
  c->grace_sent = 1;
  Py_RETURN_TRUE;
}

/* log_event(kind, cpu, task, other, prio, value): one event of the policy's
 * own kinds (prio, expire, backboost, array_switch, starving) in the event
 * log, when it is on, as a C policy's ps_log.  task is a Task view, a pid or
 * None; prio None means the task's prio (0 without a task).  The engine
 * logs switch, wakeup, fork and exit itself, and a cpu change logs migrate
 * (TaskView_setattro).  pysched.Policy.log_event names the kind. */
static PyObject *Context_log_event(Context *c, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 6) {
    PyErr_Format(PyExc_TypeError, "log_event takes 6 arguments (%zd given)", nargs);
    return NULL;
  }
  if (!alive(c)) return NULL;
  long kind, other, prio, value;
  int cpu;
  if (index_arg(args[0], "kind", &kind)) return NULL;
  if (kind != PS_EVT_PRIO && kind != PS_EVT_EXPIRE && kind != PS_EVT_BACKBOOST &&
      kind != PS_EVT_ARRAY_SWITCH && kind != PS_EVT_STARVING) {
    PyErr_Format(PyExc_ValueError, "kind=%ld is not an event kind a policy logs", kind);
    return NULL;
  }
  if (cpu_arg(c, args[1], &cpu)) return NULL;
  const psTask *t = NULL;
  if (PyObject_TypeCheck(args[2], binding_state((PyObject *)c)->task_type)) {
    if (((TaskView *)args[2])->ctx != c) {
      PyErr_SetString(PyExc_ValueError, "the task is another simulator's");
      return NULL;
    }
    if (!(t = view_task((TaskView *)args[2]))) return NULL;
  } else if (args[2] != Py_None && !(t = pid_task(c, args[2]))) {
    return NULL;
  }
  if (index_arg(args[3], "other", &other)) return NULL;
  if (other < -1 || other > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "other=%ld is outside the allowed range -1..%d", other, INT32_MAX);
    return NULL;
  }
  if (args[4] == Py_None) {
    prio = t ? t->prio : 0;
  } else {
    if (index_arg(args[4], "prio", &prio)) return NULL;
    if (prio < 0 || prio > c->m->policy->max_prio) {
      PyErr_Format(PyExc_ValueError, "prio=%ld is outside the allowed range 0..%d", prio,
                   c->m->policy->max_prio);
      return NULL;
    }
  }
  if (index_arg(args[5], "value", &value)) return NULL;
  ps_log(c->m, c->d, (int)kind, cpu, t, (int)other, (int)prio, value);
  Py_RETURN_NONE;
}

static PyObject *Context_get_now(Context *c, void *closure) {
  return alive(c) ? PyLong_FromLongLong(c->d->now_ns) : NULL;
}
static PyObject *Context_get_jiffies(Context *c, void *closure) {
  return alive(c) ? PyLong_FromUnsignedLongLong(c->d->jiffies) : NULL;
}
static PyObject *Context_get_cpus(Context *c, void *closure) {
  return alive(c) ? PyLong_FromLong(c->m->ncpu) : NULL;
}
static PyObject *Context_get_hz(Context *c, void *closure) {
  return alive(c) ? PyLong_FromLong(c->m->hz) : NULL;
}

static PyMethodDef Context_methods[] = {
    {"task", (PyCFunction)Context_task, METH_O, "task(pid) -> Task view of a live task"},
    {"curr", (PyCFunction)Context_curr, METH_O, "curr(cpu) -> the task running on cpu"},
    {"idle", (PyCFunction)Context_idle, METH_O, "idle(cpu) -> cpu's idle task"},
    {"resched", (PyCFunction)Context_resched, METH_O, "resched(cpu): set need_resched"},
    {"rq", (PyCFunction)Context_rq, METH_O, "rq(cpu) -> Runqueue view of cpu's fields"},
    {"tasks", (PyCFunction)Context_tasks, METH_NOARGS, "live tasks, pid order"},
    {"sigint", (PyCFunction)Context_sigint, METH_NOARGS, "Ctrl-C during a run: raise, defer or not"},
    {"interrupt_hook", (PyCFunction)Context_interrupt_hook, METH_O,
     "interrupt_hook(thread): the grace period is over: SIGINT to thread if the hook still runs"},
    {"log_event", (PyCFunction)(void (*)(void))Context_log_event, METH_FASTCALL,
     "log_event(kind, cpu, task, other, prio, value): a policy event in the event log"},
    {NULL},
};

static PyGetSetDef Context_getset[] = {
    {"now_ns", (getter)Context_get_now, NULL, "simulated time, ns", NULL},
    {"jiffies", (getter)Context_get_jiffies, NULL, "ticks so far", NULL},
    {"cpus", (getter)Context_get_cpus, NULL, "CPUs", NULL},
    {"hz", (getter)Context_get_hz, NULL, "ticks per second", NULL},
    {NULL},
};

/* ---- Task views ---- */

static void View_dealloc(View *self) {
  PyTypeObject *tp = Py_TYPE(self);
  Py_DECREF(self->ctx);
  PyObject_Free(self);
  Py_DECREF(tp);
}

static int field_of(Context *c, PyObject *name) {
  PyObject *i = PyDict_GetItemWithError(c->def->field_index, name);
  return i ? (int)PyLong_AsLong(i) : -1;
}

static PyObject *TaskView_getattro(TaskView *self, PyObject *name) {
  Context *c = self->ctx;
  int i = field_of(c, name);
  if (i < 0) {
    if (PyErr_Occurred()) return NULL;
    return PyObject_GenericGetAttr((PyObject *)self, name);
  }
  psTask *t = view_task(self);
  return t ? pyp_field_value(ps_field_info(c->m, i), ps_task_value(c->m, c->d, t, i)) : NULL;
}

/* What a policy may set: prio, static_prio, time_slice, cpu (of a task
 * that is not running, or of the one migrate() was handed) and its own
 * fields.  The rest belongs to the engine.  A change of cpu is a migration:
 * counted in nr_migrations and logged, as every C policy that moves a task
 * does (balance_o1's move_task, the engine's default migrate). */
static int TaskView_setattro(TaskView *self, PyObject *name, PyObject *value) {
  Context *c = self->ctx;
  int i = field_of(c, name);
  if (i < 0) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_AttributeError, "a task has no field %R", name);
    return -1;
  }
  psTask *t = view_task(self);
  if (!t) return -1;
  if (!value) {
    PyErr_Format(PyExc_AttributeError, "a task's field %R cannot be deleted", name);
    return -1;
  }
  if (PyBool_Check(value) || !PyIndex_Check(value)) {
    PyErr_Format(PyExc_TypeError, "pid %d: %U must be an int, not %.100s", t->pid, name,
                 type_name(value));
    return -1;
  }
  PyObject *num = PyNumber_Index(value);
  if (!num) return -1;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(num, &overflow);
  Py_DECREF(num);
  if (v == -1 && PyErr_Occurred()) return -1;
  const psFieldInfo *f = ps_field_info(c->m, i);
  const char *fname = f->name;
  long long lo = INT64_MIN, hi = INT64_MAX;
  if (i >= ps_ntask_fields) {
    /* the policy's own int64 field */
  } else if (!strcmp(fname, "prio") || !strcmp(fname, "static_prio")) {
    lo = 0, hi = c->m->policy->max_prio;
  } else if (!strcmp(fname, "time_slice")) {
    lo = 0, hi = INT32_MAX;
  } else if (!strcmp(fname, "cpu")) {
    lo = 0, hi = c->m->ncpu - 1;
    int running = &c->d->task[c->d->cpu[t->cpu].curr] == t && ps_index(c->d, t) != c->moving;
    if (!overflow && v >= lo && v <= hi && (running || t->is_idle || !(t->cpus_allowed >> v & 1))) {
      PyErr_Format(PyExc_ValueError, "pid %d: cpu=%lld is not allowed (%s)", t->pid, v,
                   t->is_idle ? "an idle task stays on its CPU"
                   : running  ? "it is running: the engine moves it"
                              : "outside its affinity");
      return -1;
    }
  } else {
    PyErr_Format(PyExc_AttributeError, "pid %d: %s is the engine's (a policy sets prio, "
                 "static_prio, time_slice, cpu and its own fields)", t->pid, fname);
    return -1;
  }
  if (overflow || v < lo || v > hi) {
    PyErr_Format(PyExc_ValueError, "pid %d: %s=%R is outside the allowed range %lld..%lld", t->pid,
                 fname, value, lo, hi);
    return -1;
  }
  if (f->offset == offsetof(psTask, cpu) && f->at == PS_AT_TASK && v != t->cpu) {
    int from = t->cpu;
    t->cpu = (int32_t)v;
    ps_count_up(&t->nr_migrations);
    ps_log(c->m, c->d, PS_EVT_MIGRATE, t->cpu, t, from, t->prio, 0);
    return 0;
  }
  psu_field_write(f->at == PS_AT_PRIV ? (void *)t->priv : (void *)t, f, v);
  return 0;
}

static PyObject *TaskView_repr(TaskView *self) {
  return PyUnicode_FromFormat("<Task pid %d>", self->pid);
}

static Py_hash_t TaskView_hash(TaskView *self) { return self->pid + 1; }

/* Views compare by pid (and sort so: Context.tasks returns pid order). */
/* CPython calls a type's richcompare with an object of that type first
 * (reflected if need be): a is a Task, and its type gives the module. */
static PyObject *TaskView_richcompare(PyObject *a, PyObject *b, int op) {
  PyTypeObject *task_type = binding_state(a)->task_type;
  if (!PyObject_TypeCheck(a, task_type) || !PyObject_TypeCheck(b, task_type))
    Py_RETURN_NOTIMPLEMENTED;
  TaskView *x = (TaskView *)a, *y = (TaskView *)b;
  int32_t p = x->pid, q = y->pid;
  if (x->ctx != y->ctx && (op == Py_EQ || op == Py_NE)) return PyBool_FromLong(op == Py_NE);
  Py_RETURN_RICHCOMPARE(p, q, op);
}

static PyObject *TaskView_reduce(TaskView *self, PyObject *noargs) {
  PyErr_Format(PyExc_TypeError, "a Task view (pid %d) cannot be copied or pickled: keep pids in "
               "the policy's state", self->pid);
  return NULL;
}

static PyMethodDef TaskView_methods[] = {
    {"__reduce__", (PyCFunction)TaskView_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyObject *TaskView_get_running(TaskView *self, void *closure) {
  psTask *t = view_task(self);
  return t ? PyBool_FromLong(&self->ctx->d->task[self->ctx->d->cpu[t->cpu].curr] == t) : NULL;
}
static PyObject *TaskView_get_is_idle(TaskView *self, void *closure) {
  psTask *t = view_task(self);
  return t ? PyBool_FromLong(t->is_idle) : NULL;
}
static PyObject *TaskView_get_name(TaskView *self, void *closure) {
  psTask *t = view_task(self);
  return t ? PyUnicode_DecodeUTF8(t->name, (Py_ssize_t)strnlen(t->name, PS_NAME_LEN), "replace")
           : NULL;
}

static PyGetSetDef TaskView_getset[] = {
    {"running", (getter)TaskView_get_running, NULL, "running on its CPU now", NULL},
    {"is_idle", (getter)TaskView_get_is_idle, NULL, "an idle task", NULL},
    {"name", (getter)TaskView_get_name, NULL, "its name", NULL},
    {NULL},
};

/* ---- Runqueue views ---- */

static int64_t *rq_slot(RqView *self, PyObject *name) {
  Context *c = self->ctx;
  PyObject *i = PyDict_GetItemWithError(c->def->rq_index, name);
  if (!i || !alive(c)) return NULL;
  return (int64_t *)ps_rq(c->m, c->d, self->cpu) + PyLong_AsLong(i);
}

static PyObject *RqView_getattro(RqView *self, PyObject *name) {
  int64_t *p = rq_slot(self, name);
  if (p) return PyLong_FromLongLong(*p);
  return PyErr_Occurred() ? NULL : PyObject_GenericGetAttr((PyObject *)self, name);
}

static int RqView_setattro(RqView *self, PyObject *name, PyObject *value) {
  int64_t *p = rq_slot(self, name);
  if (!p) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_AttributeError, "the runqueue has no field %R (declare it in rq_fields)", name);
    return -1;
  }
  if (!value || PyBool_Check(value) || !PyIndex_Check(value)) {
    PyErr_Format(PyExc_TypeError, "runqueue field %U must be an int, not %.100s", name,
                 value ? type_name(value) : "nothing");
    return -1;
  }
  PyObject *num = PyNumber_Index(value);
  if (!num) return -1;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(num, &overflow);
  Py_DECREF(num);
  if (overflow) {
    PyErr_Format(PyExc_ValueError, "runqueue field %U=%R is outside int64", name, value);
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *p = v;
  return 0;
}

static PyObject *RqView_get_cpu(RqView *self, void *closure) { return PyLong_FromLong(self->cpu); }

static PyGetSetDef RqView_getset[] = {
    {"cpu", (getter)RqView_get_cpu, NULL, "its CPU", NULL},
    {NULL},
};

/* ---- types ---- */

static PyType_Slot PolicyDef_slots[] = {
    {Py_tp_new, PolicyDef_new},
    {Py_tp_dealloc, PolicyDef_dealloc},
    {Py_tp_doc, "A Python policy class compiled into the engine's tables (pysched.policy)."},
    {0, NULL},
};
static PyType_Slot Context_slots[] = {
    {Py_tp_dealloc, Context_dealloc},
    {Py_tp_traverse, Context_traverse},
    {Py_tp_clear, Context_clear},
    {Py_tp_methods, Context_methods},
    {Py_tp_getset, Context_getset},
    {Py_tp_doc, "A Python policy instance's link to its simulator."},
    {0, NULL},
};
static PyType_Slot Task_slots[] = {
    {Py_tp_dealloc, View_dealloc},
    {Py_tp_getattro, TaskView_getattro},
    {Py_tp_setattro, TaskView_setattro},
    {Py_tp_repr, TaskView_repr},
    {Py_tp_hash, TaskView_hash},
    {Py_tp_richcompare, TaskView_richcompare},
    {Py_tp_methods, TaskView_methods},
    {Py_tp_getset, TaskView_getset},
    {Py_tp_doc, "A task as a policy sees it: every field by name; prio, time_slice, cpu and the "
                "policy's fields writable."},
    {0, NULL},
};
static PyType_Slot Runqueue_slots[] = {
    {Py_tp_dealloc, View_dealloc},
    {Py_tp_getattro, RqView_getattro},
    {Py_tp_setattro, RqView_setattro},
    {Py_tp_getset, RqView_getset},
    {Py_tp_doc, "A CPU's runqueue fields as the policy declared them (rq_fields)."},
    {0, NULL},
};

static PyType_Spec specs[] = {
    {"pysched._core.PolicyDef", sizeof(PolicyDef), 0, Py_TPFLAGS_DEFAULT, PolicyDef_slots},
    {"pysched._core.PolicyContext", sizeof(Context), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
     Context_slots},
    {"pysched._core.Task", sizeof(TaskView), 0, Py_TPFLAGS_DEFAULT, Task_slots},
    {"pysched._core.Runqueue", sizeof(RqView), 0, Py_TPFLAGS_DEFAULT, Runqueue_slots},
};

/* Made with the module, so that an object of any of them reaches the
 * module's state (binding_state); st keeps a reference to each. */
int pyp_add_types(PyObject *module, module_state *st) {
  PyTypeObject **types[] = {&st->policydef_type, &st->context_type, &st->task_type,
                            &st->runqueue_type};
  const char *names[] = {"PolicyDef", "PolicyContext", "Task", "Runqueue"};
  for (int k = 0; k < 4; k++) {
    PyObject *t = PyType_FromModuleAndSpec(module, &specs[k], NULL);
    if (!t || PyModule_AddObjectRef(module, names[k], t)) {
      Py_XDECREF(t);
      return -1;
    }
    *types[k] = (PyTypeObject *)t;
  }
  return 0;
}

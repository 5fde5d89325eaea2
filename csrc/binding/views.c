/* The objects a Python policy sees: its PolicyContext (pysched.Policy's
 * _ctx: the simulator's clock, its tasks and CPUs, log_event, and the
 * Ctrl-C handshake) and the Task and Runqueue views, which check on every
 * use that their task and simulator still exist. */
#include "py_policy_internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

const char *type_name(PyObject *o) {
  const char *n = Py_TYPE(o)->tp_name, *dot = strrchr(n, '.');
  return dot ? dot + 1 : n;
}

/* ---- PolicyContext ---- */

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

PyObject *task_view(Context *c, const psTask *t) {
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
psTask *view_task(TaskView *v) {
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

/* ---- the context's methods (pysched.Policy calls them) ---- */

/* An integer argument: any integer-like (a NumPy int ...) but no bool,
 * float or other; 0, or -1 with TypeError / OverflowError naming it. */
int index_arg(PyObject *o, const char *what, long *out) {
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
 * (pysched.policy.base's timer, in another thread).  If the hook it came in
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
    /* the kfuncs of a sched_ext scheduler (py_ext.c) */
    {"ext_insert", (PyCFunction)(void (*)(void))pyx_insert, METH_FASTCALL,
     "ext_insert(task, dsq_id, slice, vtime or None, enq_flags)"},
    {"ext_move_to_local", (PyCFunction)pyx_move_to_local, METH_O, "ext_move_to_local(dsq_id)"},
    {"ext_iter_new", (PyCFunction)(void (*)(void))pyx_iter_new, METH_FASTCALL,
     "ext_iter_new(dsq_id, flags) -> (rc, state)"},
    {"ext_iter_next", (PyCFunction)pyx_iter_next, METH_O, "ext_iter_next(state) -> task or None"},
    {"ext_iter_set", (PyCFunction)(void (*)(void))pyx_iter_set, METH_FASTCALL,
     "ext_iter_set(state, vtime, value)"},
    {"ext_dsq_move", (PyCFunction)(void (*)(void))pyx_dsq_move, METH_FASTCALL,
     "ext_dsq_move(state, task, dsq_id, enq_flags) -> moved"},
    {"ext_create_dsq", (PyCFunction)pyx_create_dsq, METH_O, "ext_create_dsq(dsq_id)"},
    {"ext_kick_cpu", (PyCFunction)(void (*)(void))pyx_kick_cpu, METH_FASTCALL,
     "ext_kick_cpu(cpu, flags)"},
    {"ext_nr_queued", (PyCFunction)pyx_nr_queued, METH_O, "ext_nr_queued(dsq_id)"},
    {"ext_select_cpu_dfl", (PyCFunction)(void (*)(void))pyx_select_cpu_dfl, METH_FASTCALL,
     "ext_select_cpu_dfl(task, prev_cpu, wake_flags) -> (cpu, is_idle)"},
    {"ext_pick_idle_cpu", (PyCFunction)(void (*)(void))pyx_pick_idle_cpu, METH_FASTCALL,
     "ext_pick_idle_cpu(cpus_allowed, flags)"},
    {"ext_test_and_clear_cpu_idle", (PyCFunction)pyx_test_and_clear_cpu_idle, METH_O,
     "ext_test_and_clear_cpu_idle(cpu)"},
    {"ext_error", (PyCFunction)pyx_error, METH_O, "ext_error(msg): scx_bpf_error"},
    {"ext_exit_info", (PyCFunction)pyx_exit_info, METH_NOARGS, "(kind, message, dump)"},
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
  return t ? pyp_task_field(c->m, c->d, t, i) : NULL;
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
  if (c->def->ext && strcmp(fname, "slice") && strcmp(fname, "dsq_vtime")) {
    PyErr_Format(PyExc_AttributeError, "pid %d: %s is the sched_ext class's (a scheduler sets "
                 "slice and dsq_vtime)", t->pid, fname);
    return -1;
  } else if (c->def->ext && !strcmp(fname, "slice")) {
    lo = 0;
  } else if (i >= ps_ntask_fields) {
    /* the policy's own int64 field */
  } else if (!strcmp(fname, "prio") || !strcmp(fname, "static_prio")) {
    lo = 0, hi = c->m->policy->max_prio;
  } else if (!strcmp(fname, "time_slice")) {
    lo = 0, hi = INT32_MAX;
  } else if (!strcmp(fname, "cpu")) {
    lo = 0, hi = c->m->ncpu - 1;
    int running = &c->d->task[c->d->cpu[t->cpu].curr] == t && ps_index(c->d, t) != c->moving;
    if (!overflow && v >= lo && v <= hi && (running || t->is_idle || !ps_cpu_test(&t->cpus_allowed, (int)v))) {
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
    ps_forget_runnable(c->d);
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

/* sched_ext's names for the affinity (p->cpus_ptr, p->nr_cpus_allowed) */
static PyObject *TaskView_get_cpus_ptr(TaskView *self, void *closure) {
  psTask *t = view_task(self);
  return t ? cpumask_to_int(&t->cpus_allowed) : NULL;
}
static PyObject *TaskView_get_nr_cpus_allowed(TaskView *self, void *closure) {
  psTask *t = view_task(self);
  return t ? PyLong_FromLong(ps_cpumask_weight(&t->cpus_allowed)) : NULL;
}

static PyGetSetDef TaskView_getset[] = {
    {"cpus_ptr", (getter)TaskView_get_cpus_ptr, NULL, "the affinity mask (cpus_allowed)", NULL},
    {"nr_cpus_allowed", (getter)TaskView_get_nr_cpus_allowed, NULL, "CPUs in its affinity", NULL},
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

PyType_Spec pyp_context_spec = {"pysched._core.PolicyContext", sizeof(Context), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, Context_slots};
PyType_Spec pyp_task_spec = {"pysched._core.Task", sizeof(TaskView), 0, Py_TPFLAGS_DEFAULT,
                             Task_slots};
PyType_Spec pyp_runqueue_spec = {"pysched._core.Runqueue", sizeof(RqView), 0, Py_TPFLAGS_DEFAULT,
                                 Runqueue_slots};

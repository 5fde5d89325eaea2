/* sched_ext schedulers written in Python (pysched.ext.Scheduler): the ops
 * table (psExtOps, csrc/policies/ext/ext_ops.h) whose entries call the
 * methods of the same name -- NULL where the class defines none, so that
 * the class does what the kernel does without that op -- and the kfuncs
 * as methods of the PolicyContext, which the Scheduler's methods call.
 * The class's rules are all in csrc/policies/ext/; this file converts. */
#include "py_policy_internal.h"

static const char *const op_attr[PYX_NOPS] = {
    "select_cpu", "enqueue", "dequeue", "dispatch", "tick", "runnable", "running", "stopping",
    "quiescent", "yield_", "set_weight", "set_cpumask", "update_idle", "init_task", "exit_task",
    "enable", "disable", "init", "exit"};

static Context *CTX(const psModel *m) { return (Context *)m->ctx; }

/* The op's function, or NULL when nothing may be called (no context, a
 * failed step). */
static Context *ready(const psModel *m, const psData *d) {
  Context *c = CTX(m);
  return c && !c->exc && !d->failed ? c : NULL;
}

/* Call op k with the instance and n arguments (stolen); the result or NULL
 * after recording the failure. */
static PyObject *op_call(Context *c, int k, const psTask *subject, PyObject **args, int n) {
  PyObject *argv[5];
  argv[0] = c->inst;
  int ok = 1;
  for (int j = 0; j < n; j++) ok &= (argv[j + 1] = args[j]) != NULL;
  PyObject *r = ok ? pyp_invoke(c, c->def->ext_funcs[k], argv, (size_t)n + 1) : NULL;
  for (int j = 0; j < n; j++) Py_XDECREF(args[j]);
  if (!r) {
    char name[32];
    snprintf(name, sizeof name, "ops.%s", ext_op_names[k]);
    pyp_failed(c, name, subject, "raised");
  }
  return r;
}

/* An int result of op k in lo..hi; def after a failure. */
static long op_int(Context *c, int k, const psTask *subject, PyObject *r, long lo, long hi,
                   long def) {
  if (!r) return def;
  long v;
  if (index_arg(r, "the result", &v) || v < lo || v > hi) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_ValueError, "it returned %ld, outside %ld..%ld", v, lo, hi);
    Py_DECREF(r);
    char name[32];
    snprintf(name, sizeof name, "ops.%s", ext_op_names[k]);
    pyp_failed(c, name, subject, "returned an unusable value");
    return def;
  }
  Py_DECREF(r);
  return v;
}

#define VIEW(t) task_view(c, (t))
#define U64(v) PyLong_FromUnsignedLongLong(v)
#define INT(v) PyLong_FromLong(v)

static int32_t x_select_cpu(const psModel *m, psData *d, psTask *p, int32_t prev_cpu, uint64_t wf) {
  Context *c = ready(m, d);
  if (!c) return prev_cpu;
  PyObject *args[] = {VIEW(p), INT(prev_cpu), U64(wf)};
  PyObject *r = op_call(c, EXT_OP_SELECT_CPU, p, args, 3);
  return (int32_t)op_int(c, EXT_OP_SELECT_CPU, p, r, INT32_MIN, INT32_MAX, prev_cpu);
}

#define VOID_OP(fn, K, subject, n, ...)                 \
  do {                                                  \
    Context *c = ready(m, d);                           \
    if (!c) return;                                     \
    PyObject *args[] = {__VA_ARGS__};                   \
    Py_XDECREF(op_call(c, K, subject, args, n));        \
  } while (0)

static void x_enqueue(const psModel *m, psData *d, psTask *p, uint64_t f) {
  VOID_OP(enqueue, EXT_OP_ENQUEUE, p, 2, VIEW(p), U64(f));
}
static void x_dequeue(const psModel *m, psData *d, psTask *p, uint64_t f) {
  VOID_OP(dequeue, EXT_OP_DEQUEUE, p, 2, VIEW(p), U64(f));
}
static void x_dispatch(const psModel *m, psData *d, int32_t cpu, psTask *prev) {
  VOID_OP(dispatch, EXT_OP_DISPATCH, prev, 2, INT(cpu), prev ? VIEW(prev) : Py_NewRef(Py_None));
}
static void x_tick(const psModel *m, psData *d, psTask *p) {
  VOID_OP(tick, EXT_OP_TICK, p, 1, VIEW(p));
}
static void x_runnable(const psModel *m, psData *d, psTask *p, uint64_t f) {
  VOID_OP(runnable, EXT_OP_RUNNABLE, p, 2, VIEW(p), U64(f));
}
static void x_running(const psModel *m, psData *d, psTask *p) {
  VOID_OP(running, EXT_OP_RUNNING, p, 1, VIEW(p));
}
static void x_stopping(const psModel *m, psData *d, psTask *p, int runnable) {
  VOID_OP(stopping, EXT_OP_STOPPING, p, 2, VIEW(p), PyBool_FromLong(runnable));
}
static void x_quiescent(const psModel *m, psData *d, psTask *p, uint64_t f) {
  VOID_OP(quiescent, EXT_OP_QUIESCENT, p, 2, VIEW(p), U64(f));
}
static int x_yield(const psModel *m, psData *d, psTask *from, psTask *to) {
  Context *c = ready(m, d);
  if (!c) return 0;
  PyObject *args[] = {VIEW(from), to ? VIEW(to) : Py_NewRef(Py_None)};
  PyObject *r = op_call(c, EXT_OP_YIELD, from, args, 2);
  int v = r ? PyObject_IsTrue(r) : 0;
  Py_XDECREF(r);
  if (v < 0) pyp_failed(c, "ops.yield", from, "returned a value without a truth value");
  return v > 0;
}
static void x_set_weight(const psModel *m, psData *d, psTask *p, uint32_t w) {
  VOID_OP(set_weight, EXT_OP_SET_WEIGHT, p, 2, VIEW(p), INT((long)w));
}
static void x_set_cpumask(const psModel *m, psData *d, psTask *p, const psCpuMask *mask) {
  VOID_OP(set_cpumask, EXT_OP_SET_CPUMASK, p, 2, VIEW(p), cpumask_to_int(mask));
}
static void x_update_idle(const psModel *m, psData *d, int32_t cpu, int idle) {
  VOID_OP(update_idle, EXT_OP_UPDATE_IDLE, NULL, 2, INT(cpu), PyBool_FromLong(idle));
}
static int32_t x_init_task(const psModel *m, psData *d, psTask *p, int fork) {
  Context *c = ready(m, d);
  if (!c) return 0;
  PyObject *args[] = {VIEW(p), PyBool_FromLong(fork)};
  PyObject *r = op_call(c, EXT_OP_INIT_TASK, p, args, 2);
  if (r == Py_None) {
    Py_DECREF(r);
    return 0;
  }
  return (int32_t)op_int(c, EXT_OP_INIT_TASK, p, r, -4095, 0, 0);
}
static void x_exit_task(const psModel *m, psData *d, psTask *p, int cancelled) {
  VOID_OP(exit_task, EXT_OP_EXIT_TASK, p, 2, VIEW(p), PyBool_FromLong(cancelled));
}
static void x_enable(const psModel *m, psData *d, psTask *p) {
  VOID_OP(enable, EXT_OP_ENABLE, p, 1, VIEW(p));
}
static void x_disable(const psModel *m, psData *d, psTask *p) {
  VOID_OP(disable, EXT_OP_DISABLE, p, 1, VIEW(p));
}
static int32_t x_init(const psModel *m, psData *d) {
  Context *c = ready(m, d);
  if (!c) return 0;
  PyObject *r = op_call(c, EXT_OP_INIT, NULL, NULL, 0);
  if (r == Py_None) {
    Py_DECREF(r);
    return 0;
  }
  return (int32_t)op_int(c, EXT_OP_INIT, NULL, r, -4095, 0, 0);
}
static void x_exit(const psModel *m, psData *d, int32_t kind, const char *reason, const char *msg) {
  VOID_OP(exit, EXT_OP_EXIT, NULL, 3, INT(kind), PyUnicode_FromString(reason),
          PyUnicode_FromString(msg));
}

/* (dispatch_max_batch, timeout_ms, flags): checked by pysched.ext */
int pyx_def_init(PolicyDef *def, PyObject *cls, PyObject *settings) {
  unsigned int batch, timeout;
  unsigned long long flags;
  if (!PyArg_ParseTuple(settings, "IIK;sched_ext settings are (dispatch_max_batch, timeout_ms, "
                        "flags)", &batch, &timeout, &flags))
    return -1;
  if (batch > EXT_MAX_BATCH_PUBLIC || timeout > SCX_WATCHDOG_MAX_TIMEOUT_MS) {
    PyErr_Format(PyExc_ValueError, "dispatch_max_batch=%u (0..%d) or timeout_ms=%u (0..%d) is "
                 "outside its range", batch, EXT_MAX_BATCH_PUBLIC, timeout,
                 SCX_WATCHDOG_MAX_TIMEOUT_MS);
    return -1;
  }
  for (int k = 0; k < PYX_NOPS; k++) {
    PyObject *fn = PyObject_GetAttrString(cls, op_attr[k]);
    if (!fn) {
      PyErr_Clear();
      continue;
    }
    if (fn == Py_None) {
      Py_DECREF(fn);
      continue;
    }
    if (!PyCallable_Check(fn)) {
      PyErr_Format(PyExc_TypeError, "%s.%s must be a method", def->pol.name, op_attr[k]);
      Py_DECREF(fn);
      return -1;
    }
    def->ext_funcs[k] = fn;
  }
  psExtOps *o = &def->ext_ops;
  PyObject **f = def->ext_funcs;
  o->select_cpu = f[EXT_OP_SELECT_CPU] ? x_select_cpu : NULL;
  o->enqueue = f[EXT_OP_ENQUEUE] ? x_enqueue : NULL;
  o->dequeue = f[EXT_OP_DEQUEUE] ? x_dequeue : NULL;
  o->dispatch = f[EXT_OP_DISPATCH] ? x_dispatch : NULL;
  o->tick = f[EXT_OP_TICK] ? x_tick : NULL;
  o->runnable = f[EXT_OP_RUNNABLE] ? x_runnable : NULL;
  o->running = f[EXT_OP_RUNNING] ? x_running : NULL;
  o->stopping = f[EXT_OP_STOPPING] ? x_stopping : NULL;
  o->quiescent = f[EXT_OP_QUIESCENT] ? x_quiescent : NULL;
  o->yield = f[EXT_OP_YIELD] ? x_yield : NULL;
  o->set_weight = f[EXT_OP_SET_WEIGHT] ? x_set_weight : NULL;
  o->set_cpumask = f[EXT_OP_SET_CPUMASK] ? x_set_cpumask : NULL;
  o->update_idle = f[EXT_OP_UPDATE_IDLE] ? x_update_idle : NULL;
  o->init_task = f[EXT_OP_INIT_TASK] ? x_init_task : NULL;
  o->exit_task = f[EXT_OP_EXIT_TASK] ? x_exit_task : NULL;
  o->enable = f[EXT_OP_ENABLE] ? x_enable : NULL;
  o->disable = f[EXT_OP_DISABLE] ? x_disable : NULL;
  o->init = f[EXT_OP_INIT] ? x_init : NULL;
  o->exit = f[EXT_OP_EXIT] ? x_exit : NULL;
  o->dispatch_max_batch = batch;
  o->timeout_ms = timeout;
  o->flags = flags;
  return 0;
}

/* ---- the kfuncs, as PolicyContext methods ---- */

static int live(Context *c) {
  if (c->m && c->d && c->def->ext) return 1;
  PyErr_SetString(PyExc_RuntimeError, c->m ? "not a sched_ext scheduler"
                                           : "this scheduler's simulator is gone");
  return 0;
}

static int u64_arg(PyObject *o, const char *what, uint64_t *out) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, type_name(o));
    return -1;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  *out = PyLong_AsUnsignedLongLong(i);
  int bad = *out == (uint64_t)-1 && PyErr_Occurred();
  if (bad) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s=%R is outside the allowed range 0..2**64-1", what, i);
  }
  Py_DECREF(i);
  return bad ? -1 : 0;
}

static psTask *task_arg(Context *c, PyObject *o) {
  if (!PyObject_TypeCheck(o, binding_state((PyObject *)c)->task_type)) {
    PyErr_Format(PyExc_TypeError, "a Task view was expected, not %.100s", type_name(o));
    return NULL;
  }
  if (((TaskView *)o)->ctx != c) {
    PyErr_SetString(PyExc_ValueError, "a task of another simulator");
    return NULL;
  }
  psTask *t = view_task((TaskView *)o);
  if (t && t->is_idle) {
    PyErr_SetString(PyExc_ValueError, "an idle task is not the class's");
    return NULL;
  }
  return t;
}

/* ext_insert(task, dsq_id, slice, vtime or None, enq_flags) */
PyObject *pyx_insert(Context *c, PyObject *const *args, Py_ssize_t n) {
  if (!live(c)) return NULL;
  if (n != 5) {
    PyErr_SetString(PyExc_TypeError, "ext_insert takes (task, dsq_id, slice, vtime, enq_flags)");
    return NULL;
  }
  psTask *p = task_arg(c, args[0]);
  uint64_t dsq, slice, vtime = 0, flags;
  if (!p || u64_arg(args[1], "dsq_id", &dsq) || u64_arg(args[2], "slice", &slice) ||
      (args[3] != Py_None && u64_arg(args[3], "vtime", &vtime)) ||
      u64_arg(args[4], "enq_flags", &flags))
    return NULL;
  if (args[3] == Py_None)
    scx_bpf_dsq_insert(c->m, c->d, p, dsq, slice, flags);
  else
    scx_bpf_dsq_insert_vtime(c->m, c->d, p, dsq, slice, vtime, flags);
  Py_RETURN_NONE;
}

/* ---- DSQ walks: a walk's state (psExtDsqIter) in a bytearray the
 * Python DsqIter keeps, checked as it comes back (its task indices index
 * the task table) ---- */

static psExtDsqIter *iter_arg(Context *c, PyObject *o) {
  if (!PyByteArray_Check(o) || PyByteArray_GET_SIZE(o) != (Py_ssize_t)sizeof(psExtDsqIter)) {
    PyErr_SetString(PyExc_TypeError, "a DSQ walk's state was expected (dsq_iter())");
    return NULL;
  }
  psExtDsqIter *it = (psExtDsqIter *)PyByteArray_AS_STRING(o);
  if (it->last < -2 || it->last >= c->d->ntask || it->succ < -1 || it->succ >= c->d->ntask) {
    PyErr_SetString(PyExc_ValueError, "a DSQ walk's state that is not a walk's");
    return NULL;
  }
  return it;
}

/* ext_iter_new(dsq_id, flags) -> (0, -EINVAL or -ENOENT, state) */
PyObject *pyx_iter_new(Context *c, PyObject *const *args, Py_ssize_t n) {
  uint64_t dsq, flags;
  if (!live(c)) return NULL;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "ext_iter_new takes (dsq_id, flags)");
    return NULL;
  }
  if (u64_arg(args[0], "dsq_id", &dsq) || u64_arg(args[1], "flags", &flags)) return NULL;
  PyObject *state = PyByteArray_FromStringAndSize(NULL, sizeof(psExtDsqIter));
  if (!state) return NULL;
  int32_t r = ps_ext_dsq_iter_new(c->m, c->d, (psExtDsqIter *)PyByteArray_AS_STRING(state), dsq,
                                  flags);
  return Py_BuildValue("(iN)", r, state);
}

PyObject *pyx_iter_next(Context *c, PyObject *arg) {
  psExtDsqIter *it = live(c) ? iter_arg(c, arg) : NULL;
  if (!it) return NULL;
  psTask *t = ps_ext_dsq_iter_next(c->m, c->d, it);
  if (!t) Py_RETURN_NONE;
  return VIEW(t);
}

/* ext_iter_set(state, vtime, value): scx_bpf_dsq_move_set_slice (vtime
 * false) or _set_vtime */
PyObject *pyx_iter_set(Context *c, PyObject *const *args, Py_ssize_t n) {
  uint64_t v;
  if (!live(c)) return NULL;
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "ext_iter_set takes (state, vtime, value)");
    return NULL;
  }
  psExtDsqIter *it = iter_arg(c, args[0]);
  int vtime = it ? PyObject_IsTrue(args[1]) : -1;
  if (vtime < 0 || u64_arg(args[2], vtime ? "vtime" : "slice", &v)) return NULL;
  if (vtime) {
    it->vtime = v;
    it->flags |= SCX_DSQ_ITER_HAS_VTIME_;
  } else {
    it->slice = v;
    it->flags |= SCX_DSQ_ITER_HAS_SLICE_;
  }
  Py_RETURN_NONE;
}

/* ext_dsq_move(state, task, dsq_id, enq_flags) -> moved */
PyObject *pyx_dsq_move(Context *c, PyObject *const *args, Py_ssize_t n) {
  uint64_t dsq, flags;
  if (!live(c)) return NULL;
  if (n != 4) {
    PyErr_SetString(PyExc_TypeError, "ext_dsq_move takes (state, task, dsq_id, enq_flags)");
    return NULL;
  }
  psExtDsqIter *it = iter_arg(c, args[0]);
  psTask *p = it ? task_arg(c, args[1]) : NULL;
  if (!p || u64_arg(args[2], "dsq_id", &dsq) || u64_arg(args[3], "enq_flags", &flags)) return NULL;
  return PyBool_FromLong(scx_bpf_dsq_move(c->m, c->d, it, p, dsq, flags));
}

PyObject *pyx_move_to_local(Context *c, PyObject *arg) {
  uint64_t dsq;
  if (!live(c) || u64_arg(arg, "dsq_id", &dsq)) return NULL;
  return PyBool_FromLong(scx_bpf_dsq_move_to_local(c->m, c->d, dsq));
}

PyObject *pyx_create_dsq(Context *c, PyObject *arg) {
  uint64_t dsq;
  if (!live(c) || u64_arg(arg, "dsq_id", &dsq)) return NULL;
  return PyLong_FromLong(scx_bpf_create_dsq(c->m, c->d, dsq, -1));
}

PyObject *pyx_kick_cpu(Context *c, PyObject *const *args, Py_ssize_t n) {
  long cpu;
  uint64_t flags;
  if (!live(c)) return NULL;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "ext_kick_cpu takes (cpu, flags)");
    return NULL;
  }
  if (index_arg(args[0], "cpu", &cpu) || u64_arg(args[1], "flags", &flags)) return NULL;
  scx_bpf_kick_cpu(c->m, c->d, cpu < INT32_MIN || cpu > INT32_MAX ? -1 : (int32_t)cpu, flags);
  Py_RETURN_NONE;
}

PyObject *pyx_nr_queued(Context *c, PyObject *arg) {
  uint64_t dsq;
  if (!live(c) || u64_arg(arg, "dsq_id", &dsq)) return NULL;
  return PyLong_FromLong(scx_bpf_dsq_nr_queued(c->m, c->d, dsq));
}

/* ext_select_cpu_dfl(task, prev_cpu, wake_flags) -> (cpu, is_idle) */
PyObject *pyx_select_cpu_dfl(Context *c, PyObject *const *args, Py_ssize_t n) {
  if (!live(c)) return NULL;
  if (n != 3) {
    PyErr_SetString(PyExc_TypeError, "ext_select_cpu_dfl takes (task, prev_cpu, wake_flags)");
    return NULL;
  }
  psTask *p = task_arg(c, args[0]);
  long prev;
  uint64_t wf;
  if (!p || index_arg(args[1], "prev_cpu", &prev) || u64_arg(args[2], "wake_flags", &wf))
    return NULL;
  if (prev < 0 || prev >= c->m->ncpu) {
    PyErr_Format(PyExc_ValueError, "prev_cpu=%ld is outside the allowed range 0..%d", prev,
                 c->m->ncpu - 1);
    return NULL;
  }
  int idle;
  int32_t cpu = scx_bpf_select_cpu_dfl(c->m, c->d, p, (int32_t)prev, wf, &idle);
  return Py_BuildValue("(iO)", cpu, idle ? Py_True : Py_False);
}

PyObject *pyx_pick_idle_cpu(Context *c, PyObject *const *args, Py_ssize_t n) {
  if (!live(c)) return NULL;
  psCpuMask mask;
  uint64_t flags;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "ext_pick_idle_cpu takes (cpus_allowed, flags)");
    return NULL;
  }
  if (cpumask_arg(args[0], "cpus_allowed", &mask) || u64_arg(args[1], "flags", &flags)) return NULL;
  return PyLong_FromLong(scx_bpf_pick_idle_cpu(c->m, c->d, &mask, flags));
}

PyObject *pyx_test_and_clear_cpu_idle(Context *c, PyObject *arg) {
  long cpu;
  if (!live(c) || index_arg(arg, "cpu", &cpu)) return NULL;
  return PyBool_FromLong(scx_bpf_test_and_clear_cpu_idle(
      c->m, c->d, cpu < INT32_MIN || cpu > INT32_MAX ? -1 : (int32_t)cpu));
}

PyObject *pyx_error(Context *c, PyObject *arg) {
  if (!live(c)) return NULL;
  const char *msg = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
  if (!msg) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the message must be a str");
    return NULL;
  }
  scx_bpf_error(c->m, c->d, msg);
  Py_RETURN_NONE;
}

PyObject *ext_exit_tuple(const psModel *m, const psData *d) {
  psExtExit e;
  ps_ext_exit_info(m, d, &e);
  return Py_BuildValue("(isszlLLKz)", e.kind, e.msg, e.dump, e.op, (long)e.pid, (long long)e.ns,
                       (long long)e.held_ns, (unsigned long long)e.dsq_id, e.problem);
}

/* kind SCX_EXIT_NONE (0) while the scheduler runs */
PyObject *pyx_exit_info(Context *c, PyObject *unused) {
  (void)unused;
  if (!live(c)) return NULL;
  return ext_exit_tuple(c->m, c->d);
}

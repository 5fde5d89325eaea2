/* The Sim type: construction, configuration, programs and sources,
 * spawning, running (the GIL released around the core's steps, Ctrl-C
 * checked between them), the system calls from Python, copies and
 * snapshots.  Its readers are in sim_records.c. */
#include "sim.h"
#include "watch.h"
#include "ext/ext_ops.h"

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

int sim_unavailable(SimObject *self) {
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

/* After a spawn, syscall or post from Python: hooks_failed, or a C hook
 * the engine caught breaking its contract (a migrate that left its task
 * where it was), as a PolicyError.  sim_broken refused the call if the
 * simulator had failed before, so a failure now is this call's. */
static int call_failed(SimObject *self) {
  if (hooks_failed(self)) return -1;
  if (self->d.failed != PS_FAILED_POLICY) return 0;
  PyErr_SetString(sim_state(self)->policy_error, self->d.errmsg);
  return -1;
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

/* set_fast_paths(mask): the fast paths in force (PS_FAST_* bits), chosen
 * before anything is queued or run */
static PyObject *Sim_set_fast_paths(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  long mask = PyLong_AsLong(arg);
  if (mask == -1 && PyErr_Occurred()) return NULL;
  if (mask < 0 || mask & ~PS_FAST_ALL)
    return PyErr_Format(PyExc_ValueError, "fast paths mask %ld is outside 0..%d", mask,
                        PS_FAST_ALL);
  if (self->d.jiffies || self->d.now_ns || self->d.next_pid > 1 || self->d.evq.n)
    return raise_value("the fast paths can only be chosen before the first spawn, source or step");
  ps_set_fast_paths(&self->m, &self->d, (int)mask);
  Py_RETURN_NONE;
}

/* set_watch(bits, idle_wait_ns, starve_ns, uncharged_ns): the behaviour
 * invariants watched from now (ps_watch_set) */
static PyObject *Sim_set_watch(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  int bits;
  long long idle_wait, starve, uncharged;
  if (!PyArg_ParseTuple(args, "iLLL", &bits, &idle_wait, &starve, &uncharged)) return NULL;
  if (bits & ~PS_WATCH_ALL)
    return PyErr_Format(PyExc_ValueError, "watch bits %d are outside 0..%d", bits, PS_WATCH_ALL);
  if (idle_wait < 0 || idle_wait > PS_MAX_TIME_NS || starve < 0 || starve > PS_MAX_TIME_NS ||
      uncharged < 0 || uncharged > PS_MAX_TIME_NS)
    return PyErr_Format(PyExc_ValueError, "watch thresholds %lld, %lld and %lld ns are outside "
                        "0..%lld", idle_wait, starve, uncharged, (long long)PS_MAX_TIME_NS);
  ps_watch_set(&self->m, &self->d, bits, idle_wait, starve, uncharged);
  Py_RETURN_NONE;
}

/* watch_report(): the idle-while-waiting windows up to now and the first
 * lag past its bound (ps_watch_report) */
static PyObject *Sim_watch_report(SimObject *self, PyObject *noargs) {
  READY(self);
  psWatchReport r;
  ps_watch_report(&self->m, &self->d, &r);
  return Py_BuildValue("{s:i,s:L,s:L,s:L,s:L,s:L,s:L,s:i,s:i,s:i,s:L,s:L,s:L,s:i,s:i,"
                       "s:L,s:L,s:L,s:L,s:i}",
                       "watch", self->m.watch,
                       "idle_wait_ns", (long long)self->m.idle_wait_ns, "starve_ns",
                       (long long)self->m.starve_ns, "total_ns",
                       (long long)r.total_ns, "longest_ns", (long long)r.longest_ns, "windows",
                       (long long)r.windows, "first_ns", (long long)r.first_ns, "first_idle_cpu",
                       r.first_idle_cpu, "first_pid", r.first_pid, "first_pid_cpu",
                       r.first_pid_cpu, "lag_at_ns", (long long)r.lag_first.at_ns, "lag_ns",
                       (long long)r.lag_first.lag_ns, "lag_bound_ns",
                       (long long)r.lag_first.bound_ns, "lag_pid", r.lag_first.pid, "lag_cpu",
                       r.lag_first.cpu, "uncharged_ns", (long long)self->m.uncharged_ns,
                       "uncharged_at_ns", (long long)r.uncharged.at_ns, "uncharged_cpu_ns",
                       (long long)r.uncharged.cpu_ns, "uncharged_charged_ns",
                       (long long)r.uncharged.charged_ns, "uncharged_pid", r.uncharged.pid);
}

/* ext_exit_info(): the exit of a sched_ext scheduler (ext_exit_tuple; kind
 * SCX_EXIT_NONE while it runs), whether it is written in Python or in C;
 * None under another policy */
static int runs_ext(const SimObject *self) {
  return self->m.policy->hooks.pick_next == ps_ext_class.pol.hooks.pick_next;
}

static PyObject *Sim_ext_exit_info(SimObject *self, PyObject *noargs) {
  READY(self);
  if (!runs_ext(self)) Py_RETURN_NONE;
  return ext_exit_tuple(&self->m, &self->d);
}

/* ext_strict(timeout_ms): ps_ext_strict */
static PyObject *Sim_ext_strict(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  if (!runs_ext(self)) {
    PyErr_SetString(PyExc_ValueError, "ext_strict: this simulator does not run a sched_ext scheduler");
    return NULL;
  }
  uint64_t ms;
  if (u64_arg(arg, "timeout_ms", &ms)) return NULL;
  if (ms > 30000) {
    PyErr_Format(PyExc_ValueError, "timeout_ms=%llu is outside 0..30000", (unsigned long long)ms);
    return NULL;
  }
  ps_ext_strict(&self->m, &self->d, (uint32_t)ms);
  Py_RETURN_NONE;
}

/* fast_path_counts(): how often each fast path was taken (ps_fast_counts) */
static PyObject *Sim_fast_path_counts(SimObject *self, PyObject *noargs) {
  READY(self);
  int64_t n[PS_NFAST];
  ps_fast_counts(&self->d, n);
  return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L}", "scan", (long long)n[0], "batch",
                       (long long)n[1], "defer", (long long)n[2], "wheel", (long long)n[3],
                       "skip", (long long)n[4]);
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

/* add_program([(kind, arg, arg2, dist, a, b), ...]) -> program id; a
 * set_affinity op's arg is its CPUs as an int mask (bit c: CPU c) */
static PyObject *Sim_add_program(SimObject *self, PyObject *arg) {
  READY_TO_CHANGE(self);
  PyObject *seq = PySequence_Fast(arg, "a program is a sequence of op tuples");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  psOp *ops = PyMem_Calloc(n ? (size_t)n : 1, sizeof(psOp));
  psCpuMask *masks = PyMem_Calloc(n ? (size_t)n : 1, sizeof(psCpuMask));
  int nmasks = 0;
  if (!ops || !masks) {
    PyMem_Free(ops);
    PyMem_Free(masks);
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    psOp *o = &ops[i];
    PyObject *a;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iOiidd;an op is (kind, arg, arg2, dist, a, b)",
                          &o->kind, &a, &o->arg2, &o->d.kind, &o->d.a, &o->d.b) ||
        (o->kind == PS_OP_AFFINITY ? cpumask_arg(a, "set_affinity mask", &masks[nmasks])
                                   : !PyArg_Parse(a, "i;an op's arg is an int", &o->arg))) {
      PyMem_Free(ops);
      PyMem_Free(masks);
      Py_DECREF(seq);
      return NULL;
    }
    if (o->kind == PS_OP_AFFINITY) o->arg = nmasks++;
  }
  Py_DECREF(seq);
  char err[PS_ERRLEN];
  int id = ps_add_program(&self->m, ops, (int)n, masks, nmasks, err, sizeof err);
  PyMem_Free(ops);
  PyMem_Free(masks);
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
  psCpuMask mask;
  PyObject *mask_obj, *init;
  if (!PyArg_ParseTuple(args, "isiiiOiO!i", &prog, &name, &nice, &policy, &rt, &mask_obj, &cpu,
                        &PyDict_Type, &init, &time_slice) ||
      cpumask_arg(mask_obj, "cpus_allowed mask", &mask))
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
  int pid = ps_spawn(&self->m, &self->d, prog, name, nice, policy, rt, &mask, cpu, ninit, fields,
                     values, time_slice, err, sizeof err);
  self->busy = 0;
  if (call_failed(self)) return NULL;
  if (pid == PS_SPAWN_INVARIANT) {
    PyErr_Format(sim_state(self)->invariant_error, "invariant broken before a spawn: %s", err);
    return NULL;
  }
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
    PyErr_SetString(self->d.failed == PS_FAILED_POLICY ? st->policy_error
                    : rc == PS_RUN_BROKEN              ? st->invariant_error
                                                       : st->state_error,
                    err);
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
  if (call_failed(self)) return NULL;
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
  if (call_failed(self)) return NULL;
  if (rc) return raise_value(err);
  Py_RETURN_NONE;
}

static PyObject *Sim_set_affinity(SimObject *self, PyObject *args) {
  READY(self);
  int pid;
  psCpuMask mask;
  PyObject *mask_obj;
  if (!PyArg_ParseTuple(args, "iO", &pid, &mask_obj) || cpumask_arg(mask_obj, "cpus_allowed mask", &mask))
    return NULL;
  return sim_syscall(self, pid, (psSyscall){.kind = PS_SYS_AFFINITY, .cpus = &mask});
}

/* policy_call(op, args): a request of the policy's own (psHooks.control),
 * up to 4 int64 arguments; returns its 4 results */
static PyObject *Sim_policy_call(SimObject *self, PyObject *args) {
  READY_TO_CHANGE(self);
  int op;
  PyObject *seq;
  if (!PyArg_ParseTuple(args, "iO!", &op, &PyTuple_Type, &seq)) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > 4) {
    PyErr_Format(PyExc_ValueError, "a policy call takes at most 4 arguments, not %zd", n);
    return NULL;
  }
  int64_t a[4] = {0, 0, 0, 0}, out[4] = {0, 0, 0, 0};
  for (Py_ssize_t k = 0; k < n; k++) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, k));
    if (v == -1 && PyErr_Occurred()) return NULL;
    a[k] = v;
  }
  if (sim_broken(self)) return NULL;
  char err[PS_ERRLEN];
  self->busy = 1;
  int rc = ps_policy_control(&self->m, &self->d, op, a, (int)n, out, err, sizeof err);
  self->busy = 0;
  if (call_failed(self)) return NULL;
  if (rc) return raise_value(err);
  return Py_BuildValue("(LLLL)", (long long)out[0], (long long)out[1], (long long)out[2],
                       (long long)out[3]);
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
static PyObject *Sim_get_fast_paths(SimObject *self, void *closure) {
  READY(self);
  return PyLong_FromLong(self->m.fast_paths);
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
    {"set_fast_paths", (PyCFunction)Sim_set_fast_paths, METH_O,
     "set_fast_paths(mask): the fast paths in force, before anything runs"},
    {"set_watch", (PyCFunction)Sim_set_watch, METH_VARARGS,
     "set_watch(bits, idle_wait_ns, starve_ns, uncharged_ns): the behaviour invariants watched "
     "from now"},
    {"watch_report", (PyCFunction)Sim_watch_report, METH_NOARGS,
     "watch_report(): the idle-while-waiting windows up to now"},
    {"ext_strict", (PyCFunction)Sim_ext_strict, METH_O, "ext_strict(timeout_ms): ps_ext_strict"},
    {"ext_exit_info", (PyCFunction)Sim_ext_exit_info, METH_NOARGS,
     "the exit of a sched_ext scheduler (ext_exit_tuple), or None"},
    {"fast_path_counts", (PyCFunction)Sim_fast_path_counts, METH_NOARGS,
     "how often each fast path was taken"},
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
    {"policy_call", (PyCFunction)Sim_policy_call, METH_VARARGS,
     "policy_call(op, args): a request of the policy's own, 4 results"},
    {"task", (PyCFunction)Sim_task, METH_O, "dict of a task's fields"},
    {"table_shape", (PyCFunction)Sim_table_shape, METH_NOARGS,
     "(field names, rows, name width) of the task table"},
    {"table_fill", (PyCFunction)Sim_table_fill, METH_O,
     "table_fill(buffer): the task table's rows, in pid order, into a writable buffer"},
    {"table_masks", (PyCFunction)Sim_table_masks, METH_NOARGS,
     "table_masks(): each row's cpus_allowed as the machine's 64-bit words, in table_fill's order"},
    {"on_rq_counts", (PyCFunction)Sim_on_rq_counts, METH_NOARGS,
     "queued tasks of each CPU, the running one included"},
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
    {"fast_paths", (getter)Sim_get_fast_paths, NULL, "the fast paths in force (PS_FAST_* bits)",
     NULL},
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

PyType_Spec Sim_spec = {"pysched._core.Sim", sizeof(SimObject), 0, Py_TPFLAGS_DEFAULT, Sim_slots};

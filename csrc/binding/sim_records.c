/* The Sim type's readers: a task, the task table, the record rings as
 * bytes (Python lays NumPy structured arrays over them with
 * record_layouts), a CPU's runqueue and queue, the counters and the
 * invariant check. */
#include "sim.h"

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

PyObject *Sim_task(SimObject *self, PyObject *arg) {
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
PyObject *Sim_table(SimObject *self, PyObject *noargs) {
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

PyObject *Sim_events(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.events); }
PyObject *Sim_latencies(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.latencies); }
PyObject *Sim_samples(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.series); }
PyObject *Sim_periodic(SimObject *self, PyObject *noargs) { READY(self); return ring_bytes(&self->d.periodic); }

PyObject *Sim_clear(SimObject *self, PyObject *noargs) {
  READY(self);
  psu_ring_clear(&self->d.events);
  psu_ring_clear(&self->d.latencies);
  psu_ring_clear(&self->d.series);
  psu_ring_clear(&self->d.periodic);
  Py_RETURN_NONE;
}

PyObject *Sim_runqueue(SimObject *self, PyObject *arg) {
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
PyObject *Sim_queue(SimObject *self, PyObject *arg) {
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

PyObject *Sim_counters(SimObject *self, PyObject *noargs) {
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

PyObject *Sim_check(SimObject *self, PyObject *noargs) {
  READY(self);
  char err[PS_ERRLEN];
  if (ps_check(&self->m, &self->d, err, sizeof err)) {
    PyErr_SetString(sim_state(self)->invariant_error, err);
    return NULL;
  }
  Py_RETURN_NONE;
}

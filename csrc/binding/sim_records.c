/* The Sim type's readers: a task, the task table, the record rings as
 * bytes (Python lays NumPy structured arrays over them with
 * record_layouts), a CPU's runqueue and queue, the counters and the
 * invariant check. */
#include "sim.h"

/* task(pid) -> dict of every generic and policy field, plus name. */
static PyObject *task_dict(SimObject *self, const psTask *t) {
  PyObject *d = PyDict_New();
  for (int i = 0; d && i < ps_nfields(&self->m); i++) {
    PyObject *o = pyp_task_field(&self->m, &self->d, t, i);
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

/* The table's rows: every live task and every kept exited one, in pid
 * order (slots are reused, and the exited ones are kept in exit order);
 * a PyMem array of *n pointers, or NULL (no memory). */
static int by_pid(const void *a, const void *b) {
  int32_t x = (*(const psTask *const *)a)->pid, y = (*(const psTask *const *)b)->pid;
  return (x > y) - (x < y);
}

static const psTask **table_rows(const psModel *m, const psData *d, Py_ssize_t *n) {
  Py_ssize_t most = (Py_ssize_t)(d->ntask - m->ncpu) + d->exited.n;
  const psTask **rows = PyMem_Malloc((size_t)(most ? most : 1) * sizeof(*rows));
  if (!rows) return NULL;
  Py_ssize_t k = 0;
  int sorted = 1;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].pid) rows[k++] = &d->task[i];
  for (int64_t e = 0; e < d->exited.n; e++) rows[k++] = psu_ring_at(&d->exited, e);
  for (Py_ssize_t i = 1; i < k && sorted; i++) sorted = rows[i - 1]->pid < rows[i]->pid;
  if (!sorted) qsort(rows, (size_t)k, sizeof(*rows), by_pid);
  *n = k;
  return rows;
}

static int ascii_name(const psTask *t, size_t *len) {
  *len = strnlen(t->name, PS_NAME_LEN);
  for (size_t i = 0; i < *len; i++)
    if ((unsigned char)t->name[i] >= 0x80) return 0;
  return 1;
}

/* A task's name as Python reads it (UTF-8, undecodable bytes replaced). */
static PyObject *name_str(const psTask *t) {
  return PyUnicode_DecodeUTF8(t->name, (Py_ssize_t)strnlen(t->name, PS_NAME_LEN), "replace");
}

/* table_shape() -> (field names, rows, name width): what table_fill
 * writes, for Python to lay out the array it fills (stats()): every
 * generic then policy field as 8 bytes, nr_switches, then the name as
 * `width` UCS4 characters (the longest name's length, at least 1). */
PyObject *Sim_table_shape(SimObject *self, PyObject *noargs) {
  READY(self);
  const psModel *m = &self->m;
  Py_ssize_t n, width = 1;
  const psTask **rows = table_rows(m, &self->d, &n);
  if (!rows) return PyErr_NoMemory();
  for (Py_ssize_t k = 0; k < n; k++) {
    size_t len;
    if (!ascii_name(rows[k], &len)) {
      PyObject *s = name_str(rows[k]);
      if (!s) { PyMem_Free(rows); return NULL; }
      len = (size_t)PyUnicode_GET_LENGTH(s);
      Py_DECREF(s);
    }
    if ((Py_ssize_t)len > width) width = (Py_ssize_t)len;
  }
  PyMem_Free(rows);
  int nf = ps_nfields(m);
  PyObject *names = PyList_New(nf);
  for (int i = 0; names && i < nf; i++) {
    PyObject *s = PyUnicode_FromString(ps_field_info(m, i)->name);
    if (!s) { Py_CLEAR(names); break; }
    PyList_SET_ITEM(names, i, s);
  }
  if (!names) return NULL;
  return Py_BuildValue("(Nnn)", names, n, width);
}

/* table_fill(buffer): the rows table_shape described, written straight
 * into a writable buffer of exactly rows x (8 x fields + 8 + 4 x width)
 * bytes (stats()'s array): no copy of the table on the way. */
PyObject *Sim_table_fill(SimObject *self, PyObject *arg) {
  READY(self);
  const psModel *m = &self->m;
  const psData *d = &self->d;
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) return NULL;
  Py_ssize_t n;
  const psTask **rows = table_rows(m, d, &n);
  if (!rows) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
  int nf = ps_nfields(m);
  Py_ssize_t fixed = 8 * (Py_ssize_t)nf + 8;
  Py_ssize_t width = n ? (view.len / n - fixed) / 4 : 0, item = fixed + 4 * width;
  if (view.len != n * item || (n && width < 1)) {
    PyErr_Format(PyExc_ValueError, "table_fill: a buffer of %zd bytes holds no %zd rows of %d "
                 "fields and a name (call table_shape first)", view.len, n, nf);
    goto fail;
  }
  unsigned char *row = view.buf;
  for (Py_ssize_t k = 0; k < n; k++, row += item) {
    const psTask *t = rows[k];
    int64_t v;
    for (int i = 0; i < nf; i++) {
      v = ps_task_value(m, d, t, i);
      memcpy(row + 8 * i, &v, 8);
    }
    v = t->nvcsw + t->nivcsw;
    memcpy(row + 8 * nf, &v, 8);
    Py_UCS4 *out = (Py_UCS4 *)(void *)(row + fixed);
    memset(out, 0, (size_t)width * sizeof(Py_UCS4));
    size_t len;
    if (ascii_name(t, &len)) {
      if ((Py_ssize_t)len > width) goto narrow;
      for (size_t i = 0; i < len; i++) out[i] = (unsigned char)t->name[i];
      continue;
    }
    PyObject *s = name_str(t);
    if (!s) goto fail;
    Py_ssize_t chars = PyUnicode_GET_LENGTH(s);
    int ok = chars <= width && (chars == 0 || PyUnicode_AsUCS4(s, out, width, 0));
    Py_DECREF(s);
    if (chars > width) goto narrow;
    if (!ok) goto fail;
  }
  PyMem_Free(rows);
  PyBuffer_Release(&view);
  Py_RETURN_NONE;
narrow:
  PyErr_Format(PyExc_ValueError, "table_fill: a name is longer than the buffer's %zd characters "
               "(call table_shape first)", width);
fail:
  PyMem_Free(rows);
  PyBuffer_Release(&view);
  return NULL;
}

/* table_masks() -> bytes: each row's cpus_allowed in table_fill's order,
 * as the machine's words of the set (ps_cpu_words), little-endian words of
 * the host's byte order: what stats() turns into whole masks on machines
 * of more than 64 CPUs, whose masks table_fill's 8 bytes cannot hold. */
PyObject *Sim_table_masks(SimObject *self, PyObject *noargs) {
  READY(self);
  const psModel *m = &self->m;
  Py_ssize_t n;
  const psTask **rows = table_rows(m, &self->d, &n);
  if (!rows) return PyErr_NoMemory();
  int nw = ps_cpu_words(m->ncpu);
  PyObject *out = PyBytes_FromStringAndSize(NULL, n * nw * 8);
  if (out) {
    char *w = PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < n; k++, w += nw * 8) memcpy(w, rows[k]->cpus_allowed.w, (size_t)nw * 8);
  }
  PyMem_Free(rows);
  return out;
}

/* on_rq_counts() -> [queued tasks of each CPU, the running one included] */
PyObject *Sim_on_rq_counts(SimObject *self, PyObject *noargs) {
  READY(self);
  const psModel *m = &self->m;
  int64_t n[PS_MAX_CPUS] = {0};
  for (int32_t i = m->ncpu; i < self->d.ntask; i++)
    if (self->d.task[i].on_rq) n[self->d.task[i].cpu]++;
  PyObject *l = PyList_New(m->ncpu);
  for (int c = 0; l && c < m->ncpu; c++) {
    PyObject *v = PyLong_FromLongLong(n[c]);
    if (!v) { Py_CLEAR(l); break; }
    PyList_SET_ITEM(l, c, v);
  }
  return l;
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

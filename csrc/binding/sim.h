/* The Sim type's object and what its two files share: sim.c (the type:
 * construction, configuration, running, system calls, copies and
 * snapshots) and sim_records.c (its readers). */
#ifndef PS_BINDING_SIM_H
#define PS_BINDING_SIM_H
#include "binding.h"

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

static inline module_state *sim_state(SimObject *self) {
  return (module_state *)PyType_GetModuleState(Py_TYPE(self));
}

#pragma GCC visibility push(hidden)

/* 0 if the simulator may be used now, else -1 with StateError set. */
int sim_unavailable(SimObject *self);

#define READY(self) \
  if (sim_unavailable(self)) return NULL

/* the readers (sim_records.c), in Sim's method table (sim.c) */
PyObject *Sim_task(SimObject *self, PyObject *arg);
PyObject *Sim_table_shape(SimObject *self, PyObject *noargs);
PyObject *Sim_table_fill(SimObject *self, PyObject *arg);
PyObject *Sim_table_masks(SimObject *self, PyObject *noargs);
PyObject *Sim_on_rq_counts(SimObject *self, PyObject *noargs);
PyObject *Sim_events(SimObject *self, PyObject *noargs);
PyObject *Sim_latencies(SimObject *self, PyObject *noargs);
PyObject *Sim_samples(SimObject *self, PyObject *noargs);
PyObject *Sim_periodic(SimObject *self, PyObject *noargs);
PyObject *Sim_clear(SimObject *self, PyObject *noargs);
PyObject *Sim_runqueue(SimObject *self, PyObject *arg);
PyObject *Sim_queue(SimObject *self, PyObject *arg);
PyObject *Sim_counters(SimObject *self, PyObject *noargs);
PyObject *Sim_check(SimObject *self, PyObject *noargs);

#pragma GCC visibility pop

#endif

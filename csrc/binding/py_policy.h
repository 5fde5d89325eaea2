/* Policies written in Python (pysched.Policy): a psPolicy whose hooks call
 * the methods of a Python object, run by the same engine as the C ones.
 * What the rest of the binding uses of py_policy.c and views.c. */
#ifndef PS_PY_POLICY_H
#define PS_PY_POLICY_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "module_state.h"
#include "pysched.h"

/* A field's value (psu_field_read, ps_task_value: the bits in an int64) as
 * a Python int: a PS_F_U64 field unsigned. */
static inline PyObject *pyp_field_value(const psFieldInfo *f, int64_t v) {
  return f->type == PS_F_U64 ? PyLong_FromUnsignedLongLong((unsigned long long)v)
                             : PyLong_FromLongLong(v);
}

/* A set of CPUs from a Python int (bit c: CPU c), or -1 with TypeError or
 * ValueError naming it; and a set as a Python int (convert.c). */
int cpumask_arg(PyObject *o, const char *what, psCpuMask *out);
PyObject *cpumask_to_int(const psCpuMask *s);

/* Task t's field i (ps_field_info) as a Python int: cpus_allowed the
 * whole set of CPUs (bit c: CPU c, past 63 too), the others as
 * pyp_field_value (convert.c). */
PyObject *pyp_task_field(const psModel *m, const psData *d, const psTask *t, int i);

/* Add the types PolicyDef, PolicyContext, Task and Runqueue to the module,
 * and to its state st. */
int pyp_add_types(PyObject *module, module_state *st);

/* The preset of a PolicyDef object (of the module of st), or NULL (no
 * error set) if o is not one. */
const psPreset *pyp_preset(const module_state *st, PyObject *o);

/* Attach policy instance `inst` of PolicyDef `def` (of the module of st)
 * to a simulator's model and state: a new PolicyContext (m->ctx points to
 * it), set as inst._ctx.  Returns it (a new reference) or NULL with an
 * error. */
PyObject *pyp_attach(const module_state *st, PyObject *def, PyObject *inst, psModel *m,
                     psData *d);

/* The simulator is going away: views and the context refuse further use. */
void pyp_detach(PyObject *ctx);

/* Where a hook failed ("policy hook ... at t=..."), or NULL if none has. */
const char *pyp_failure(PyObject *ctx);

/* After a call that may have run hooks: if a hook raised, set a PolicyError
 * (`policy_error`) whose cause is the hook's exception, naming the hook, the
 * time and the task, and return -1; else 0.  A hook stopped by Ctrl-C
 * raises its KeyboardInterrupt itself, naming them. */
int pyp_raise_failure(PyObject *ctx, PyObject *policy_error);

/* The policy instance attached through ctx (borrowed). */
PyObject *pyp_instance(PyObject *ctx);

#endif

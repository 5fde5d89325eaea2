/* The state of the module pysched._core: its types, its exceptions and
 * the policy libraries loaded so far.  Everything of the binding that is
 * not a constant lives here, one per module object, so that a second
 * instance of the module (a subinterpreter, a reload) shares nothing with
 * the first; the core has no globals either. */
#ifndef PS_BINDING_MODULE_STATE_H
#define PS_BINDING_MODULE_STATE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "policy_lib.h"

/* A policy library loaded at run time (pysched.build_policy).  It is never
 * unloaded: every simulator made from it, and every copy of one, points
 * into it. */
typedef struct {
  void *handle;
  const psPolicyLibrary *lib;
  char *origin;   /* its source file, for messages */
  int active;     /* its presets answer to their names */
} loaded_library;

/* The types, the exceptions (pysched.Error and its kinds: a bad
 * configuration, a simulator in the wrong state, a broken invariant) and
 * the policy libraries loaded so far: a list that changes at run time, so
 * it lives here and not in the core, which has no globals. */
typedef struct {
  PyObject *sim_type;
  PyTypeObject *policydef_type, *context_type, *task_type, *runqueue_type;
  PyObject *error, *config_error, *state_error, *invariant_error, *policy_error;
  loaded_library *libs;
  int nlibs, cap_libs;
} module_state;

/* The state of the module whose type o is an instance of.  No type of the
 * binding may be subclassed (none has Py_TPFLAGS_BASETYPE), so o's own type
 * is one that PyType_FromModuleAndSpec made and knows its module: no walk
 * of the MRO (PyType_GetModuleByDef, Python 3.11+) is needed. */
static inline module_state *binding_state(PyObject *o) {
  return (module_state *)PyType_GetModuleState(Py_TYPE(o));
}

#endif

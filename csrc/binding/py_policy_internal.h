/* What the Python policy's two files share: py_policy.c (PolicyDef, the
 * hooks that call Python, attaching an instance) and views.c (the
 * PolicyContext type and the Task and Runqueue views).  The rest of the
 * binding uses py_policy.h. */
#ifndef PS_BINDING_PY_POLICY_INTERNAL_H
#define PS_BINDING_PY_POLICY_INTERNAL_H
#include "py_policy.h"

#include "engine_internal.h"

#define PYP_MAX_TASK_FIELDS (PS_TASK_PRIV / 8)
#define PYP_MAX_RQ_FIELDS 32

/* The hooks a Python class may define, in psHooks order of meaning. */
enum {
  H_TASK_SPAWN, H_WAKEUP, H_DEACTIVATE, H_PICK_NEXT,  /* mandatory */
  H_TASK_FORK, H_TASK_EXIT, H_PUT_PREV, H_TICK, H_YIELD, H_SET_NICE, H_SET_SCHEDULER,
  H_MIGRATE, H_CHECK, NHOOKS
};

/* A pysched.Policy subclass compiled into the engine's tables. */
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
   * changed while it ran is moved in schedule(), preempted but still
   * current: syscall.c, do_affinity) */
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

#pragma GCC visibility push(hidden)

/* ---- views.c ---- */

/* A type's name as Python's type(o).__name__ gives it (no module). */
const char *type_name(PyObject *o);
/* An integer argument (no bool); 0, or -1 with the error set. */
int index_arg(PyObject *o, const char *what, long *out);
/* The view of task t (a new reference), or NULL with an error. */
PyObject *task_view(Context *c, const psTask *t);
/* The task a view names, or NULL with an error. */
psTask *view_task(TaskView *v);

extern PyType_Spec pyp_context_spec, pyp_task_spec, pyp_runqueue_spec;

#pragma GCC visibility pop

#endif

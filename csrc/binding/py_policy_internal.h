/* What the Python policy's two files share: py_policy.c (PolicyDef, the
 * hooks that call Python, attaching an instance) and views.c (the
 * PolicyContext type and the Task and Runqueue views).  The rest of the
 * binding uses py_policy.h. */
#ifndef PS_BINDING_PY_POLICY_INTERNAL_H
#define PS_BINDING_PY_POLICY_INTERNAL_H
#include "py_policy.h"

#include "engine_internal.h"
#include "ext/ext_ops.h"

#define PYP_MAX_TASK_FIELDS (PS_TASK_PRIV / 8)
#define PYP_MAX_RQ_FIELDS 32

/* The hooks a Python class may define, in psHooks order of meaning. */
enum {
  H_TASK_SPAWN, H_WAKEUP, H_DEACTIVATE, H_PICK_NEXT,  /* mandatory */
  H_TASK_FORK, H_TASK_EXIT, H_PUT_PREV, H_TICK, H_YIELD, H_SET_NICE, H_SET_SCHEDULER,
  H_MIGRATE, H_CHECK, NHOOKS
};

/* The ops of a pysched.ext.Scheduler, in ext_op_names order. */
#define PYX_NOPS 19

/* A pysched.Policy subclass compiled into the engine's tables. */
typedef struct {
  PyObject_HEAD
  psPolicy pol;
  /* right after pol, as psExtPolicy.ops follows its pol: a sched_ext
   * scheduler's ops (&ext_ops), NULL for other policies */
  const psExtOps *ops;
  psPreset preset;
  psParamInfo params[PS_MAX_PARAMS];
  psFieldInfo task_fields[PYP_MAX_TASK_FIELDS];
  psFieldInfo rq_fields[PYP_MAX_RQ_FIELDS];
  const char *headline[PYP_MAX_TASK_FIELDS + 2];
  PyObject *strings;              /* keeps alive every str whose UTF-8 the tables point to */
  PyObject *field_index;          /* task field name -> index (generic, then the policy's) */
  PyObject *rq_index;             /* rq field name -> index */
  PyObject *funcs[NHOOKS];        /* the class's functions, NULL where it defines none */
  /* a pysched.ext.Scheduler: the sched_ext class (ps_ext_class) runs,
   * calling the ops the class defines (py_ext.c) through ext_ops, which
   * is pol.family */
  int ext;
  PyObject *ext_funcs[PYX_NOPS];
  psExtOps ext_ops;
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

/* ---- py_policy.c ---- */
/* Call func (a hook's or an op's) on argv with Ctrl-C handled; its result,
 * or NULL with the error set. */
PyObject *pyp_invoke(Context *c, PyObject *func, PyObject *const *argv, size_t n);
/* Record the failure of hook or op `name` (the Python error is set). */
void pyp_failed(Context *c, const char *name, const psTask *t, const char *what);

/* ---- py_ext.c ---- */
/* Fill def's ext_funcs and ext_ops from cls and its (dispatch_max_batch,
 * timeout_ms, flags); 0, or -1 with an error. */
int pyx_def_init(PolicyDef *def, PyObject *cls, PyObject *settings);
/* The Context's kfunc methods (views.c lists them). */
PyObject *pyx_insert(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_move_to_local(Context *c, PyObject *arg);
PyObject *pyx_iter_new(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_iter_next(Context *c, PyObject *arg);
PyObject *pyx_iter_set(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_dsq_move(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_create_dsq(Context *c, PyObject *arg);
PyObject *pyx_kick_cpu(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_nr_queued(Context *c, PyObject *arg);
PyObject *pyx_select_cpu_dfl(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_pick_idle_cpu(Context *c, PyObject *const *args, Py_ssize_t n);
PyObject *pyx_test_and_clear_cpu_idle(Context *c, PyObject *arg);
PyObject *pyx_error(Context *c, PyObject *arg);
PyObject *pyx_exit_info(Context *c, PyObject *unused);

extern PyType_Spec pyp_context_spec, pyp_task_spec, pyp_runqueue_spec;

#pragma GCC visibility pop

#endif

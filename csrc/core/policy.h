/* A scheduler policy is a table of hooks plus two tables of data: its
 * run-time parameters and its per-task / per-runqueue state fields.  The
 * engine never tests which policy it runs (cf. the kernel's struct
 * sched_class).  A new policy is one file and one line in registry.c. */
#ifndef PS_POLICY_H
#define PS_POLICY_H
#include <stddef.h>
#include <stdint.h>

#include "task.h"

typedef struct psModel psModel;
typedef struct psData psData;

/* One run-time parameter.  Values are int64; `hz_scaled` defaults are given
 * for HZ=1000 and scaled by hz/1000 (at least 1) when a model is built, as
 * the kernel writes them in HZ units (2*HZ, 10*HZ/1000 ...). */
typedef struct psParamInfo {
  const char *name;
  int64_t def, min, max;
  int hz_scaled;
  const char *unit;
  const char *doc;
} psParamInfo;

/* Field types of state tables. */
enum { PS_F_I32 = 0, PS_F_U32 = 1, PS_F_I64 = 2 };

/* One readable state field: `offset` is into psTask (generic fields),
 * into psTask.priv (policy task fields) or into the policy's runqueue. */
typedef struct psFieldInfo {
  const char *name;
  int type;
  size_t offset;
  const char *doc;
} psFieldInfo;

/* A preset: a policy and parameter overrides. */
typedef struct psOverride {
  const char *name;
  int64_t value;  /* for an hz_scaled parameter: the value at HZ=1000 */
} psOverride;

typedef struct psPolicy psPolicy;

typedef struct psPreset {
  const char *name;
  const psPolicy *policy;
  const psOverride *overrides[3];  /* lists applied in order, each ended by a NULL name */
  const char *doc;
} psPreset;

struct psPolicy {
  const char *name;
  const psParamInfo *params;
  int nparams;
  const psFieldInfo *task_fields;  /* offsets into psTask.priv */
  int ntask_fields;
  const psFieldInfo *rq_fields;    /* offsets into the policy's runqueue */
  int nrq_fields;
  size_t rq_size;                  /* bytes of policy runqueue per CPU */
  int max_prio;                    /* MAX_PRIO: the idle task's prio */

  /* Model build and every set_param: check the parameter set as a whole
   * (cross-parameter limits, overflow of the policy's arithmetic) and
   * derive constants into m->derived.  0, or -1 with a message naming the
   * value and its allowed range. */
  int (*configure)(psModel *m, char *err, int errlen);

  /* State creation: set up runqueue `cpu` (its idle task is d->cpu[cpu].idle). */
  void (*init_rq)(const psModel *m, psData *d, int cpu);

  /* A task created from Python (sim.spawn) on p->cpu, state RUNNING:
   * initialise the policy fields and enqueue it.  Returns 1 if it should
   * preempt the CPU's current task. */
  int (*task_spawn)(const psModel *m, psData *d, psTask *p);

  /* fork, called in the parent's process context with the parent running:
   * copy_process's slice split and wake_up_forked_process.  The child is a
   * struct copy of the parent with fresh identity, state RUNNING, not queued. */
  void (*task_fork)(const psModel *m, psData *d, psTask *parent, psTask *child);

  /* sched_exit: p is a zombie being reaped; its parent (if any) is
   * parent. */
  void (*task_exit)(const psModel *m, psData *d, psTask *p, psTask *parent);

  /* try_to_wake_up for a task that is not queued: activate it on p->cpu.
   * waker is the waking task in process context, NULL in interrupt context.
   * Returns 1 when the CPU's current task must be preempted.  The engine
   * sets p->state = RUNNING afterwards. */
  int (*wakeup)(const psModel *m, psData *d, psTask *p, psTask *waker, int sync);

  /* schedule(), first step, for the task leaving (or keeping) the CPU. */
  void (*put_prev)(const psModel *m, psData *d, psTask *prev);

  /* schedule(): prev is no longer RUNNING and still queued: deactivate it. */
  void (*deactivate)(const psModel *m, psData *d, psTask *prev);

  /* schedule(): choose the next task of `cpu` (its idle task when nothing
   * is runnable); may balance and switch arrays. */
  psTask *(*pick_next)(const psModel *m, psData *d, int cpu);

  /* The timer tick of `cpu` (scheduler_tick), charged to its current task. */
  void (*tick)(const psModel *m, psData *d, int cpu);

  /* sched_yield by the running task p (the engine calls schedule after). */
  void (*yield)(const psModel *m, psData *d, psTask *p);

  /* set_user_nice; nice already validated to -20..19. */
  void (*set_nice)(const psModel *m, psData *d, psTask *p, int nice);

  /* setscheduler; policy and rt_priority already validated. */
  void (*set_scheduler)(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);

  /* set_cpus_allowed: move p, which is not running, to CPU dest (p is
   * queued: to dest's runqueue, with a preemption check; p sleeps: it will
   * wake there). */
  void (*migrate)(const psModel *m, psData *d, psTask *p, int dest);

  /* The queued tasks of `cpu` in the order schedule() would consider them:
   * (array, prio, pid) triples, array 0 for the active (or only) queue and 1
   * for the expired one; at most max triples; returns how many. */
  int (*dump)(const psModel *m, const psData *d, int cpu, int32_t *out, int max);

  /* Invariants of the policy's runqueues; 0, or -1 with a message. */
  int (*check)(const psModel *m, const psData *d, char *err, int errlen);
};

#endif

/* A scheduler policy is a table of hooks plus tables of data: its run-time
 * parameters, its per-task / per-runqueue state fields, what the layers
 * above show of it (headline fields, queue columns) and the formulas it
 * exports.  The engine never tests which policy it runs (cf. the kernel's
 * struct sched_class), and neither do the binding nor Python: everything
 * they show of a policy is declared here.  A new policy is one file and one
 * line in registry.c. */
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

/* Field types of state tables.  PS_F_U64 is read as unsigned: the first
 * word of the engine's cpus_allowed, CPUs 0..63 (CPU 63's bit does not
 * make it negative; the binding reads the whole set) and the
 * sched_ext class's DSQ ids (bit 63: a built-in DSQ, in the C dialect's
 * libraries too). */
enum { PS_F_I32 = 0, PS_F_U32 = 1, PS_F_I64 = 2, PS_F_U64 = 3 };

/* psPolicy.tick_batch_local: never, a CPU's ticks may be deferred alone,
 * and so with the ticks applied as the policy said it could (apply=2). */
enum { PS_TICK_BATCH_GLOBAL = 0, PS_TICK_BATCH_LOCAL = 1, PS_TICK_BATCH_TRUSTED = 2 };

/* Where a field's offset points. */
enum {
  PS_AT_PRIV = 0,   /* into psTask.priv (a policy task field), or the policy's runqueue */
  PS_AT_TASK = 1,   /* into psTask: the kernel's name for a generic field (2.4's counter) */
  PS_AT_MODEL = 2,  /* into psModel.derived (a derived constant) */
};

/* One readable state field. */
typedef struct psFieldInfo {
  const char *name;
  int type;
  size_t offset;
  const char *doc;
  int at;           /* PS_AT_*; 0 (the policy's own area) when left out */
} psFieldInfo;

/* A formula the policy runs, exported so that Python can check it directly
 * (pysched.o1.effective_prio ...): fn(model, args) with nargs int64
 * arguments named in `args` (comma-separated), already range-checked
 * against min/max (inclusive, one pair per argument). */
typedef struct psFormula {
  const char *name;
  const char *args;
  int nargs;
  int64_t min[4], max[4];
  int64_t (*fn)(const psModel *m, const int64_t *args);
  const char *doc;
} psFormula;

/* One column of the queue dump (sim.queue): a name, and for a column of
 * small codes their names ("active,expired"), or NULL. */
typedef struct psColumn {
  const char *name;
  const char *labels;
} psColumn;

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
  int hz;                          /* default HZ; 0: 1000 (i386 2.5) */
} psPreset;

/* A row of a parameter table from an X-macro list entry. */
#define PS_PARAM_ROW(name, def, min, max, hz, unit, doc) {#name, def, min, max, hz, unit, doc},
/* A field of struct T (a policy's task or runqueue struct). */
#define PS_FIELD(T, name, type, doc) {#name, type, offsetof(T, name), doc, PS_AT_PRIV}

/* Elements of a static table (the policy's tables' counts). */
#define PS_NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The tables of a psPolicy initializer, from the arrays a policy file names
 * by convention: P_params, P_task_fields, P_rq_fields, P_formulas and
 * P_presets. */
#define PS_POLICY_TABLES(P)                                                         \
  .params = P##_params, .nparams = PS_NELEM(P##_params),                            \
  .task_fields = P##_task_fields, .ntask_fields = PS_NELEM(P##_task_fields),        \
  .rq_fields = P##_rq_fields, .nrq_fields = PS_NELEM(P##_rq_fields),                \
  .formulas = P##_formulas, .nformulas = PS_NELEM(P##_formulas),                    \
  .presets = P##_presets, .npresets = PS_NELEM(P##_presets)

/* psData.failed of a step that failed because the policy broke the hooks'
 * contract (pick_next's result, below), where ps_fail sets 1: the layer
 * above raises it as a policy's error and lets the simulator go no
 * further, its state being half updated. */
#define PS_FAILED_POLICY 2

/* The hooks.  Mandatory: task_spawn, wakeup, deactivate, pick_next.  Any
 * other may be NULL: the model then runs the engine's default, named
 * below, so the engine never tests a hook for NULL.  Every task a hook is
 * given is up to date when it is called: the ticks its CPU owes it (see
 * tick_batch_local) have been applied first, whichever CPU the hook runs
 * for. */
typedef struct psHooks {
  /* Model build and every set_param: check the parameter set as a whole
   * (cross-parameter limits, overflow of the policy's arithmetic) and
   * derive constants into m->derived.  0, or -1 with a message naming the
   * value and its allowed range.  Default: accept. */
  int (*configure)(psModel *m, char *err, int errlen);

  /* State creation: set up runqueue `cpu` (its idle task is
   * d->cpu[cpu].idle).  The runqueue is zeroed before.  Default: nothing. */
  void (*init_rq)(const psModel *m, psData *d, int cpu);

  /* A task created from Python (sim.spawn) on p->cpu, state RUNNING, not
   * yet on_rq: initialise the policy fields and enqueue it (the engine sets
   * on_rq after).  Returns 1 if it should preempt the CPU's current task. */
  int (*task_spawn)(const psModel *m, psData *d, psTask *p);

  /* fork, called in the parent's process context with the parent running:
   * copy_process's slice split and wake_up_forked_process.  The child is a
   * struct copy of the parent (priv included) with fresh identity, state
   * RUNNING, not on_rq; the hook enqueues it (the engine sets on_rq after)
   * and reschedules the parent's CPU if the child should run first.
   * Default: child->cpu = parent->cpu, then task_spawn(child), rescheduling
   * when it says so. */
  void (*task_fork)(const psModel *m, psData *d, psTask *parent, psTask *child);

  /* sched_exit: p is a zombie being reaped; its parent (if alive) is
   * parent, NULL otherwise.  Default: nothing. */
  void (*task_exit)(const psModel *m, psData *d, psTask *p, psTask *parent);

  /* try_to_wake_up for a task that is not on_rq: activate it on p->cpu (or
   * move it first, as a sync wakeup may).  waker is the waking task in
   * process context, NULL in interrupt context.  Returns 1 when p->cpu's
   * current task must be preempted.  The engine sets on_rq and state
   * RUNNING afterwards. */
  int (*wakeup)(const psModel *m, psData *d, psTask *p, psTask *waker, int sync);

  /* schedule(), first step, for the task leaving (or keeping) the CPU.
   * Default: nothing. */
  void (*put_prev)(const psModel *m, psData *d, psTask *prev);

  /* schedule(): prev is no longer RUNNING and still on_rq: dequeue it (the
   * engine clears on_rq after). */
  void (*deactivate)(const psModel *m, psData *d, psTask *prev);

  /* schedule(): choose the next task of `cpu` (its idle task when nothing
   * is runnable); may balance.  The chosen task's cpu must be `cpu`.  The
   * engine checks the result in every build: `cpu`'s idle task, or a task
   * of d->task (a pointer to a slot's start) that is RUNNING, on_rq, has
   * cpu `cpu` and whose cpus_allowed has `cpu`.  Anything else -- NULL, a
   * pointer elsewhere, a sleeper, another CPU's task -- is never followed
   * further: the step fails with PS_FAILED_POLICY, raised as
   * pysched.PolicyError, and the simulator goes no further. */
  psTask *(*pick_next)(const psModel *m, psData *d, int cpu);

  /* The timer tick of `cpu` (scheduler_tick), charged to its current task.
   * Default: nothing. */
  void (*tick)(const psModel *m, psData *d, int cpu);

  /* Batched ticks (optional): the next k ticks of every CPU, each running
   * a task, are all that happens on the machine before the engine calls
   * again (no event, no end of burst, no sample falls among them; CPUs
   * that tick together).  Returns n <= k, as many of them as the policy
   * can apply to `cpu` at once with exactly the effect of n calls of tick:
   * only its own counters change, nothing is logged, no CPU is
   * rescheduled, no balancing falls among them.  With apply=0 it only
   * says n; with apply=1 it also applies those n.  On one CPU the engine
   * applies at once; on several it asks every CPU, then applies the least
   * n to all (each can take that many), then delivers the next tick as
   * usual.  d->jiffies and d->now_ns are those before the
   * first of them.  Default: 0, every tick one by one.
   * A policy that sets psPolicy.tick_batch_local is also asked for one
   * CPU alone while others have events due: the engine defers that CPU's
   * next n ticks, and applies those that have fallen due (apply=1, with
   * k <= n and the clock of the instant it asked) before the next hook
   * that acts on that CPU.  With tick_batch_local PS_TICK_BATCH_TRUSTED
   * it applies them with apply=2 instead: k <= the n the policy answered,
   * nothing has acted on the CPU since, and the policy applies k without
   * asking itself again and without reading the clock (it is the
   * applying instant's); it returns k. */
  int64_t (*tick_batch)(const psModel *m, psData *d, int cpu, int64_t k, int apply);

  /* sched_yield by the running task p; the hook reschedules its CPU if the
   * policy calls schedule() (ps_resched_cpu).  Default: reschedule, and let
   * pick_next decide. */
  void (*yield)(const psModel *m, psData *d, psTask *p);

  /* set_user_nice, nice validated to -20..19 and different from p->nice
   * (the engine sets p->nice after).  Default: nothing. */
  void (*set_nice)(const psModel *m, psData *d, psTask *p, int nice);

  /* setscheduler; policy and rt_priority already validated.  Default: set
   * p->policy and p->rt_priority. */
  void (*set_scheduler)(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);

  /* set_cpus_allowed: move p, which is not running, to CPU dest (p is
   * on_rq: to dest's runqueue, with a preemption check; p sleeps: it will
   * wake there).  A task that was running when its affinity changed is
   * handed over as the migration thread (2.5) or stopper (6.x) has
   * preempted it: inside schedule() of its CPU, after put_prev and before
   * pick_next, still that CPU's current task, on_rq -- within the
   * set_affinity call from Python, before a program runs on after its own
   * affinity op (2.4.20: as its CPU next schedules).  Default: on_rq,
   * deactivate then wakeup on dest; asleep, p->cpu = dest. */
  void (*migrate)(const psModel *m, psData *d, psTask *p, int dest);

  /* The queued tasks of `cpu` in the order schedule() would consider them,
   * as rows of the policy's queue_columns (pid among them); at most max
   * rows; returns how many.  Default: the on_rq tasks of cpu in pid order,
   * columns (prio, pid). */
  int (*dump)(const psModel *m, const psData *d, int cpu, int32_t *out, int max);

  /* sim.spawn(init=...): t is a blank task with the caller's values written
   * into the policy fields named; 0 if they lie in the domain the policy's
   * arithmetic accepts under the model's parameters, else -1 with a message
   * naming the field, its value and the allowed range.  Default: accept. */
  int (*check_init)(const psModel *m, const psTask *t, char *err, int errlen);

  /* Parameters changed between steps (sim.set_param): bring every task's
   * state back into the domain check_init accepts under the new values,
   * as the policy's own code bounds it (clamp a sleep_avg above a lowered
   * max_sleep_avg ...), so that its arithmetic stays in range.  Default:
   * nothing. */
  void (*retune)(const psModel *m, psData *d);

  /* Invariants of the policy's own data; 0, or -1 with a message.  It must
   * be safe on a state loaded from a damaged snapshot: check indices before
   * following them.  Default: none. */
  int (*check)(const psModel *m, const psData *d, char *err, int errlen);

  /* A request of the policy's own from Python between steps
   * (sim.policy_call: the fair policies' task groups), op and nargs int64
   * arguments (at most 4), up to 4 results in out; every CPU's deferred
   * ticks are applied first, and a CPU the request reschedules switches
   * as the run resumes.  0, or -1 with a message naming the value and its
   * allowed range.  Default: -1, the policy has no such requests. */
  int (*control)(const psModel *m, psData *d, int op, const int64_t *args, int nargs, int64_t *out,
                 char *err, int errlen);

  /* After each instant while sim.watch() is on (watch.h): the policy's own
   * behaviour invariants, each task's lag given to ps_watch_lag (the fair
   * policies').  It must not change the run: only the watch's records.
   * Default: nothing. */
  void (*watch)(const psModel *m, psData *d);
} psHooks;

struct psPolicy {
  const char *name;
  const char *doc;
  const psParamInfo *params;
  int nparams;
  const psFieldInfo *task_fields;  /* per task (PS_AT_PRIV or PS_AT_TASK) */
  int ntask_fields;
  const psFieldInfo *rq_fields;    /* offsets into the policy's runqueue */
  int nrq_fields;
  const psFieldInfo *derived_fields; /* constants in psModel.derived */
  int nderived_fields;
  size_t rq_size;                  /* bytes of policy runqueue per CPU */
  /* bytes more in each runqueue for each CPU of the machine, after its
   * rq_size: a per-CPU array that the kernel sizes NR_CPUS (2.5's
   * prev_cpu_load[]) is sized by the machine, so that 1,024 CPUs' runqueues
   * are not 1,024 of 4 kB each on every machine; 0 for most */
  size_t rq_per_cpu;
  int max_prio;                    /* MAX_PRIO: the idle task's prio */
  /* The fields that say most about a task under this policy (sleep_avg,
   * run_avg, counter ...): the demo's and plots' columns. NULL-ended. */
  const char *const *headline;
  /* Columns of the queue dump (the default dump's when NULL). */
  const psColumn *queue_columns;
  int nqueue_columns;
  const psFormula *formulas;
  int nformulas;
  /* Constant data of the family module a policy shares code with (the O(1)
   * family's o1_family), NULL if none. */
  const void *family;
  /* The presets of this policy (each names it as its policy). */
  const psPreset *presets;
  int npresets;
  psHooks hooks;
  /* 1 when what tick_batch's ticks change on a CPU (its running task's
   * counters) is read or written only by hooks acting on that CPU: its
   * tick, schedule() and process context on it, the wakeup of a task
   * whose cpu it is, a migration to or from it -- never by another CPU's
   * tick or balancing (the 2.5 family: load_balance moves only tasks that
   * are not running, and reads runqueue lengths, which ticks before the
   * expiry of a slice leave alone).  On several CPUs the engine may then
   * defer a busy CPU's ticks while the others have events, instead of
   * batching only when no CPU has anything due.  0: never.
   * PS_TICK_BATCH_TRUSTED (2): so, and tick_batch takes apply=2 (above). */
  int tick_batch_local;
  /* 1 when the kernel has no migration thread: set_affinity of a running
   * task leaves it running, outside its new mask, until its CPU next
   * schedules (migrate_to), which the engine asks for at once and which
   * happens as the run resumes, at the same instant -- 2.4.20, whose
   * sched.c has no set_cpus_allowed: code that changes its own affinity
   * writes current->cpus_allowed and calls schedule() until it is on an
   * allowed CPU (kernel/softirq.c ksoftirqd: `while (smp_processor_id()
   * != cpu) schedule();`).  0 (2.5 and later, every Python policy):
   * set_cpus_allowed preempts the running task and moves it before it
   * returns (syscall.c, do_affinity). */
  int no_migration_thread;
};

/* The registry (registry.c): presets of every policy, in order. */
int ps_npresets(void);
const psPreset *ps_preset(int i);
const psPreset *ps_preset_find(const char *name);

/* The hooks of `pol` with the engine's defaults where it left NULL; 0, or
 * -1 with a message when a mandatory hook is missing. */
int ps_hooks_resolve(const psPolicy *pol, psHooks *out, char *err, int errlen);

/* The columns of the default queue dump. */
extern const psColumn ps_default_queue_columns[2];

#endif

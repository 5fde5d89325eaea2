/* pysched core: a machine (CPUs, a timer tick, tasks running workload
 * programs) and a pluggable scheduler policy.  Pure C: no Python here.
 *
 * The model (psModel) is what a run is made of: machine, policy and its
 * parameters, programs, sources.  The state (psData) is what evolves.
 * Stepping is ps_run_until(model, state, ...); nothing lives in globals, so
 * any number of simulators coexist, and copying a state branches a run. */
#ifndef PYSCHED_H
#define PYSCHED_H
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "policy.h"
#include "program.h"
#include "task.h"
#include "trace.h"

#define PS_MAX_PARAMS 48
#define PS_DERIVED_BYTES 256
#define PS_MAX_SERIES_FIELDS 16
#define PS_ERRLEN 256
/* Bytes of psData.fast, the fast paths' bookkeeping (engine_private.h). */
#define PS_FAST_STATE_BYTES 32768
/* Bytes a snapshot stores a preset's or a parameter's name in (NUL included). */
#define PS_SNAPSHOT_NAME 64

/* External sources: a device posting to a channel from interrupt context. */
enum { PS_SRC_EVERY = 0, PS_SRC_POISSON = 1 };

typedef struct psSourceDef {
  int32_t chan;
  int32_t kind;
  int64_t period_ns;  /* every: the period; poisson: the mean gap */
  int64_t start_ns;   /* first firing (every) or start of the process (poisson) */
  int64_t count;      /* firings, -1 = forever */
} psSourceDef;

/* The fast paths, each of which a model may switch off (psModel.fast_paths):
 * without its bit a run takes the reference path it stands in for, to the
 * same results (tests/core/test_fast_paths.py compares them). */
enum {
  PS_FAST_SCAN = 1,   /* next_due and cpus_at's AVX2 and AVX-512 forms (scan.h) */
  PS_FAST_BATCH = 2,  /* every CPU's ticks at once (ticks_fast.h, batch_ticks) */
  PS_FAST_DEFER = 4,  /* a busy CPU's ticks deferred (ticks_fast.h, defer_ticks) */
  PS_FAST_WHEEL = 8,  /* the event queue's timer wheel (events.h); off, the heap alone */
  PS_FAST_SKIP = 16,  /* a policy's exact skips of work that would change nothing
                       * (the balancers' scans: balance_o1.c, o1_rebalance, and
                       * balance_fair.c, load_balance) */
  PS_FAST_ALL = 31,
  PS_NFAST = 5
};

/* Warnings: anomalies that are not errors, counted in the state. */
enum {
  PS_WARN_STARVING = 0,   /* an interactive task expired because EXPIRED_STARVING */
  PS_NWARN
};

typedef struct psModel {
  /* machine */
  int32_t ncpu;
  int32_t hz;
  int64_t tick_ns;          /* 1e9 / hz */
  int32_t stagger_ticks;    /* 1: CPU i ticks i*tick_ns/ncpu after CPU 0 */
  int64_t switch_cost_ns;   /* CPU time each context switch burns */
  uint64_t seed;
  int32_t max_tasks;        /* live tasks at most (fork fails beyond) */
  int32_t keep_exited;      /* records of the most recent exited tasks kept */

  /* policy */
  const psPolicy *policy;
  /* A policy implemented by the layer above (a Python policy) finds its
   * own context here; NULL for a C policy.  Owned by that layer: a copy or
   * a loaded snapshot starts with NULL until it is attached again. */
  void *ctx;
  const psPreset *preset;
  psHooks hooks;            /* the policy's hooks, the engine's defaults filled in */
  int64_t param[PS_MAX_PARAMS];
  _Alignas(8) unsigned char derived[PS_DERIVED_BYTES]; /* the policy's derived constants */

  /* recording (counters are always kept) */
  int32_t rec_events;
  int32_t rec_latency;
  int32_t rec_series;
  int32_t series_every;     /* ticks between samples */
  int32_t nseries;
  int32_t series[PS_MAX_SERIES_FIELDS]; /* task field indices (ps_field_index) */
  int64_t max_trace_bytes;  /* cap per ring */
  int32_t overwrite;        /* full ring: 1 overwrite oldest, 0 fail the step */
  int32_t debug_checks;     /* check invariants after every instant */
  int32_t fast_paths;       /* PS_FAST_* in force (ps_set_fast_paths) */
  /* The indices in param[] of the policy's parameters hrtimer_sleep and
   * timer_slack_ns, -1 when it has none (its sleeps are jiffy timers):
   * found by name from this build's policy (ps_model_defaults, and again
   * when a snapshot loads). */
  int32_t hrtimer_param, slack_param;
  /* behaviour invariants (watch.h): PS_WATCH_* bits, and the thresholds
   * beyond which an idle-while-waiting window, a task's wait or the CPU
   * time its ticks did not charge breaks them */
  int32_t watch;
  int64_t idle_wait_ns, starve_ns, uncharged_ns;
  /* bytes from one CPU's runqueue to the next: the policy's rq_size and
   * rq_per_cpu for each CPU, rounded up to 8 (ps_rq_stride; set with the
   * policy, and again as a snapshot loads) */
  size_t rq_stride;

  /* workload */
  psOp *ops;
  int32_t nops, cap_ops;
  /* the CPU sets the programs' set_affinity ops name (an op's arg is an
   * index here: a set of 1,024 CPUs does not fit in an op) */
  psCpuMask *masks;
  int32_t nmasks, cap_masks;
  psProgram *progs;
  int32_t nprogs, cap_progs;
  int32_t nchan;
  psSourceDef *src;
  int32_t nsrc, cap_src;
} psModel;

typedef struct psCpu {
  int32_t curr;             /* task index running now */
  int32_t idle;             /* this CPU's idle task */
  int32_t need_resched;
  int64_t run_since_ns;     /* curr's burst is accounted up to here */
  int64_t overhead_until_ns;/* end of the current switch cost */
  int64_t nr_switches;
  int64_t ticks, busy_ticks;
  int64_t busy_ns;
} psCpu;

typedef struct psChannel {
  int64_t count;            /* posts not yet consumed */
  int32_t head, tail;       /* FIFO of waiting task indices */
} psChannel;

typedef struct psSourceState {
  psRng rng;
  int64_t fired;
} psSourceState;

/* The behaviour invariants' state (watch.h): the tasks waiting for a CPU,
 * the windows in which a CPU idled while one that may run on it waited
 * (the open one: since_ns, its CPU and task; first_*: the first longer
 * than psModel.idle_wait_ns, -1 none), and the lags seen past their
 * policy's bound. */
typedef struct psLagBreak {
  int64_t at_ns;            /* the instant a task's lag was seen past its bound, -1 none */
  int64_t lag_ns, bound_ns; /* its lag then and the bound (+-bound_ns) */
  int32_t pid, cpu;
} psLagBreak;

/* The first task whose CPU time its ticks did not charge passed
 * psModel.uncharged_ns (PS_WATCH_ASSERT_UNCHARGED): when, its CPU time and
 * what its ticks charged then. */
typedef struct psChargeBreak {
  int64_t at_ns;            /* -1 none */
  int64_t cpu_ns, charged_ns;
  int32_t pid, cpu;
} psChargeBreak;

typedef struct psWatch {
  int64_t nr_waiting;
  int32_t waiting_head;     /* the tasks waiting for a CPU, linked by slot (psTask.waiting_*), -1 none */
  int32_t unused0;
  int32_t open, idle_cpu, pid, pid_cpu;
  int64_t since_ns;
  int64_t total_ns, longest_ns, windows;
  int64_t first_ns;
  int32_t first_idle_cpu, first_pid, first_pid_cpu, unused;
  /* the first and the latest lag past its policy's bound (ps_watch_lag) */
  psLagBreak lag_first, lag_last;
  psChargeBreak uncharged;
} psWatch;

typedef struct psData {
  int64_t now_ns;
  uint64_t jiffies;
  psCpu *cpu;
  /* CPUs whose process context resolve must look at: set by
   * ps_resched_cpu, by the end of a burst, and for every CPU when a run
   * starts; the others have nothing to do at this instant */
  psCpuMask cpus_due;
  /* The engine's own bookkeeping -- the fast paths' (deferred ticks,
   * counts), spawn's runnable counts, the pid table -- laid out in
   * engine_private.h (psFastState): the engine's alone, which no policy
   * reads, so that it may change without the policy ABI. */
  _Alignas(8) unsigned char fast[PS_FAST_STATE_BYTES];
  /* Each CPU's next tick, and when its running task's burst ends (INT64_MAX
   * idle; set where resolve settles the CPU): every instant looks at all
   * of them (scan.h, next_due), side by side in a few cache lines where
   * 64 CPUs' psCpu records are 64 or more. */
  int64_t next_tick_ns[PS_MAX_CPUS];
  int64_t burst_end_ns[PS_MAX_CPUS];
  unsigned char *rq;        /* ncpu runqueues, psModel.rq_stride bytes apart */
  /* Task slots: the idle tasks 0..ncpu-1, then live tasks and free slots.
   * An exited task's slot is reaped when it leaves its CPU for the last
   * time: its record goes to `exited`, the slot (pid 0, state DEAD) to the
   * free list, chained through wait_next, for the next fork.  So memory is
   * bounded by the live tasks however many come and go; pids are never
   * reused. */
  psTask *task;
  int32_t ntask, cap_task;  /* slots in use (live, free, idle) and allocated */
  int32_t nlive;            /* spawned or forked tasks not yet exited */
  int32_t next_pid;         /* pid of the next task; pids 1..next_pid-1 exist or existed */
  int32_t free_slot;        /* head of the free slots, -1 none */
  psRing exited;            /* psTask records of the most recent exited tasks */
  psEvq evq;               /* timed events (events.h) */
  psChannel *chan;
  int32_t nchan;
  psSourceState *src;
  int32_t nsrc;
  psRing events, latencies, series;
  psRing periodic;          /* psPeriodicRec of the timed ops' calls */
  int64_t warn[PS_NWARN];
  int64_t nr_forks, nr_exits;
  /* A failure inside a step (task limit, livelock): set, the step stops
   * and returns -1 with errmsg.  A full recording buffer sets trace_full
   * instead: the instant is finished (unrecorded), then the step fails, so
   * that a run resumed after clearing the buffer equals an uninterrupted one. */
  int32_t failed;
  int32_t trace_full;
  char errmsg[PS_ERRLEN];
  /* zero-time work done at the current instant (livelock detection) */
  int64_t instant_ns, instant_actions;
  /* timers armed so far: the last one's arming sequence number, which
   * orders the timers due at one time as the kernel does (events.h,
   * psu_timer_rank); 0 .. PS_TIMER_SEQ_MAX */
  int64_t timer_seq;
  psWatch watch;
} psData;

/* A sampled series value. */
typedef struct psSampleRec {
  int64_t time_ns;
  int64_t value;
  int32_t pid;
  int32_t field;  /* index into the model's series list */
} psSampleRec;


/* Generic task fields (pid, prio, time_slice, cpu_ns ...), readable by name. */
extern const psFieldInfo ps_task_fields[];
extern const int ps_ntask_fields;
int64_t psu_field_read(const void *base, const psFieldInfo *f);
void psu_field_write(void *base, const psFieldInfo *f, int64_t v);

/* A task's fields under one index: the generic ones, then the policy's
 * (ps_nfields in all, below). */
const psFieldInfo *ps_field_info(const psModel *m, int i);
/* Index of a field by name, or -1. */
int ps_field_index(const psModel *m, const char *name);
/* Field i of task t now: cpu_ns, wait_ns and sleep_ns include the interval
 * in progress. */
int64_t ps_task_value(const psModel *m, const psData *d, const psTask *t, int i);

/* ---- model (model.c) ---- */
/* Build a model for `preset` with defaults; hz 0 means the preset's
 * default HZ.  0 or -1 with err. */
int ps_model_init(psModel *m, const psPreset *preset, int ncpu, int hz, uint64_t seed,
                  char *err, int errlen);
/* The same without the policy's check of the parameter set: follow it with
 * ps_set_params (with the overrides, or none), which checks the whole set,
 * so that a default that does not fit this HZ can be overridden. */
int ps_model_defaults(psModel *m, const psPreset *preset, int ncpu, int hz, uint64_t seed,
                      char *err, int errlen);
/* Find the policy's hrtimer_sleep and timer_slack_ns (psModel.hrtimer_param). */
void ps_model_find_timer_params(psModel *m);
/* The preset's default HZ. */
int ps_preset_hz(const psPreset *p);
/* Index of the policy's formula `name`, or -1. */
int ps_formula_index(const psPolicy *pol, const char *name);
/* Formula i of m's policy on args (n of them, range-checked); 0 with *out,
 * or -1 with err naming the value and its allowed range. */
int ps_formula_call(const psModel *m, int i, const int64_t *args, int n, int64_t *out, char *err,
                    int errlen);
/* Derived constant i of m's policy. */
int64_t ps_derived_value(const psModel *m, int i);
/* The columns of the policy's queue dump; *n is set to their number. */
const psColumn *ps_queue_columns(const psPolicy *pol, int *n);
void ps_model_free(psModel *m);
int ps_model_copy(psModel *dst, const psModel *src);
int ps_param_index(const psModel *m, const char *name);
/* Set several parameters at once, checked as a set; all or nothing. */
int ps_set_params(psModel *m, const char *const *names, const int64_t *values, int n, char *err,
                  int errlen);
/* Add a program (checked); returns its id, or -1 with err.  Its
 * set_affinity ops name CPU sets among masks[0..nmasks-1] (op arg), which
 * the model keeps. */
int ps_add_program(psModel *m, const psOp *ops, int n, const psCpuMask *masks, int nmasks,
                   char *err, int errlen);
int ps_add_source(psModel *m, psData *d, const psSourceDef *s, char *err, int errlen);
/* Make room for channels 0..n-1 in model and state. */
int ps_ensure_channels(psModel *m, psData *d, int n, char *err, int errlen);

/* ---- state (engine.c) and stepping (run.c) ---- */
int ps_data_init(const psModel *m, psData *d, char *err, int errlen);
void ps_data_free(psData *d);
int ps_data_copy(const psModel *m, psData *dst, const psData *src);

/* Create a task running program `prog`; returns its pid or -1 with err
 * (PS_SPAWN_INVARIANT with err: under debug_checks, the counts it places
 * by were found wrong).  Without a cpu (cpu < 0) it goes to the allowed CPU
 * with the fewest tasks in state RUNNING, lowest index on ties; those
 * counts are kept from one spawn to the next (O(1) a spawn) and counted
 * again after anything else acted on the state (ps_forget_runnable).
 * init sets policy task fields (index, value) before the policy initialises
 * the task (e.g. sleep_avg); time_slice (>= 1, or 0 for the policy's) is set
 * after it. */
int ps_spawn(const psModel *m, psData *d, int prog, const char *name, int nice, int policy,
             int rt_priority, const psCpuMask *cpus_allowed, int cpu, int ninit, const int32_t *init_field,
             const int64_t *init_value, int time_slice, char *err, int errlen);
#define PS_SPAWN_INVARIANT (-2)
/* Something outside the engine moved a task (a Python policy's view):
 * the next spawn counts the runnable tasks again. */
void ps_forget_runnable(psData *d);
/* The latest time a run may reach (about 73 years): far from int64
 * overflow, whatever durations are still pending then. */
#define PS_MAX_TIME_NS (INT64_MAX / 4)

/* Advance to t_end (inclusive, at most PS_MAX_TIME_NS): every event due at
 * or before t_end is delivered.  With max_instants > 0 it may pause after
 * that many instants, returning 1 (call again to go on; the result is the
 * same as one call).  0 when t_end is reached, or -1 with err (the state is
 * consistent at the instant of the failure and the run can continue once
 * the cause is removed). */
int ps_run_until(const psModel *m, psData *d, int64_t t_end, int64_t max_instants, char *err,
                 int errlen);
/* 0 if a run may reach t, else -1 with err naming the limit. */
int ps_check_time(int64_t t, char *err, int errlen);
/* Time of jiffy j's tick on CPU 0. */
static inline int64_t ps_jiffy_time(const psModel *m, uint64_t j) { return (int64_t)j * m->tick_ns; }

/* ---- syscalls from Python between steps (syscall.c) ---- */
/* The request (PS_SYS_NICE, PS_SYS_SETSCHED or PS_SYS_AFFINITY) made on
 * behalf of task pid, through the same path as a program's; 0 or -1 with
 * err.  set_cpus_allowed: a task outside its new mask moves to the lowest
 * allowed CPU (at once, or when it next leaves the CPU if it is running). */
int ps_syscall_from_python(const psModel *m, psData *d, int pid, const psSyscall *sc, char *err,
                           int errlen);
/* Post channel chan n times from outside any task (waker NULL, as a
 * device's interrupt does): each post wakes the channel's first waiter, or
 * is counted for the next wait.  0, or -1 with err (no such channel, n out
 * of 1..2^31-1). */
int ps_post_from_python(const psModel *m, psData *d, int chan, int64_t n, char *err, int errlen);
/* A policy's own request (psHooks.control) from Python; 0, or -1 with err. */
int ps_policy_control(const psModel *m, psData *d, int op, const int64_t *args, int nargs,
                      int64_t *out, char *err, int errlen);
/* ---- snapshots (snapshot.c) ---- */
/* The model and state as one malloc'd byte string; 0 or -1 (no memory). */
int ps_snapshot_save(const psModel *m, const psData *d, unsigned char **out, size_t *len);
/* The name of the preset a snapshot was made with, into name (of
 * PS_SNAPSHOT_NAME bytes), for the caller to find that preset (built in,
 * from a policy library it loaded, or a Python policy); 0, or -1 with err
 * if buf is not a snapshot. */
int ps_snapshot_preset_name(const unsigned char *buf, size_t len, char *name, char *err,
                            int errlen);
/* The package version this build was made as (setup.py passes
 * pysched.__version__); snapshots record the one that made them. */
#ifndef PS_VERSION
#define PS_VERSION "unknown"
#endif
/* Rebuild a model and state of `preset` (the one the snapshot names; the
 * caller resolves it) from a snapshot of this build; 0, or -1 with err
 * (lengths, indices and invariants are checked before anything is used;
 * a snapshot of another format or package version says which made it and
 * what this build reads), or PS_SNAPSHOT_OTHER_LAYOUT when the same format
 * and version stored the preset's policy with other tables (a Python
 * policy's class changed since). */
#define PS_SNAPSHOT_OTHER_LAYOUT (-2)
int ps_snapshot_load(const unsigned char *buf, size_t len, const psPreset *preset, psModel *m,
                     psData *d, char *err, int errlen);

/* After ps_set_params on a model that has a state: the policy brings the
 * tasks' state into the new parameters' domain (psHooks.retune). */
void ps_params_changed(const psModel *m, psData *d);

/* Switch the fast paths to `fast` (PS_FAST_* bits), before anything is
 * queued (the wheel holds no event then). */
void ps_set_fast_paths(psModel *m, psData *d, int fast);
/* How often each fast path was taken, in PS_FAST_* order: instants scanned
 * by a wide form, CPU-ticks batched, CPU-ticks deferred, wheel buckets
 * sorted as they became the earliest, a policy's skips taken.  Kept by
 * copies and snapshots. */
void ps_fast_counts(const psData *d, int64_t out[PS_NFAST]);

/* Engine and policy invariants (every live task within check_init's
 * domain among them); 0 or -1 with err. */
int ps_check(const psModel *m, const psData *d, char *err, int errlen);

/* The live task pid (running, queued, asleep or a zombie), or NULL. */
psTask *ps_task_by_pid(const psModel *m, const psData *d, int pid);
/* The kept record of exited task pid (a copy into *out), 1; or 0 when pid
 * is alive, never existed or its record was dropped (keep_exited). */
int ps_exited_by_pid(const psData *d, int pid, psTask *out);
static inline size_t ps_rq_stride(const psPolicy *pol, int ncpu) {
  return (pol->rq_size + (size_t)ncpu * pol->rq_per_cpu + 7) & ~(size_t)7;
}
static inline void *ps_rq(const psModel *m, const psData *d, int cpu) {
  return d->rq + (size_t)cpu * m->rq_stride;
}
/* Generic plus policy task fields. */
static inline int ps_nfields(const psModel *m) { return ps_ntask_fields + m->policy->ntask_fields; }

#endif

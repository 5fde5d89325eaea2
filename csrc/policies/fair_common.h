/* What the fair schedulers share: CFS (policy_cfs.c, 2.6.23-6.5) and EEVDF
 * (policy_eevdf.c, 6.6+).  The nice-to-weight tables and the wmult fixed
 * point of kernel/sched/core.c and fair.c, the per-task sched_entity and
 * the per-CPU cfs_rq (in psTask.priv and the policy's runqueue), the
 * weighted average vruntime, min_vruntime, the ordered queue
 * (fair_rbtree.h), a real-time class beside them, and the hooks that do not
 * depend on the member: each member describes itself with a fair_class
 * (its enqueue/dequeue/pick/tick/preemption, as the kernel's fair.c of its
 * version), and the shared hooks call it.  The shared code is
 * fair_common.c (arithmetic, the cfs_rq's bookkeeping), fair_hooks.c (the
 * shared hooks, the RT class), fair_invariants.c (the invariants) and
 * balance_fair.c (placement, balancing).
 *
 * Sources read (cited as "6.5" and "6.12" below): a CFS-era fair.c of the
 * 6.x series (gregkh/linux @ 000c9ee4: place_entity with
 * entity_is_long_sleeper, check_preempt_tick, wakeup_preempt_entity,
 * sched_slice with BASE_SLICE) and 6.12.y's fair.c (DoubleZZeta/linux-6.12.67:
 * avg_vruntime, entity_lag, vruntime_eligible, pick_eevdf, update_deadline,
 * did_preempt_short); the sched_prio_to_weight / sched_prio_to_wmult tables
 * of core.c; docs/schedulers/cfs.md (§2: the weights) and eevdf.md.
 *
 * Simplifications, stated once: no cgroups (one cfs_rq per CPU, every
 * entity a task), no autogroup, no PELT (the balancer weighs runqueues by
 * their instantaneous load.weight), no SCHED_BATCH / SCHED_IDLE, no
 * bandwidth control, no HRTICK (slices end at ticks, as with the feature's
 * default off); the time a context switch costs (switch_cost_ns) is charged
 * to the task that runs, as rq_clock_task would not. */
#ifndef PS_FAIR_COMMON_H
#define PS_FAIR_COMMON_H
#include <stdint.h>

#include "engine_internal.h"
#include "fair_rbtree.h"

#define FAIR_MAX_PRIO 140      /* MAX_PRIO: the idle task's prio */
#define FAIR_MAX_RT_PRIO 100
#define NICE_0_LOAD 1024       /* scale_load_down(NICE_0_LOAD) on 64-bit kernels */
#define WMULT_CONST (~0U)
#define WMULT_SHIFT 32

/* The sched_entity of a task (psTask.priv).  Weights are in the kernel's
 * 1024 scale (scale_load_down of se->load.weight, what avg_vruntime and
 * __calc_delta use).  vruntime and deadline are u64 and compared through
 * (s64) differences, as the kernel does, so they may wrap. */
typedef struct fair_se {
  fair_node node;                 /* first: the tree links (fair_rbtree.h) */
  uint64_t vruntime;
  uint64_t deadline;              /* EEVDF: vd_i */
  uint64_t min_vruntime;          /* EEVDF: smallest vruntime of its subtree (augment) */
  int64_t vlag;                   /* EEVDF: V - v_i saved at dequeue (virtual ns) */
  uint64_t slice;                 /* EEVDF: r_i, ns */
  uint64_t sum_exec_runtime;
  uint64_t exec_start;            /* last update_curr while it ran; 0 after a migration */
  uint64_t list_stamp;            /* its place in rq->cfs_tasks (most recent: largest) */
  uint32_t weight;                /* sched_prio_to_weight[nice + 20] */
  int32_t custom_slice;           /* EEVDF 6.12: slice set by sched_attr.sched_runtime */
  int32_t sched_delayed;          /* EEVDF 6.12: asleep, dequeue delayed (DELAY_DEQUEUE) */
  int32_t rel_deadline;           /* EEVDF 6.12: deadline holds deadline - vruntime */
} fair_se;

/* The per-CPU runqueue: the cfs_rq, a real-time list beside it, and the
 * balancer's state. */
typedef struct fair_rq {
  int32_t root, leftmost;         /* tasks_timeline */
  int32_t curr;                   /* cfs_rq->curr (task index), -1 none */
  int32_t curr_on_rq;             /* curr->on_rq */
  int32_t next, last, skip;       /* CFS buddies, -1 none */
  uint32_t nr_running;            /* cfs_rq->nr_running: queued entities, curr and delayed ones included */
  uint32_t nr_delayed;            /* of them, delayed (6.12) */
  uint64_t load;                  /* cfs_rq->load.weight, 1024 scale */
  uint64_t min_vruntime;
  int64_t avg_vruntime;           /* \Sum (v_i - min_vruntime) * w_i over the tree */
  int64_t avg_load;               /* \Sum w_i over the tree */
  uint64_t prev_sum_exec_runtime; /* curr's sum_exec_runtime when it was picked */
  uint64_t protect_deadline;      /* RUN_TO_PARITY: curr's deadline when picked (see fair_protected) */
  int32_t protect;                /* 1 while that copy stands */
  /* the real-time class: queued RT tasks, best first, FIFO among equals */
  int32_t rt_head, rt_tail;
  uint32_t rt_nr_running;
  uint64_t list_seq;              /* stamps for list_stamp */
  /* the load balancer (balance_fair.c) */
  uint64_t next_balance;          /* jiffies of the next periodic balance */
  uint32_t balance_interval;      /* ms: sd->balance_interval */
  uint32_t nr_balance_failed;
  int64_t nr_balance_pulls;       /* tasks this CPU pulled */
  int64_t nr_wakeup_migrations;   /* wakeups and forks placed on this CPU from another */
} fair_rq;

/* enqueue/dequeue flags (kernel/sched/sched.h) */
enum {
  DEQUEUE_SLEEP = 0x01,
  DEQUEUE_SAVE = 0x02,
  DEQUEUE_MOVE = 0x04,
  DEQUEUE_SPECIAL = 0x10,  /* a special task state (TASK_DEAD): never delayed */
  DEQUEUE_DELAYED = 0x200,
  ENQUEUE_WAKEUP = 0x01,
  ENQUEUE_RESTORE = 0x02,
  ENQUEUE_MOVE = 0x04,
  ENQUEUE_INITIAL = 0x80,
  ENQUEUE_MIGRATED = 0x100,
};
/* wake flags */
enum { WF_SYNC = 0x10, WF_FORK = 0x08 };

/* How a member implements the class (the parts of its fair.c that differ). */
typedef struct fair_class {
  int key;  /* FAIR_KEY_*: what its tree is sorted by */
  /* update_curr() of cpu's cfs_rq, at d->now_ns */
  void (*update_curr)(const psModel *m, psData *d, int cpu);
  /* enqueue_entity(cfs_rq, se, flags) for task p on p->cpu */
  void (*enqueue_entity)(const psModel *m, psData *d, psTask *p, int flags);
  /* dequeue_entity(cfs_rq, se, flags); 0 when it only delayed the dequeue */
  int (*dequeue_entity)(const psModel *m, psData *d, psTask *p, int flags);
  /* pick_next_entity with cfs_rq->curr considered: a task index, or -1
   * when what it picked was a delayed entity it then dequeued (pick again) */
  int32_t (*pick_next_entity)(const psModel *m, psData *d, int cpu);
  /* set_next_entity / put_prev_entity */
  void (*set_next_entity)(const psModel *m, psData *d, int cpu, int32_t i);
  void (*put_prev_entity)(const psModel *m, psData *d, int cpu, int32_t i);
  /* check_preempt_wakeup for a fair task p just enqueued on a CPU running
   * a fair task; 1 to reschedule */
  int (*check_preempt_wakeup)(const psModel *m, psData *d, psTask *p, int wake_flags);
  /* task_tick_fair's entity_tick for the CPU's running fair task */
  void (*entity_tick)(const psModel *m, psData *d, int cpu);
  /* yield_task_fair (sys_sched_yield then calls schedule()) */
  void (*yield_task)(const psModel *m, psData *d, psTask *p);
  /* task_fork_fair and wake_up_new_task's enqueue: place the new task p
   * (its se fresh, p->cpu chosen) and enqueue it; parent is the forking
   * task (running on its own CPU) or NULL for a task spawned from Python */
  void (*task_new)(const psModel *m, psData *d, psTask *p, psTask *parent);
  /* a sleeping task moves from CPU `from` to p->cpu as it is woken there
   * (migrate_task_rq_fair for TASK_WAKING); returns the extra enqueue flags */
  int (*migrate_wakee)(const psModel *m, psData *d, psTask *p, int from);
  /* reweight_entity for a task off its queue (set_user_nice between
   * dequeue and enqueue), new weight w */
  void (*reweight)(const psModel *m, psData *d, psTask *p, uint32_t w);
  /* a task leaves the fair class (switched_from_fair) or joins it
   * (switched_to_fair) while not queued; may be NULL */
  void (*detach)(const psModel *m, psData *d, psTask *p);
  void (*attach)(const psModel *m, psData *d, psTask *p);
  /* wakeup of an entity whose dequeue was delayed (ttwu_runnable's
   * requeue); NULL when the member never delays */
  void (*requeue_delayed)(const psModel *m, psData *d, psTask *p);
} fair_class;

static inline const fair_class *fair_class_of(const psModel *m) {
  return (const fair_class *)m->policy->family;
}
static inline fair_se *SE(psTask *p) { return (fair_se *)p->priv; }
static inline const fair_se *SEc(const psTask *p) { return (const fair_se *)p->priv; }
static inline fair_rq *FRQ(const psModel *m, const psData *d, int cpu) {
  return (fair_rq *)ps_rq(m, d, cpu);
}
static inline psTask *fair_task(psData *d, int32_t i) { return &d->task[i]; }
static inline int fair_rt(const psTask *p) { return p->policy != PS_SCHED_NORMAL; }
static inline fair_tree fair_tree_of(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_tree t = {d->task, &rq->root, &rq->leftmost, fair_class_of(m)->key};
  return t;
}

/* ---- arithmetic (kernel/sched/core.c, fair.c) ---- */
extern const int sched_prio_to_weight[40];
extern const uint32_t sched_prio_to_wmult[40];
static inline uint32_t fair_nice_weight(int nice) { return (uint32_t)sched_prio_to_weight[nice + 20]; }
/* sched_prio_to_wmult[] of a task weight (set_load_weight's inv_weight) */
uint32_t fair_weight_wmult(uint32_t weight);
/* __update_inv_weight: WMULT_CONST / w for a runqueue's summed weight */
uint32_t fair_inv_weight(uint64_t w);
/* __calc_delta(delta_exec, weight, lw): delta_exec * weight / lw.weight in
 * wmult fixed point, lw given as its weight's inverse */
uint64_t fair_calc_delta(uint64_t delta_exec, uint64_t weight, uint32_t lw_inv);
/* calc_delta_fair(delta, se): delta * NICE_0_LOAD / w */
uint64_t fair_calc_delta_fair(uint64_t delta, uint32_t weight);
/* get_update_sysctl_factor(): SCHED_TUNABLESCALING_NONE 0 -> 1, LOG 1 ->
 * 1 + ilog2(min(ncpus, 8)), LINEAR 2 -> min(ncpus, 8) */
int fair_sysctl_factor(int ncpus, int scaling);

/* The formulas both fair policies declare (ps.formula): the weight tables,
 * __calc_delta and the sysctl factor, as the first rows of their tables. */
int64_t fair_f_weight(const psModel *m, const int64_t *a);
int64_t fair_f_wmult(const psModel *m, const int64_t *a);
int64_t fair_f_calc_delta_fair(const psModel *m, const int64_t *a);
int64_t fair_f_factor(const psModel *m, const int64_t *a);
#define FAIR_COMMON_FORMULAS                                                                      \
  {"weight", "nice", 1, {-20}, {19}, fair_f_weight, "sched_prio_to_weight[nice + 20]"},            \
  {"wmult", "nice", 1, {-20}, {19}, fair_f_wmult, "sched_prio_to_wmult[nice + 20] = 2^32 / weight"}, \
  {"calc_delta_fair", "delta_ns, nice", 2, {0, -20}, {1000000000000LL, 19}, fair_f_calc_delta_fair,  \
   "delta * 1024 / weight in wmult fixed point (__calc_delta)"},                                   \
  {"sysctl_factor", "ncpus, scaling", 2, {1, 0}, {4096, 2}, fair_f_factor,                         \
   "get_update_sysctl_factor(): scaling 0 none, 1 log, 2 linear"}

/* (s64)(a - b) comparisons of u64 virtual times */
static inline int64_t vdiff(uint64_t a, uint64_t b) { return (int64_t)(a - b); }
static inline uint64_t max_vruntime(uint64_t max, uint64_t v) { return vdiff(v, max) > 0 ? v : max; }
static inline uint64_t min_vruntime_of(uint64_t min, uint64_t v) { return vdiff(v, min) < 0 ? v : min; }
/* s64 products and sums as the kernel computes them (it wraps; C must not) */
static inline int64_t s64_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t s64_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

/* ---- the cfs_rq ---- */
/* entity_key(cfs_rq, se): v_i - min_vruntime, the key of avg_vruntime's sums */
static inline int64_t entity_key(const fair_rq *rq, const fair_se *se) {
  return vdiff(se->vruntime, rq->min_vruntime);
}
/* __enqueue_entity / __dequeue_entity: the tree, and (EEVDF) avg_vruntime's sums */
void fair_tree_enqueue(const psModel *m, psData *d, int cpu, int32_t i);
void fair_tree_dequeue(const psModel *m, psData *d, int cpu, int32_t i);
/* account_entity_enqueue / _dequeue: load and nr_running, and rq->cfs_tasks */
void fair_account_enqueue(const psModel *m, psData *d, int cpu, psTask *p);
void fair_account_dequeue(const psModel *m, psData *d, int cpu, psTask *p);
/* avg_vruntime(cfs_rq): V, curr counted while on_rq, floored */
uint64_t fair_avg_vruntime(const psModel *m, const psData *d, int cpu);
/* vruntime_eligible(cfs_rq, v): V >= v without the division's rounding */
int fair_vruntime_eligible(const psModel *m, const psData *d, int cpu, uint64_t vruntime);
/* update_min_vruntime(cfs_rq); with_avg: also shift avg_vruntime's keys
 * (EEVDF's __update_min_vruntime) */
void fair_update_min_vruntime(const psModel *m, psData *d, int cpu, int with_avg);
/* the smallest vruntime in the tree: leftmost's (by vruntime) or the root's augment */
int32_t fair_first(const fair_rq *rq);
/* RUN_TO_PARITY's slice protection of curr: the kernel stashes curr's
 * deadline in se->vlag when it picks it (the HACK in set_next_entity) and
 * compares later; here the copy lives in the runqueue so that vlag always
 * reads as a lag, and every place the kernel overwrites curr's vlag ends
 * the protection instead */
static inline int fair_protected(const fair_rq *rq, const fair_se *curr) {
  return rq->protect && rq->protect_deadline == curr->deadline;
}
static inline void fair_set_protect(fair_rq *rq, const fair_se *se) {
  rq->protect = 1;
  rq->protect_deadline = se->deadline;
}

/* ---- shared hooks (fair_hooks.c; fair_check is fair_invariants.c's) ---- */
/* a fresh sched_entity for task p (__sched_fork), weight from its nice */
void fair_se_init(psTask *p);
void fair_init_rq(const psModel *m, psData *d, int cpu);
/* an RT task joins its CPU's RT list (the sched_ext class's fallback
 * hands its RT tasks over so) */
void fair_rt_enqueue(const psModel *m, psData *d, psTask *p);
int fair_task_spawn(const psModel *m, psData *d, psTask *p);
void fair_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child);
int fair_wakeup(const psModel *m, psData *d, psTask *p, psTask *waker, int sync);
void fair_deactivate(const psModel *m, psData *d, psTask *prev);
psTask *fair_pick_next(const psModel *m, psData *d, int cpu);
void fair_tick(const psModel *m, psData *d, int cpu);
void fair_yield(const psModel *m, psData *d, psTask *p);
void fair_set_nice(const psModel *m, psData *d, psTask *p, int nice);
void fair_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);
void fair_migrate(const psModel *m, psData *d, psTask *p, int dest);
int fair_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max);
int fair_check(const psModel *m, const psData *d, char *err, int errlen);
extern const psColumn fair_queue_columns[3];

#define FAIR_HOOKS                                                                         \
  .init_rq = fair_init_rq, .task_spawn = fair_task_spawn, .task_fork = fair_task_fork,     \
  .wakeup = fair_wakeup, .deactivate = fair_deactivate,                                    \
  .pick_next = fair_pick_next, .tick = fair_tick, .yield = fair_yield,                     \
  .set_nice = fair_set_nice, .set_scheduler = fair_set_scheduler, .migrate = fair_migrate, \
  .dump = fair_dump, .check = fair_check
#define FAIR_QUEUE_COLUMNS .queue_columns = fair_queue_columns, .nqueue_columns = 3

/* check_preempt_curr after p was enqueued on p->cpu: a real-time task
 * preempts a fair or lower RT one, a fair task goes to the member's
 * check_preempt_wakeup, anything preempts the idle task.  1 to reschedule. */
int fair_check_preempt_curr(const psModel *m, psData *d, psTask *p, int wake_flags);

/* The parameters every member reads, by index in its table: set by the
 * member's configure hook into the derived constants below. */
typedef struct fair_derived {
  int64_t factor;              /* get_update_sysctl_factor() for this machine */
  int64_t migration_cost;      /* sysctl_sched_migration_cost, ns */
  int64_t rr_timeslice;        /* sched_rr_timeslice: RR_TIMESLICE = 100 ms in ticks */
  int64_t balance_min_interval;/* sd->min_interval: sd_weight ms */
  int64_t busy_factor;         /* sd->busy_factor */
  int64_t imbalance_pct;       /* sd->imbalance_pct */
  int64_t cache_nice_tries;    /* sd->cache_nice_tries */
  int64_t balance;             /* 1: the load balancer runs (SMP) */
  int64_t member[16];          /* the member's own constants (its sysctls) */
} fair_derived;

static inline const fair_derived *FD(const psModel *m) { return (const fair_derived *)m->derived; }

/* The balancer's parameters, in both members' tables. */
#define FAIR_BALANCE_PARAMS(X)                                                                     \
  X(sched_migration_cost, 500000, 0, 1000000000, 0, "ns",                                         \
    "sysctl_sched_migration_cost: a task that ran this recently is cache-hot and is not pulled "  \
    "by the balancer (unless balancing failed more than cache_nice_tries times)")                 \
  X(load_balance, 1, 0, 1, 0, "bool",                                                             \
    "the SMP load balancer model (balance_fair.c): periodic pulls by weighted load, newly idle "  \
    "pulls; 0: tasks stay where wakeups and forks put them")                                      \
  X(busy_factor, 16, 1, 1000, 0, "",                                                              \
    "sd->busy_factor: a busy CPU balances busy_factor times less often than an idle one")        \
  X(imbalance_pct, 117, 100, 1000, 0, "%",                                                        \
    "sd->imbalance_pct of the LLC domain: a busy CPU pulls only when the busiest runqueue's "     \
    "load exceeds its own by this much")

/* How sleeps end, in both members' tables; the engine reads them by name
 * (psModel.hrtimer_param, syscall.c).  2.6.16 on, nanosleep and
 * clock_nanosleep are hrtimers (kernel/time/hrtimer.c, hrtimer_nanosleep),
 * not jiffy timers. */
#define FAIR_TIMER_PARAMS(X)                                                                       \
  X(hrtimer_sleep, 1, 0, 1, 0, "bool",                                                            \
    "1: a sleep is an hrtimer (hrtimer_nanosleep) and ends at its nanosecond plus the task's "    \
    "timer slack; 0: a jiffy timer, ending at the first tick at least its length after it began") \
  X(timer_slack_ns, 50000, 0, 1000000000, 0, "ns",                                                \
    "current->timer_slack_ns, 50 us by default (init_task): an hrtimer sleep of a normal task "   \
    "ends this much after its requested time (the range's hard expiry); 0 for SCHED_FIFO/RR")

/* Fill the shared constants (configure) from the parameter at index p0,
 * the first of FAIR_BALANCE_PARAMS in the member's table. */
void fair_configure_common(psModel *m, int p0);

/* balance_fair.c */
/* select_task_rq_fair for a wakeup (waker may be NULL) or a fork (parent
 * set, fork 1): the CPU to enqueue p on */
int fair_select_task_rq(const psModel *m, psData *d, psTask *p, psTask *waker, int sync, int fork);
/* select_task_rq_rt: a CPU whose current task p would preempt */
int fair_select_task_rq_rt(const psModel *m, psData *d, psTask *p);
/* trigger_load_balance at the end of the tick of `cpu` */
void fair_trigger_load_balance(const psModel *m, psData *d, int cpu);
/* newidle_balance: cpu found nothing to run; 1 if it pulled a task */
int fair_newidle_balance(const psModel *m, psData *d, int cpu);
/* Move the queued, not running, fair task p to CPU dest as
 * detach_task/attach_task do (dequeue without sleep, enqueue migrated),
 * with a preemption check on dest. */
void fair_move_queued(const psModel *m, psData *d, psTask *p, int dest);
/* p->cpu = dest for a task placed or woken on another CPU, counted and logged */
void fair_set_task_cpu(const psModel *m, psData *d, psTask *p, int dest);

/* Number of runnable tasks of cpu's runqueue, both classes, delayed
 * entities excluded (rq->nr_running). */
static inline uint32_t fair_rq_nr_running(const fair_rq *rq) {
  return rq->nr_running - rq->nr_delayed + rq->rt_nr_running;
}

#endif

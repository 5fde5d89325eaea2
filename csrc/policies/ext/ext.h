/* The sched_ext class's own state and what its files share: the per-task
 * sched_ext_entity (psTask.priv), the per-CPU runqueue with its local DSQ,
 * and the state the kernel keeps in globals (the global DSQ, the user DSQs,
 * the dispatch buffer, idle tracking, the exit), which lives in CPU 0's
 * runqueue area: the engine gives a policy no other area that copies and
 * snapshots carry.
 *
 * Files: ext_dsq.c (dispatch queues), ext_class.c (the class's rules),
 * ext_hooks.c (the psPolicy: hooks and tables), ext_kfuncs.c (the kfuncs,
 * idle tracking, errors), ext_iter.c (DSQ iterators and the moves from
 * them), ext_fallback.c (the tasks handed to EEVDF), ext_check.c
 * (invariants).
 * Read: kernel/sched/ext.c and include/linux/sched/ext.h of 6.12.y
 * (GrapheneOS/kernel_common-6.12), Documentation/scheduler/sched-ext.rst. */
#ifndef PS_EXT_H
#define PS_EXT_H
#include "ext_ops.h"
#include "fair_common.h"

#define EXT_MAX_USER_DSQS 64
#define EXT_MAX_BATCH EXT_MAX_BATCH_PUBLIC
#define EXT_MSG_LEN 256
#define EXT_DUMP_LEN 2048

/* sched_ext_entity.flags */
enum {
  EXT_TASK_QUEUED = 1,            /* SCX_TASK_QUEUED: runnable in the class */
  EXT_TASK_RESET_RUNNABLE_AT = 2, /* SCX_TASK_RESET_RUNNABLE_AT */
  EXT_TASK_RUNNABLE = 4,          /* on the runnable list (the watchdog's) */
  EXT_TASK_ON_PRIQ = 8,           /* SCX_TASK_DSQ_ON_PRIQ */
  EXT_TASK_ENABLED = 16,          /* SCX_TASK_ENABLED (ops.enable called) */
};
/* ops_state: SCX_OPSS_NONE (the class owns it) or QUEUED (the scheduler does) */
enum { EXT_OPSS_NONE = 0, EXT_OPSS_QUEUED = 2 };

/* A task's sched_ext_entity (and the RT list links of an RT task). */
typedef struct ext_task {
  uint64_t slice;                 /* ns left */
  uint64_t dsq_vtime;
  uint64_t dsq_id;                /* the DSQ it is on, SCX_DSQ_INVALID if none */
  uint64_t ddsp_dsq_id;           /* direct dispatch verdict, SCX_DSQ_INVALID if none */
  uint64_t ddsp_enq_flags;
  int64_t runnable_at;            /* jiffies */
  int64_t exec_start;             /* ns: update_curr_scx's last point */
  int32_t next, prev;             /* DSQ (or RT list) links, task indices, -1 */
  uint32_t weight;                /* 1..10000 */
  int32_t flags;                  /* EXT_TASK_* */
  int32_t ops_state;              /* EXT_OPSS_* */
  uint32_t dsq_seq;                /* its DSQ's seq when it was queued there */
  int64_t enq_ns;                 /* when ops.enqueue last took it and kept it */
} ext_task;

/* A dispatch queue: a list of task indices, FIFO or ordered by dsq_vtime
 * (one or the other while it holds tasks). */
typedef struct ext_dsq {
  uint64_t id;
  int32_t head, tail;
  int32_t nr;
  int32_t priq;                   /* holds vtime-ordered tasks */
  uint32_t seq;                   /* insertions so far (the iterators' bound) */
  int32_t pad;
} ext_dsq;

typedef struct ext_dsp_ent {
  int32_t task;
  int32_t pad;
  uint64_t dsq_id, enq_flags;
} ext_dsp_ent;

/* What the kernel keeps in globals (ext.c: global_dsqs, dsq_hash,
 * scx_dsp_ctx, idle_masks, direct_dispatch_task, scx_exit_info ...). */
typedef struct ext_shared {
  ext_dsq global;
  ext_dsq user[EXT_MAX_USER_DSQS];
  int32_t nuser;
  int32_t enabled;                /* 1 while the scheduler's ops run */
  int32_t exit_kind;              /* SCX_EXIT_* */
  int32_t op;                     /* EXT_OP_* being called, -1 none */
  int32_t ddsp_task;              /* direct_dispatch_task: task index, -1 none, -2 spent */
  int32_t dsp_cpu;                /* CPU whose ops.dispatch runs, -1 none */
  int32_t dsp_cursor, dsp_nr_tasks;
  int32_t this_cpu;               /* the CPU an op runs on (smp_processor_id) */
  int32_t inited;                 /* ops.init has been called */
  int32_t fair;                   /* the tasks are EEVDF's (the fallback) */
  int32_t pad;
  ext_dsp_ent dsp_buf[EXT_MAX_BATCH];
  psCpuMask idle_mask;            /* idle_masks.cpu */
  uint64_t watchdog_next;         /* jiffies of the next watchdog check */
  int64_t exit_ns;
  /* what the exit concerns: the op (EXT_OP_*, -1 none), the task (pid, 0
   * none) and, for a stall, where that task was: held by the scheduler
   * since ops.enqueue took it at held_ns (-1: it was on dsq_id) */
  int32_t exit_op, exit_pid;
  int32_t exit_problem, pad2;     /* EXT_AFFINITY ... >> EXT_PROBLEM_SHIFT */
  int64_t exit_held_ns;
  uint64_t exit_dsq_id;
  /* ps_ext_strict: the watchdog's timeout in ms (0: the ops'), and a task
   * inserted twice in one ops.dispatch as an error */
  uint32_t strict_timeout_ms;
  int32_t strict;
  char exit_msg[EXT_MSG_LEN];
  char dump[EXT_DUMP_LEN];
} ext_shared;

/* The per-CPU runqueue: its local DSQ, the RT tasks queued on it (above
 * the class), counters; CPU 0's also holds ext_shared. */
typedef struct ext_rq {
  ext_dsq local;
  int32_t rt_head, rt_tail;
  int32_t nr_running;             /* rq->scx.nr_running */
  int32_t rt_nr_running;
  int64_t nr_dispatched;          /* tasks moved into this local DSQ */
  int64_t nr_kicks;
  int64_t nr_keep_prev;           /* schedules that kept prev running */
  int32_t distribute_prev;        /* cpumask_any_and_distribute's per-CPU cursor */
  int32_t pad;
  ext_shared shared;
} ext_rq;


_Static_assert(offsetof(ext_task, slice) == PS_EXT_TASK_SLICE_OFF &&
               offsetof(ext_task, dsq_vtime) == PS_EXT_TASK_DSQ_VTIME_OFF &&
               offsetof(ext_task, dsq_id) == PS_EXT_TASK_DSQ_ID_OFF &&
               offsetof(ext_task, weight) == PS_EXT_TASK_WEIGHT_OFF &&
               offsetof(ext_task, flags) == PS_EXT_TASK_FLAGS_OFF && EXT_TASK_QUEUED == 1,
               "ext_ops.h's offsets of ext_task fields");

_Static_assert(sizeof(ext_task) <= PS_TASK_PRIV, "ext_task fits in psTask.priv");

static inline ext_task *XT(psTask *p) { return (ext_task *)p->priv; }
static inline const ext_task *XTc(const psTask *p) { return (const ext_task *)p->priv; }
/* A CPU's runqueue area: EEVDF's fair_cpu (the fallback's, first, where
 * fair_hooks.c finds it: the root cfs_rq and the task groups' slots, none
 * of them made under the ext class), then the class's ext_rq. */
#define EXT_RQ_OFFSET ((sizeof(fair_cpu) + 7) & ~(size_t)7)
static inline ext_rq *XRQ(const psModel *m, const psData *d, int cpu) {
  return (ext_rq *)((unsigned char *)ps_rq(m, d, cpu) + EXT_RQ_OFFSET);
}
static inline ext_shared *XS(const psModel *m, const psData *d) { return &XRQ(m, d, 0)->shared; }
/* the scheduler's ops, or NULL once it has exited (and for a model not yet
 * attached to its ops) */
static inline const psExtOps *XOPS(const psModel *m, const psData *d) {
  return XS(m, d)->enabled ? ((const psExtPolicy *)m->policy)->ops : NULL;
}
/* the scheduler's ops, whether or not it still runs */
static inline const psExtOps *XOPS_ANY(const psModel *m) {
  return ((const psExtPolicy *)m->policy)->ops;
}
static inline int ext_rt(const psTask *p) { return p->policy != PS_SCHED_NORMAL; }
static inline int ext_allowed(const psTask *p, int cpu) { return ps_cpu_test(&p->cpus_allowed, cpu); }

/* ---- ext_dsq.c ---- */
void ext_dsq_init(ext_dsq *q, uint64_t id);
/* dispatch_enqueue's list part: FIFO (tail, or head with SCX_ENQ_HEAD) or
 * by dsq_vtime with SCX_ENQ_DSQ_PRIQ */
void ext_dsq_add(psData *d, ext_dsq *q, int32_t i, uint64_t enq_flags);
void ext_dsq_remove(psData *d, ext_dsq *q, int32_t i);
/* the DSQ a task's dsq_id names (its CPU's local DSQ for a local one), NULL none */
ext_dsq *ext_dsq_of(const psModel *m, psData *d, const psTask *p);
ext_dsq *ext_user_dsq(const psModel *m, const psData *d, uint64_t id);

/* ---- ext_class.c: the class's rules ---- */
#define RR_TIMESLICE_MS 100

/* ---- calling the ops: the op being called is noted for errors and
 * for the kfuncs that only some ops may use ---- */

#define OPS_CALL(m, d, OP, cpu, call)          \
  do {                                         \
    ext_shared *s_ = XS(m, d);                 \
    int32_t op_ = s_->op, cpu_ = s_->this_cpu; \
    s_->op = (OP);                             \
    s_->this_cpu = (cpu);                      \
    call;                                      \
    s_->op = op_;                              \
    s_->this_cpu = cpu_;                       \
  } while (0)

static inline int is_ext_task(const psTask *p) { return !p->is_idle && !ext_rt(p); }

uint32_t ext_weight_of_nice(int nice);
void ext_set_task_cpu(const psModel *m, psData *d, psTask *p, int dest);
/* update_curr_scx: the running task's slice, in ns */
void ext_update_curr(const psModel *m, psData *d, int cpu);
/* the RT class above: link, unlink, and whether a queued RT task preempts */
void ext_rt_link(const psModel *m, psData *d, psTask *p);
void ext_rt_unlink(const psModel *m, psData *d, psTask *p);
int ext_rt_preempts(psData *d, const psTask *p);
/* enqueue_task_scx (migrating: no runnable; sticky_cpu >= 0: straight
 * into that local DSQ) and dequeue_task_scx (migrating: no quiescent) */
void ext_enqueue_task(const psModel *m, psData *d, psTask *p, uint64_t enq_flags, int migrating,
                      int sticky_cpu);
void ext_dequeue_task(const psModel *m, psData *d, psTask *p, uint64_t deq_flags, int migrating);
/* select_task_rq_scx then core.c's fallback to an allowed CPU */
int ext_select_task_rq(const psModel *m, psData *d, psTask *p, uint64_t wake_flags, int this_cpu);
/* put_prev_task_scx of a prev still runnable; set_next_task_scx */
void ext_put_prev_task(const psModel *m, psData *d, psTask *p, int next_lower);
void ext_set_next_task(const psModel *m, psData *d, psTask *p);
/* balance_one: 1 to keep prev running */
int ext_balance_one(const psModel *m, psData *d, int cpu, psTask *prev);
/* the watchdog's timeout: msecs_to_jiffies(timeout_ms or 30 s, or
 * ps_ext_strict's) */
uint64_t ext_timeout_jiffies(const psModel *m, const psData *d);
/* check_rq_for_timeouts, every timeout/2 */
void ext_watchdog(const psModel *m, psData *d);

/* ---- ext_class.c: DSQ moves ---- */
/* dispatch_enqueue: p into q, with the local DSQ's preemption rule */
void ext_dispatch_enqueue(const psModel *m, psData *d, ext_dsq *q, psTask *p, uint64_t enq_flags);
/* move p (owned by the class) into cpu's local DSQ, migrating it; 0 when
 * its affinity forbids (after an error, into the global DSQ) */
void ext_dispatch_to_local(const psModel *m, psData *d, int cpu, psTask *p, uint64_t enq_flags);
/* consume_dispatch_q: the first task of q that may run on cpu into its local DSQ */
int ext_consume_dsq(const psModel *m, psData *d, int cpu, ext_dsq *q);
/* find_dsq_for_dispatch: NULL for a local DSQ (*cpu set) */
ext_dsq *ext_find_dsq(const psModel *m, psData *d, uint64_t dsq_id, psTask *p, int *cpu);
void ext_flush_dispatch_buf(const psModel *m, psData *d, int cpu);

/* ---- ext_fallback.c ---- */
/* scx_ops_disable_workfn's switch of every task to the fair class: each
 * task becomes a fresh EEVDF entity, queued where it is; from then on the
 * class's hooks are EEVDF's.  woken counts as queued although its on_rq is
 * not yet set, sleeping as not although it still is (the hook the error
 * came in: a wakeup, a deactivate) */
void ext_switch_to_fair(const psModel *m, psData *d, const psTask *woken, const psTask *sleeping);

/* ---- ext_check.c ---- */
/* the DSQs' invariants: links, counts, each task's dsq_id, vtime order */
int ext_check_dsqs(const psModel *m, const psData *d, char *err, int errlen);

/* ---- ext_kfuncs.c ---- */
/* What an error exit is, for the checks of pysched.policy.testing: OR'd
 * into ext_error's kind (the kernel's SCX_EXIT_* are below 2^16); a stall
 * is told apart from a task the scheduler kept by where the task was. */
#define EXT_PROBLEM_SHIFT 16
enum { EXT_ERROR_, EXT_AFFINITY_, EXT_TWICE_, EXT_STALL_, EXT_UNDISPATCHED_ };
#define EXT_AFFINITY (EXT_AFFINITY_ << EXT_PROBLEM_SHIFT)
#define EXT_TWICE (EXT_TWICE_ << EXT_PROBLEM_SHIFT)

/* scx_ops_error: the scheduler ends with kind and a message naming the op
 * being called and the time; p: the task it concerns, or NULL; the class
 * goes on without its ops */
void ext_error(const psModel *m, psData *d, int kind, const psTask *p, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void ext_update_idle(const psModel *m, psData *d, int cpu, int idle, int notify);

#endif

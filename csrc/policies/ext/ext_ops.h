/* The sched_ext class's interface to a scheduler written for it: the ops
 * table (struct sched_ext_ops of include/linux/sched/ext.h and
 * kernel/sched/ext.c, 6.12) and the kfuncs (ext_kfuncs.c), with the
 * kernel's constants.  Every op and kfunc takes the simulator (m, d) first,
 * where the kernel has globals: a header of the BPF dialect
 * (BPF_STRUCT_OPS, scx_bpf_dsq_insert(p, dsq_id, slice, flags) ...) can sit
 * on top by passing them implicitly.  Python ops reach the class through the
 * binding's table of adapters (csrc/binding/py_ext.c).
 *
 * The names are those of 6.13 and later (scx_bpf_dsq_insert,
 * scx_bpf_dsq_move_to_local), whose rules are those of 6.12's
 * scx_bpf_dispatch and scx_bpf_consume. */
#ifndef PS_EXT_OPS_H
#define PS_EXT_OPS_H
#include <stdint.h>

#include "engine_internal.h"

/* DSQ ids (include/linux/sched/ext.h, enum scx_dsq_id_flags) */
#define SCX_DSQ_FLAG_BUILTIN (1ULL << 63)
#define SCX_DSQ_FLAG_LOCAL_ON (1ULL << 62)
#define SCX_DSQ_INVALID (SCX_DSQ_FLAG_BUILTIN | 0)
#define SCX_DSQ_GLOBAL (SCX_DSQ_FLAG_BUILTIN | 1)
#define SCX_DSQ_LOCAL (SCX_DSQ_FLAG_BUILTIN | 2)
#define SCX_DSQ_LOCAL_ON (SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON)
#define SCX_DSQ_LOCAL_CPU_MASK 0xffffffffULL

/* include/linux/sched/ext.h, enum scx_public_consts: the default slice,
 * 20 ms, and the slice that never runs out */
#define SCX_SLICE_DFL (20ULL * 1000 * 1000)
#define SCX_SLICE_INF UINT64_MAX

/* kernel/sched/ext.c, enum scx_consts */
#define SCX_DSP_DFL_MAX_BATCH 32
#define SCX_DSP_MAX_LOOPS 32
#define SCX_WATCHDOG_MAX_TIMEOUT_MS 30000
/* the largest dispatch_max_batch this class takes */
#define EXT_MAX_BATCH_PUBLIC 256

/* wake flags (core.c's WF_*, 6.12 sched.h) */
enum { SCX_WAKE_FORK = 0x04, SCX_WAKE_TTWU = 0x08, SCX_WAKE_SYNC = 0x10 };

/* enqueue flags (enum scx_enq_flags) */
#define SCX_ENQ_WAKEUP 0x01ULL
#define SCX_ENQ_HEAD 0x10ULL
#define SCX_ENQ_PREEMPT (1ULL << 32)
#define SCX_ENQ_REENQ (1ULL << 40)
#define SCX_ENQ_LAST (1ULL << 41)
#define SCX_ENQ_INTERNAL_MASK (0xffULL << 56)
#define SCX_ENQ_CLEAR_OPSS (1ULL << 56)
#define SCX_ENQ_DSQ_PRIQ (1ULL << 57)

/* DSQ iterator flags (enum scx_dsq_iter_flags) */
#define SCX_DSQ_ITER_REV (1ULL << 16)
#define SCX_DSQ_ITER_HAS_SLICE_ (1ULL << 30)
#define SCX_DSQ_ITER_HAS_VTIME_ (1ULL << 31)

/* dequeue flags (enum scx_deq_flags) */
#define SCX_DEQ_SLEEP 0x01ULL

/* kick flags (enum scx_kick_flags) */
#define SCX_KICK_IDLE (1ULL << 0)
#define SCX_KICK_PREEMPT (1ULL << 1)
#define SCX_KICK_WAIT (1ULL << 2)

/* ops flags (enum scx_ops_flags) this class implements */
#define SCX_OPS_KEEP_BUILTIN_IDLE (1ULL << 0)
#define SCX_OPS_ENQ_LAST (1ULL << 1)

/* enum scx_exit_kind */
enum {
  SCX_EXIT_NONE = 0,
  SCX_EXIT_DONE = 1,
  SCX_EXIT_ERROR = 1024,
  SCX_EXIT_ERROR_BPF = 1025,
  SCX_EXIT_ERROR_STALL = 1026,
};

/* The ops by index, and their names (ext_kfuncs.c): errors name the op
 * being called. */
enum {
  EXT_OP_SELECT_CPU, EXT_OP_ENQUEUE, EXT_OP_DEQUEUE, EXT_OP_DISPATCH, EXT_OP_TICK,
  EXT_OP_RUNNABLE, EXT_OP_RUNNING, EXT_OP_STOPPING, EXT_OP_QUIESCENT, EXT_OP_YIELD,
  EXT_OP_SET_WEIGHT, EXT_OP_SET_CPUMASK, EXT_OP_UPDATE_IDLE, EXT_OP_INIT_TASK,
  EXT_OP_EXIT_TASK, EXT_OP_ENABLE, EXT_OP_DISABLE, EXT_OP_INIT, EXT_OP_EXIT, EXT_NOPS
};
extern const char *const ext_op_names[EXT_NOPS];

/* The ops, in struct sched_ext_ops order; any may be NULL (the class then
 * does what the kernel does without it). */
typedef struct psExtOps {
  int32_t (*select_cpu)(const psModel *m, psData *d, psTask *p, int32_t prev_cpu,
                        uint64_t wake_flags);
  void (*enqueue)(const psModel *m, psData *d, psTask *p, uint64_t enq_flags);
  void (*dequeue)(const psModel *m, psData *d, psTask *p, uint64_t deq_flags);
  void (*dispatch)(const psModel *m, psData *d, int32_t cpu, psTask *prev);
  void (*tick)(const psModel *m, psData *d, psTask *p);
  void (*runnable)(const psModel *m, psData *d, psTask *p, uint64_t enq_flags);
  void (*running)(const psModel *m, psData *d, psTask *p);
  void (*stopping)(const psModel *m, psData *d, psTask *p, int runnable);
  void (*quiescent)(const psModel *m, psData *d, psTask *p, uint64_t deq_flags);
  int (*yield)(const psModel *m, psData *d, psTask *from, psTask *to);
  void (*set_weight)(const psModel *m, psData *d, psTask *p, uint32_t weight);
  void (*set_cpumask)(const psModel *m, psData *d, psTask *p, const psCpuMask *cpumask);
  void (*update_idle)(const psModel *m, psData *d, int32_t cpu, int idle);
  int32_t (*init_task)(const psModel *m, psData *d, psTask *p, int fork);
  void (*exit_task)(const psModel *m, psData *d, psTask *p, int cancelled);
  void (*enable)(const psModel *m, psData *d, psTask *p);
  void (*disable)(const psModel *m, psData *d, psTask *p);
  int32_t (*init)(const psModel *m, psData *d);
  void (*exit)(const psModel *m, psData *d, int32_t kind, const char *reason, const char *msg);
  uint32_t dispatch_max_batch;  /* 0: SCX_DSP_DFL_MAX_BATCH */
  uint64_t flags;               /* SCX_OPS_* */
  uint32_t timeout_ms;          /* 0: SCX_WATCHDOG_MAX_TIMEOUT */
} psExtOps;

/* ---- kfuncs (ext_kfuncs.c), valid from within the ops ---- */
void scx_bpf_dsq_insert(const psModel *m, psData *d, psTask *p, uint64_t dsq_id, uint64_t slice,
                        uint64_t enq_flags);
void scx_bpf_dsq_insert_vtime(const psModel *m, psData *d, psTask *p, uint64_t dsq_id,
                              uint64_t slice, uint64_t vtime, uint64_t enq_flags);
int scx_bpf_dsq_move_to_local(const psModel *m, psData *d, uint64_t dsq_id);
int32_t scx_bpf_create_dsq(const psModel *m, psData *d, uint64_t dsq_id, int32_t node);
void scx_bpf_kick_cpu(const psModel *m, psData *d, int32_t cpu, uint64_t flags);
int32_t scx_bpf_dsq_nr_queued(const psModel *m, psData *d, uint64_t dsq_id);
int32_t scx_bpf_select_cpu_dfl(const psModel *m, psData *d, psTask *p, int32_t prev_cpu,
                               uint64_t wake_flags, int *is_idle);
int32_t scx_bpf_pick_idle_cpu(const psModel *m, psData *d, const psCpuMask *cpus_allowed,
                              uint64_t flags);
int scx_bpf_test_and_clear_cpu_idle(const psModel *m, psData *d, int32_t cpu);
uint64_t scx_bpf_now(const psModel *m, const psData *d);
void scx_bpf_error(const psModel *m, psData *d, const char *msg);

/* A DSQ iterator (bpf_iter_scx_dsq_kern): the user DSQ it walks (valid: it
 * exists), the DSQ's seq when the walk began (tasks queued later are not
 * seen), and, in place of the kernel's cursor in the list, the task last
 * returned and the one after it then, with the seqs they were queued
 * with; last -2 before the first step.  slice and vtime: the overrides
 * set for the next move, flagged in flags. */
typedef struct psExtDsqIter {
  uint64_t dsq_id, flags, slice, vtime;
  uint32_t seq;
  int32_t valid;
  int32_t last, succ;
  uint32_t last_seq, succ_seq;
} psExtDsqIter;
/* bpf_iter_scx_dsq_new: 0, -EINVAL (flags) or -ENOENT (no such user DSQ) */
int32_t ps_ext_dsq_iter_new(const psModel *m, psData *d, psExtDsqIter *it, uint64_t dsq_id,
                            uint64_t flags);
/* bpf_iter_scx_dsq_next: the next task, or NULL */
psTask *ps_ext_dsq_iter_next(const psModel *m, psData *d, psExtDsqIter *it);
/* scx_bpf_dsq_move[_vtime] (6.12: scx_bpf_dispatch[_vtime]_from_dsq): p,
 * still on the iterated DSQ and queued before the walk began, to dsq_id;
 * 1 if moved */
int scx_bpf_dsq_move(const psModel *m, psData *d, psExtDsqIter *it, psTask *p, uint64_t dsq_id,
                     uint64_t enq_flags);

/* smp_processor_id() within an op: the CPU it runs on (-1 outside the ops) */
int32_t ps_ext_this_cpu(const psModel *m, const psData *d);

/* Where a task's sched_ext_entity fields lie in psTask.priv (ext.h's
 * ext_task, checked there): what the C dialect's struct task_struct reads
 * and writes (pysched/scx.h). */
#define PS_EXT_TASK_SLICE_OFF 0
#define PS_EXT_TASK_DSQ_VTIME_OFF 8
#define PS_EXT_TASK_DSQ_ID_OFF 16
#define PS_EXT_TASK_WEIGHT_OFF 64
#define PS_EXT_TASK_FLAGS_OFF 68

/* scx_ops_enable's ops.init, once for a state; 0 or its error */
int32_t ps_ext_enable(const psModel *m, psData *d);
/* How the scheduler ended: kind SCX_EXIT_NONE while it runs, else the
 * kind, its message (op, time, what) and the dump of the state it ended
 * in; the op (NULL: none, as the watchdog's), the task it concerns (pid,
 * 0 none), the time, and where that task was: held by the scheduler since
 * ops.enqueue took it at held_ns (-1: not held), or on dsq_id; problem:
 * "stall", "undispatched", "affinity", "double insertion" or "error"
 * (NULL while it runs). */
typedef struct psExtExit {
  int kind;
  const char *msg, *dump, *op, *problem;
  int32_t pid;
  int64_t ns, held_ns;
  uint64_t dsq_id;
} psExtExit;
void ps_ext_exit_info(const psModel *m, const psData *d, psExtExit *e);
/* Stricter than the kernel, for tests: the watchdog's timeout becomes
 * timeout_ms (0: the ops'), and a task inserted twice in one ops.dispatch
 * ends the scheduler (finish_dispatch skips the second silently). */
void ps_ext_strict(const psModel *m, psData *d, uint32_t timeout_ms);

/* A policy that is the sched_ext class: its psPolicy (the class's tables
 * and hooks), then the scheduler's ops, which the class finds from
 * m->policy.  Its parameters are the fallback's (EEVDF's, ps_policy_eevdf's
 * table, first, at their indices) and then the scheduler's own; its
 * family is EEVDF's, which the fallback runs. */
typedef struct psExtPolicy {
  psPolicy pol;
  const psExtOps *ops;
} psExtPolicy;

/* The class's tables and hooks, to copy into a psExtPolicy (ops NULL). */
extern const psExtPolicy ps_ext_class;
/* The fair class the class falls back to. */
extern const psPolicy ps_policy_eevdf;

#endif

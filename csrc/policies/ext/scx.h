/* sched_ext's C dialect on pysched's sched_ext class: a scheduler written
 * as for the kernel (tools/sched_ext/ *.bpf.c: BPF_STRUCT_OPS functions,
 * SCX_OPS_DEFINE, struct task_struct, the scx_bpf_* kfuncs, libbpf-style
 * maps, UEI_DEFINE / UEI_RECORD) compiles with pysched.build_policy into a
 * policy library whose preset is the ops' .name.  Its .bpf.c includes this
 * header instead of <scx/common.bpf.h> and needs no other edit.
 *
 * How the dialect maps onto the class (ext_ops.h):
 * - BPF_STRUCT_OPS(name, args...) and BPF_STRUCT_OPS_SLEEPABLE define a
 *   plain C function; SEC(), __always_inline, __weak and the like compile
 *   away.
 * - SCX_OPS_DEFINE(name, .op = (void *)fn, ...) defines the ops struct and,
 *   from it, a psExtOps of adapters (one per op the scheduler defines, NULL
 *   for the others, so that the class does what the kernel does without
 *   them), the psExtPolicy (the class's tables and hooks, its parameters
 *   EEVDF's, the fallback's) and the library's entry point.
 * - An op sees the simulator it runs for through a thread-local context
 *   (the kernel's globals are a simulator's state here; two simulators on
 *   two threads never meet), which the adapters set and the kfuncs read.
 * - struct task_struct is a view: an adapter fills one per task it passes
 *   (pid, tgid, prio, comm, cpus_ptr, nr_cpus_allowed, scx.slice,
 *   scx.dsq_vtime, scx.weight) and writes scx.slice and scx.dsq_vtime back
 *   to the class's task when the op returns and before any kfunc taking
 *   the task; the kfunc's changes are read back after it.
 * - Maps (scx_maps.h) live in the simulator's runqueue areas, and so do
 *   the file-scope variables, which build_policy turns into macros: a
 *   scalar's reads a slot there, another's (an array, a struct) a copy
 *   placed as a map (pysched/policy/scx_tunables.py).
 * - `const volatile` tunables at file scope are the preset's parameters
 *   (after EEVDF's), each simulator's own: build_policy compiles the file
 *   with them made thread-local globals (PS_SCX_TUNABLE), loaded from the
 *   simulator's parameters as an op starts (pysched/policy/scx_tunables.py).
 * - The exit is recorded in the simulator (the class's exit info);
 *   UEI_RECORD also fills the scheduler's own struct user_exit_info, which
 *   is thread-local.
 * - Loops: bpf_for and bpf_repeat are plain C loops; bpf_for_each walks a
 *   DSQ (scx_dsq), returning a view that is written back at the next step,
 *   at the end of the loop and before a kfunc given it.
 * Unsupported: other open-coded iterators, bpf_loop, bpf spin locks,
 * kptrs and bpf_cpumask_* allocation, task / cgroup local storage,
 * arenas, timers, ringbuffers: each is a build error naming it.
 *
 * Over 500 lines: a .bpf.c includes this one header, and most of it is the
 * adapters, one per op, which only this file's macros and view use (the
 * maps are apart, in scx_maps.h).
 * Read: include/linux/sched/ext.h, kernel/sched/ext.c (6.12),
 * tools/sched_ext/include/scx/common.bpf.h, compat.bpf.h and
 * user_exit_info.h of the Linux tree. */
#ifndef PYSCHED_SCX_H
#define PYSCHED_SCX_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy_lib.h"
#include "ext_ops.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef u32 __u32;
typedef u64 __u64;
typedef s32 __s32;
typedef s64 __s64;

/* ---- what compiles away ---- */
#define SEC(name)
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __weak
#define __hidden
#define __ksym
#define __kconfig
#define __noinline __attribute__((noinline))
#define __arg_trusted
#define __arg_nullable
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define barrier() __asm__ __volatile__("" ::: "memory")
#define bpf_printk(fmt, ...) ((void)0)
#define BPF_PROG(name, ...) name(__VA_ARGS__)
#define BPF_STRUCT_OPS(name, ...) name(__VA_ARGS__)
#define BPF_STRUCT_OPS_SLEEPABLE(name, ...) name(__VA_ARGS__)
#define MAX_NUMNODES 1
#define NUMA_NO_NODE (-1)

/* the kernel's errnos an op may return */
#define EPERM 1
#define ENOENT 2
#define ENOMEM 12
#define EEXIST 17
#define EINVAL 22
#define E2BIG 7
#define EBUSY 16

/* ---- constructs this dialect does not support: a build error naming each ---- */
#define PS_SCX_UNSUPPORTED(what) \
  _Static_assert(0, what " is not supported by pysched's sched_ext C dialect (pysched/scx.h)")
#define bpf_loop(...) PS_SCX_UNSUPPORTED("bpf_loop")
#define bpf_spin_lock(...) PS_SCX_UNSUPPORTED("bpf_spin_lock")
#define bpf_spin_unlock(...) PS_SCX_UNSUPPORTED("bpf_spin_unlock")
#define bpf_kptr_xchg(...) PS_SCX_UNSUPPORTED("bpf_kptr_xchg (kptrs)")
#define bpf_cpumask_create(...) PS_SCX_UNSUPPORTED("bpf_cpumask_create (allocated cpumasks)")
#define bpf_task_storage_get(...) PS_SCX_UNSUPPORTED("bpf_task_storage_get (task local storage)")
#define bpf_cgrp_storage_get(...) PS_SCX_UNSUPPORTED("bpf_cgrp_storage_get (cgroup storage)")
#define bpf_timer_init(...) PS_SCX_UNSUPPORTED("bpf_timer_init (BPF timers)")
#define bpf_ringbuf_reserve(...) PS_SCX_UNSUPPORTED("bpf_ringbuf_reserve (ring buffers)")
#define bpf_task_from_pid(...) PS_SCX_UNSUPPORTED("bpf_task_from_pid")

/* ---- the task view ---- */
struct cpumask {
  u64 bits[PS_CPUMASK_WORDS];   /* bit c of word c / 64: CPU c (psCpuMask's layout) */
};

/* enum scx_ent_flags */
#define SCX_TASK_QUEUED 1

struct sched_ext_entity {
  u64 dsq_vtime;
  u64 slice;
  u32 weight;
  u32 flags;   /* SCX_TASK_QUEUED: runnable in the class */
};

struct task_struct {
  s32 pid;
  s32 tgid;
  int on_rq;   /* TASK_ON_RQ_QUEUED (1): runnable */
  int prio, static_prio, normal_prio;
  const struct cpumask *cpus_ptr;
  int nr_cpus_allowed;
  struct sched_ext_entity scx;
  char comm[16];
  /* pysched's: the task viewed, and the mask cpus_ptr points to */
  psTask *ps_task;
  struct cpumask ps_cpus;
};

struct scx_init_task_args {
  bool fork;
};
struct scx_exit_task_args {
  bool cancelled;
};
struct scx_exit_info {
  int kind;
  s64 exit_code;
  const char *reason;
  unsigned long *bt;
  u32 bt_len;
  char *msg;
  char *dump;
};

/* user_exit_info.h */
#define UEI_REASON_LEN 128
#define UEI_MSG_LEN 1024
struct user_exit_info {
  int kind;
  s64 exit_code;
  char reason[UEI_REASON_LEN];
  char msg[UEI_MSG_LEN];
};
#define UEI_DEFINE(name) static __thread struct user_exit_info name
#define UEI_RECORD(name, ei)                                                  \
  do {                                                                        \
    snprintf((name).reason, sizeof (name).reason, "%s", (ei)->reason);      \
    snprintf((name).msg, sizeof (name).msg, "%s", (ei)->msg);                \
    (name).exit_code = (ei)->exit_code;                                       \
    (name).kind = (ei)->kind;                                                 \
  } while (0)

/* The simulator an op runs for (set by the adapters, read by the kfuncs). */
typedef struct ps_scx_ctx {
  const psModel *m;
  psData *d;
} ps_scx_ctx;
static __thread ps_scx_ctx ps_scx_cur_;
/* The const volatile tunables, which pysched.build_policy turns into
 * thread-local globals loaded from the simulator's parameters when an op
 * starts (pysched/policy/scx_tunables.py defines PS_SCX_NTUNABLES, their
 * table and their loader). */
#ifndef PS_SCX_NTUNABLES
#define PS_SCX_NTUNABLES 0
#endif
#define PS_SCX_TUNABLE static __thread
#if PS_SCX_NTUNABLES
static const psParamInfo ps_scx_tunable_rows_[PS_SCX_NTUNABLES];
static void ps_scx_load_tunables_(const psModel *m);
#define PS_SCX_LOAD_TUNABLES(m_) ps_scx_load_tunables_(m_)
#else
#define PS_SCX_LOAD_TUNABLES(m_) ((void)0)
#endif

#define PS_SCX_ENTER(m_, d_)          \
  ps_scx_ctx ps_saved_ = ps_scx_cur_; \
  ps_scx_cur_.m = (m_);               \
  ps_scx_cur_.d = (d_);               \
  PS_SCX_LOAD_TUNABLES(m_)
#define PS_SCX_LEAVE() (ps_scx_cur_ = ps_saved_)

static inline u64 *ps_scx_u64_(psTask *t, size_t off) { return (u64 *)(t->priv + off); }

static inline void ps_scx_view_(struct task_struct *v, psTask *t) {
  v->ps_task = t;
  v->pid = t->pid;
  v->tgid = t->pid;   /* every task leads its own thread group */
  v->on_rq = t->on_rq != 0;
  v->prio = v->normal_prio = t->prio;
  v->static_prio = t->static_prio;
  memcpy(v->ps_cpus.bits, t->cpus_allowed.w, sizeof v->ps_cpus.bits);
  v->cpus_ptr = &v->ps_cpus;
  v->nr_cpus_allowed = ps_cpumask_weight(&t->cpus_allowed);
  v->scx.slice = *ps_scx_u64_(t, PS_EXT_TASK_SLICE_OFF);
  v->scx.dsq_vtime = *ps_scx_u64_(t, PS_EXT_TASK_DSQ_VTIME_OFF);
  memcpy(&v->scx.weight, t->priv + PS_EXT_TASK_WEIGHT_OFF, sizeof v->scx.weight);
  s32 flags;
  memcpy(&flags, t->priv + PS_EXT_TASK_FLAGS_OFF, sizeof flags);
  v->scx.flags = (u32)flags & SCX_TASK_QUEUED;
  _Static_assert(sizeof t->name >= sizeof v->comm, "a task's name holds a comm");
  memcpy(v->comm, t->name, sizeof v->comm - 1);
  v->comm[sizeof v->comm - 1] = 0;
}

/* the view's writable fields back into the class's task */
static inline void ps_scx_flush_(const struct task_struct *v) {
  *ps_scx_u64_(v->ps_task, PS_EXT_TASK_SLICE_OFF) = v->scx.slice;
  *ps_scx_u64_(v->ps_task, PS_EXT_TASK_DSQ_VTIME_OFF) = v->scx.dsq_vtime;
}

/* after a kfunc: what it changed */
static inline void ps_scx_reload_(struct task_struct *v) {
  v->scx.slice = *ps_scx_u64_(v->ps_task, PS_EXT_TASK_SLICE_OFF);
  v->scx.dsq_vtime = *ps_scx_u64_(v->ps_task, PS_EXT_TASK_DSQ_VTIME_OFF);
}

/* ---- the kfuncs (kernel/sched/ext.c, 6.12; the 6.13 names and the 6.12
 * ones of compat.bpf.h).  The class's functions are called as
 * (name)(...), which the macros of the same name leave alone. ---- */

static inline void ps_scx_dsq_insert_(struct task_struct *p, u64 dsq_id, u64 slice, u64 flags) {
  ps_scx_flush_(p);
  (scx_bpf_dsq_insert)(ps_scx_cur_.m, ps_scx_cur_.d, p->ps_task, dsq_id, slice, flags);
  ps_scx_reload_(p);
}
static inline void ps_scx_dsq_insert_vtime_(struct task_struct *p, u64 dsq_id, u64 slice,
                                            u64 vtime, u64 flags) {
  ps_scx_flush_(p);
  (scx_bpf_dsq_insert_vtime)(ps_scx_cur_.m, ps_scx_cur_.d, p->ps_task, dsq_id, slice, vtime,
                             flags);
  ps_scx_reload_(p);
}
/* the cpumask kfuncs and helpers over struct cpumask: a psCpuMask's words,
 * copied into one for the core's helpers (cpumask.h) */
static inline psCpuMask ps_scx_mask_(const struct cpumask *mask) {
  psCpuMask cm;
  memcpy(cm.w, mask->bits, sizeof cm.w);
  return cm;
}
static inline s32 ps_scx_pick_idle_cpu_(const struct cpumask *mask, u64 flags) {
  psCpuMask cm = ps_scx_mask_(mask);
  return (scx_bpf_pick_idle_cpu)(ps_scx_cur_.m, ps_scx_cur_.d, &cm, flags);
}
static inline u32 ps_scx_cpumask_weight_(const struct cpumask *mask) {
  psCpuMask cm = ps_scx_mask_(mask);
  return (u32)ps_cpumask_weight(&cm);
}
/* the first CPU of mask, nr_cpu_ids when it has none */
static inline u32 ps_scx_cpumask_first_(const struct cpumask *mask) {
  psCpuMask cm = ps_scx_mask_(mask);
  int c = ps_cpumask_first(&cm);
  return (u32)(c < PS_MAX_CPUS ? c : ps_scx_cur_.m->ncpu);
}

static inline s32 ps_scx_select_cpu_dfl_(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
                                         bool *is_idle) {
  int idle = 0;
  ps_scx_flush_(p);
  s32 cpu = (scx_bpf_select_cpu_dfl)(ps_scx_cur_.m, ps_scx_cur_.d, p->ps_task, prev_cpu,
                                     wake_flags, &idle);
  ps_scx_reload_(p);
  *is_idle = idle;
  return cpu;
}
static inline void ps_scx_error_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void ps_scx_error_(const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  (scx_bpf_error)(ps_scx_cur_.m, ps_scx_cur_.d, msg);
}

#define scx_bpf_dsq_insert(p, dsq_id, slice, enq_flags) \
  ps_scx_dsq_insert_((p), (dsq_id), (slice), (enq_flags))
#define scx_bpf_dsq_insert_vtime(p, dsq_id, slice, vtime, enq_flags) \
  ps_scx_dsq_insert_vtime_((p), (dsq_id), (slice), (vtime), (enq_flags))
#define scx_bpf_dispatch scx_bpf_dsq_insert
#define scx_bpf_dispatch_vtime scx_bpf_dsq_insert_vtime
#define scx_bpf_dsq_move_to_local(dsq_id) \
  ((bool)(scx_bpf_dsq_move_to_local)(ps_scx_cur_.m, ps_scx_cur_.d, (dsq_id)))
#define scx_bpf_consume scx_bpf_dsq_move_to_local
#define scx_bpf_create_dsq(dsq_id, node) \
  ((scx_bpf_create_dsq)(ps_scx_cur_.m, ps_scx_cur_.d, (dsq_id), (node)))
#define scx_bpf_kick_cpu(cpu, flags) \
  ((scx_bpf_kick_cpu)(ps_scx_cur_.m, ps_scx_cur_.d, (cpu), (flags)))
#define scx_bpf_dsq_nr_queued(dsq_id) \
  ((scx_bpf_dsq_nr_queued)(ps_scx_cur_.m, ps_scx_cur_.d, (dsq_id)))
#define scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, is_idle) \
  ps_scx_select_cpu_dfl_((p), (prev_cpu), (wake_flags), (is_idle))
#define scx_bpf_pick_idle_cpu(cpus_allowed, flags) ps_scx_pick_idle_cpu_((cpus_allowed), (flags))
#define scx_bpf_test_and_clear_cpu_idle(cpu) \
  ((bool)(scx_bpf_test_and_clear_cpu_idle)(ps_scx_cur_.m, ps_scx_cur_.d, (cpu)))
#define scx_bpf_now() ((u64)(scx_bpf_now)(ps_scx_cur_.m, ps_scx_cur_.d))
#define bpf_ktime_get_ns() ((u64)(scx_bpf_now)(ps_scx_cur_.m, ps_scx_cur_.d))
#define scx_bpf_error(fmt, ...) ps_scx_error_(fmt, ##__VA_ARGS__)
#define scx_bpf_nr_cpu_ids() ((u32)ps_scx_cur_.m->ncpu)
#define scx_bpf_task_cpu(p) ((s32)(p)->ps_task->cpu)
#define bpf_get_smp_processor_id() ((u32)ps_ext_this_cpu(ps_scx_cur_.m, ps_scx_cur_.d))
#define bpf_cpumask_test_cpu(cpu, mask) \
  ((u32)(cpu) < PS_MAX_CPUS && ((mask)->bits[(u32)(cpu) / 64] >> ((u32)(cpu) % 64) & 1))
#define bpf_cpumask_weight(mask) ((u32)ps_scx_cpumask_weight_(mask))
#define bpf_cpumask_first(mask) ps_scx_cpumask_first_(mask)

/* ---- loops (bpf_helpers.h's bpf_for, bpf_repeat, bpf_for_each): their
 * bounds are evaluated once, as the kernel's numeric iterator takes them ---- */
#define bpf_for(i, start, end) \
  for (int ps_end_ = (end), ps_once_ = ((i) = (start), 0); (void)ps_once_, (i) < ps_end_; (i)++)
#define bpf_repeat(n) for (int ps_n_ = (n), ps_k_ = 0; ps_k_ < ps_n_; ps_k_++)
/* libbpf's: the iterator ___it on the stack, destroyed as the loop ends;
 * only scx_dsq is defined, another type is the compiler's error naming
 * its bpf_iter_<type>_new */
#define bpf_for_each(type, cur, args...)                                                \
  for (struct bpf_iter_##type ___it __attribute__((cleanup(bpf_iter_##type##_destroy))), \
       *ps_it_ __attribute__((unused)) = (bpf_iter_##type##_new(&___it, ##args), NULL);  \
       ((cur) = bpf_iter_##type##_next(&___it));)
#define BPF_FOR_EACH_ITER (&___it)

/* a DSQ walk (ext_iter.c) and the view of the task it is at */
struct bpf_iter_scx_dsq {
  psExtDsqIter k;
  struct task_struct view;
  int viewing;
};

static inline int bpf_iter_scx_dsq_new(struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags) {
  it->viewing = 0;
  return ps_ext_dsq_iter_new(ps_scx_cur_.m, ps_scx_cur_.d, &it->k, dsq_id, flags);
}
static inline struct task_struct *bpf_iter_scx_dsq_next(struct bpf_iter_scx_dsq *it) {
  if (it->viewing) ps_scx_flush_(&it->view);
  psTask *t = ps_ext_dsq_iter_next(ps_scx_cur_.m, ps_scx_cur_.d, &it->k);
  it->viewing = t != NULL;
  if (!t) return NULL;
  ps_scx_view_(&it->view, t);
  return &it->view;
}
static inline void bpf_iter_scx_dsq_destroy(struct bpf_iter_scx_dsq *it) {
  if (it->viewing) ps_scx_flush_(&it->view);
  it->viewing = 0;
}
static inline bool ps_scx_dsq_move_(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
                                    u64 flags) {
  ps_scx_flush_(p);
  int r = (scx_bpf_dsq_move)(ps_scx_cur_.m, ps_scx_cur_.d, &it->k, p->ps_task, dsq_id, flags);
  ps_scx_reload_(p);
  return r;
}
#define scx_bpf_dsq_move(it, p, dsq_id, enq_flags) ps_scx_dsq_move_((it), (p), (dsq_id), (enq_flags))
#define scx_bpf_dsq_move_vtime(it, p, dsq_id, enq_flags) \
  ps_scx_dsq_move_((it), (p), (dsq_id), (enq_flags) | SCX_ENQ_DSQ_PRIQ)
#define scx_bpf_dsq_move_set_slice(it, s) \
  ((it)->k.slice = (s), (it)->k.flags |= SCX_DSQ_ITER_HAS_SLICE_, (void)0)
#define scx_bpf_dsq_move_set_vtime(it, v) \
  ((it)->k.vtime = (v), (it)->k.flags |= SCX_DSQ_ITER_HAS_VTIME_, (void)0)
#define scx_bpf_dispatch_from_dsq scx_bpf_dsq_move
#define scx_bpf_dispatch_vtime_from_dsq scx_bpf_dsq_move_vtime
#define scx_bpf_dispatch_from_dsq_set_slice scx_bpf_dsq_move_set_slice
#define scx_bpf_dispatch_from_dsq_set_vtime scx_bpf_dsq_move_set_vtime

#include "scx_maps.h"

/* ---- the ops struct and its adapters ---- */

/* include/linux/sched/ext.h's struct sched_ext_ops: the ops as the .bpf.c
 * casts them, (void *).  Those the class does not call (core_sched_before,
 * cpu_acquire, cpu_release, dump*, cgroup_*, cpu_online, cpu_offline) are
 * left out: a scheduler that defines one fails to build, the compiler
 * saying the struct has no member named so. */
struct sched_ext_ops {
  void *select_cpu, *enqueue, *dequeue, *dispatch, *tick, *runnable, *running, *stopping,
      *quiescent, *yield, *set_weight, *set_cpumask, *update_idle, *init_task, *exit_task,
      *enable, *disable, *init, *exit;
  u32 dispatch_max_batch;
  u64 flags;
  u32 timeout_ms;
  u32 exit_dump_len;
  u64 hotplug_seq;
  char name[128];
};

/* the ops struct SCX_OPS_DEFINE defined (set once, when the library loads) */
static const struct sched_ext_ops *ps_scx_user_;
#define PS_OP(field, ret, ...) ((ret(*)(__VA_ARGS__))ps_scx_user_->field)

static s32 ps_scx_a_select_cpu(const psModel *m, psData *d, psTask *t, s32 prev_cpu, u64 wf) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  ps_scx_view_(&p, t);
  s32 r = PS_OP(select_cpu, s32, struct task_struct *, s32, u64)(&p, prev_cpu, wf);
  ps_scx_flush_(&p);
  PS_SCX_LEAVE();
  return r;
}

/* an op of one task and an argument */
#define PS_SCX_TASK_OP(op, T)                                                \
  static void ps_scx_a_##op(const psModel *m, psData *d, psTask *t, T arg) { \
    PS_SCX_ENTER(m, d);                                                      \
    struct task_struct p;                                                    \
    ps_scx_view_(&p, t);                                                     \
    PS_OP(op, void, struct task_struct *, T)(&p, arg);                       \
    ps_scx_flush_(&p);                                                       \
    PS_SCX_LEAVE();                                                          \
  }
/* an op of one task */
#define PS_SCX_TASK_OP0(op)                                         \
  static void ps_scx_a_##op(const psModel *m, psData *d, psTask *t) { \
    PS_SCX_ENTER(m, d);                                             \
    struct task_struct p;                                           \
    ps_scx_view_(&p, t);                                            \
    PS_OP(op, void, struct task_struct *)(&p);                      \
    ps_scx_flush_(&p);                                              \
    PS_SCX_LEAVE();                                                 \
  }
PS_SCX_TASK_OP(enqueue, u64)
PS_SCX_TASK_OP(dequeue, u64)
PS_SCX_TASK_OP(runnable, u64)
PS_SCX_TASK_OP(quiescent, u64)
PS_SCX_TASK_OP(set_weight, u32)
PS_SCX_TASK_OP0(tick)
PS_SCX_TASK_OP0(running)
PS_SCX_TASK_OP0(enable)
PS_SCX_TASK_OP0(disable)

static void ps_scx_a_stopping(const psModel *m, psData *d, psTask *t, int runnable) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  ps_scx_view_(&p, t);
  PS_OP(stopping, void, struct task_struct *, bool)(&p, runnable != 0);
  ps_scx_flush_(&p);
  PS_SCX_LEAVE();
}

static void ps_scx_a_dispatch(const psModel *m, psData *d, s32 cpu, psTask *prev) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  if (prev) ps_scx_view_(&p, prev);
  PS_OP(dispatch, void, s32, struct task_struct *)(cpu, prev ? &p : NULL);
  if (prev) ps_scx_flush_(&p);
  PS_SCX_LEAVE();
}

static int ps_scx_a_yield(const psModel *m, psData *d, psTask *from, psTask *to) {
  PS_SCX_ENTER(m, d);
  struct task_struct f, t;
  ps_scx_view_(&f, from);
  if (to) ps_scx_view_(&t, to);
  bool r = PS_OP(yield, bool, struct task_struct *, struct task_struct *)(&f, to ? &t : NULL);
  ps_scx_flush_(&f);
  if (to) ps_scx_flush_(&t);
  PS_SCX_LEAVE();
  return r;
}

static void ps_scx_a_set_cpumask(const psModel *m, psData *d, psTask *t, const psCpuMask *mask) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  ps_scx_view_(&p, t);
  struct cpumask cm;
  memcpy(cm.bits, mask->w, sizeof cm.bits);
  PS_OP(set_cpumask, void, struct task_struct *, const struct cpumask *)(&p, &cm);
  ps_scx_flush_(&p);
  PS_SCX_LEAVE();
}

static void ps_scx_a_update_idle(const psModel *m, psData *d, s32 cpu, int idle) {
  PS_SCX_ENTER(m, d);
  PS_OP(update_idle, void, s32, bool)(cpu, idle != 0);
  PS_SCX_LEAVE();
}

static s32 ps_scx_a_init_task(const psModel *m, psData *d, psTask *t, int fork) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  ps_scx_view_(&p, t);
  struct scx_init_task_args args = {fork != 0};
  s32 r = PS_OP(init_task, s32, struct task_struct *, struct scx_init_task_args *)(&p, &args);
  ps_scx_flush_(&p);
  PS_SCX_LEAVE();
  return r;
}

static void ps_scx_a_exit_task(const psModel *m, psData *d, psTask *t, int cancelled) {
  PS_SCX_ENTER(m, d);
  struct task_struct p;
  ps_scx_view_(&p, t);
  struct scx_exit_task_args args = {cancelled != 0};
  PS_OP(exit_task, void, struct task_struct *, struct scx_exit_task_args *)(&p, &args);
  ps_scx_flush_(&p);
  PS_SCX_LEAVE();
}

static s32 ps_scx_a_init(const psModel *m, psData *d) {
  PS_SCX_ENTER(m, d);
  s32 r = PS_OP(init, s32, void)();
  PS_SCX_LEAVE();
  return r;
}

static void ps_scx_a_exit(const psModel *m, psData *d, s32 kind, const char *reason,
                          const char *msg) {
  PS_SCX_ENTER(m, d);
  struct scx_exit_info ei = {kind, 0, reason, NULL, 0, (char *)msg, (char *)""};
  PS_OP(exit, void, struct scx_exit_info *)(&ei);
  PS_SCX_LEAVE();
}

/* What SCX_OPS_DEFINE makes: the class's ops, the policy and its preset. */
static psExtOps ps_scx_ops_;
static psExtPolicy ps_scx_policy_;
static psPreset ps_scx_preset_;
static char ps_scx_doc_[192];
/* EEVDF's parameters (the fallback's), then the tunables */
static psParamInfo ps_scx_params_[PS_MAX_PARAMS];
/* what the class cannot run in the ops' settings, or NULL */
static const char *ps_scx_unsupported_;

static int ps_scx_configure_(psModel *m, char *err, int errlen) {
  if (ps_scx_unsupported_) {
    snprintf(err, errlen, "sched_ext scheduler %s sets %s, which pysched's sched_ext class "
             "does not take", ps_scx_user_->name, ps_scx_unsupported_);
    return -1;
  }
  return ps_ext_class.pol.hooks.configure(m, err, errlen);
}

/* the class's init_rq, then the maps' areas; after the last CPU's, the
 * scheduler's ops.init (scx_ops_enable), once for the state */
#if PS_SCX_NGLOBALS
static void ps_scx_init_globals_(void);
#endif
static void ps_scx_init_rq_(const psModel *m, psData *d, int cpu) {
  ps_ext_class.pol.hooks.init_rq(m, d, cpu);
  ps_scx_maps_init_(m, d, cpu);
  if (cpu != m->ncpu - 1) return;
#if PS_SCX_NGLOBALS
  PS_SCX_ENTER(m, d);
  ps_scx_init_globals_();
  PS_SCX_LEAVE();
#endif
  ps_ext_enable(m, d);
}

static void ps_scx_setup_(const struct sched_ext_ops *u) {
  ps_scx_user_ = u;
  psExtOps *o = &ps_scx_ops_;
#define PS_SCX_SET(op) o->op = u->op ? ps_scx_a_##op : NULL
  PS_SCX_SET(select_cpu);
  PS_SCX_SET(enqueue);
  PS_SCX_SET(dequeue);
  PS_SCX_SET(dispatch);
  PS_SCX_SET(tick);
  PS_SCX_SET(runnable);
  PS_SCX_SET(running);
  PS_SCX_SET(stopping);
  PS_SCX_SET(quiescent);
  PS_SCX_SET(yield);
  PS_SCX_SET(set_weight);
  PS_SCX_SET(set_cpumask);
  PS_SCX_SET(update_idle);
  PS_SCX_SET(init_task);
  PS_SCX_SET(exit_task);
  PS_SCX_SET(enable);
  PS_SCX_SET(disable);
  PS_SCX_SET(init);
  PS_SCX_SET(exit);
#undef PS_SCX_SET
  o->dispatch_max_batch = u->dispatch_max_batch;
  o->flags = u->flags;
  o->timeout_ms = u->timeout_ms;
  if (u->flags & ~(u64)(SCX_OPS_KEEP_BUILTIN_IDLE | SCX_OPS_ENQ_LAST))
    ps_scx_unsupported_ = "ops.flags other than SCX_OPS_KEEP_BUILTIN_IDLE and SCX_OPS_ENQ_LAST";
  else if (u->dispatch_max_batch > EXT_MAX_BATCH_PUBLIC ||
           u->timeout_ms > SCX_WATCHDOG_MAX_TIMEOUT_MS)
    ps_scx_unsupported_ = "a dispatch_max_batch over 256 or a timeout_ms over 30000";

  /* the class's tables and hooks, EEVDF's parameters (the fallback's), as
   * for a Python scheduler (csrc/binding/py_policy.c) */
  psExtPolicy *x = &ps_scx_policy_;
  *x = ps_ext_class;
  psPolicy *pol = &x->pol;
  pol->name = u->name;
  snprintf(ps_scx_doc_, sizeof ps_scx_doc_, "sched_ext scheduler %s (C dialect)", u->name);
  pol->doc = ps_scx_doc_;
  int nfb = ps_policy_eevdf.nparams;
  memcpy(ps_scx_params_, ps_policy_eevdf.params, (size_t)nfb * sizeof ps_scx_params_[0]);
#if PS_SCX_NTUNABLES
  if (nfb + PS_SCX_NTUNABLES > PS_MAX_PARAMS)
    ps_scx_unsupported_ = "more const volatile tunables than parameters fit";
  else
    memcpy(ps_scx_params_ + nfb, ps_scx_tunable_rows_, sizeof ps_scx_tunable_rows_);
  for (int k = 0; k < PS_SCX_NTUNABLES; k++)
    for (int j = 0; j < nfb; j++)
      if (!strcmp(ps_scx_tunable_rows_[k].name, ps_policy_eevdf.params[j].name))
        ps_scx_unsupported_ = "a const volatile tunable named as a parameter of EEVDF's";
  pol->nparams = nfb + (nfb + PS_SCX_NTUNABLES > PS_MAX_PARAMS ? 0 : PS_SCX_NTUNABLES);
#else
  pol->nparams = nfb;
#endif
  pol->params = ps_scx_params_;
  pol->derived_fields = ps_policy_eevdf.derived_fields;
  pol->nderived_fields = ps_policy_eevdf.nderived_fields;
  pol->family = ps_policy_eevdf.family;
  pol->hooks.configure = ps_scx_configure_;
  pol->hooks.init_rq = ps_scx_init_rq_;
  ps_scx_area_off_ = (ps_ext_class.pol.rq_size + 63) & ~(size_t)63;
  pol->rq_size = ps_scx_area_off_ + sizeof(ps_scx_area);
  ps_scx_preset_.name = u->name;
  ps_scx_preset_.policy = pol;
  ps_scx_preset_.doc = ps_scx_doc_;
  pol->presets = &ps_scx_preset_;
  pol->npresets = 1;
  x->ops = o;
}

/* tools/sched_ext/include/scx/compat.bpf.h's SCX_OPS_DEFINE: the ops
 * struct, and from it the policy library (set up when it is loaded, before
 * pysched reads its entry point). */
#define SCX_OPS_DEFINE(__name, ...)                                              \
  static struct sched_ext_ops __name = {__VA_ARGS__};                            \
  __attribute__((constructor)) static void ps_scx_load_##__name(void) {          \
    ps_scx_setup_(&__name);                                                      \
  }                                                                              \
  PS_POLICY_LIBRARY(&ps_scx_policy_.pol)

#endif

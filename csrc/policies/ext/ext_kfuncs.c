/* The kfuncs of the sched_ext class (kernel/sched/ext.c, 6.12.y:
 * scx_bpf_dispatch[_vtime] -- named scx_bpf_dsq_insert[_vtime] from 6.13 --,
 * scx_bpf_consume -- scx_bpf_dsq_move_to_local --, scx_bpf_create_dsq,
 * scx_bpf_kick_cpu, scx_bpf_dsq_nr_queued, the built-in idle tracking
 * (scx_select_cpu_dfl, scx_pick_idle_cpu, test_and_clear_cpu_idle,
 * __scx_update_idle), and the end of a scheduler on an error
 * (scx_ops_exit_kind, scx_ops_disable_workfn, scx_dump_state).
 *
 * Checks the verifier or the kernel makes later are made here at once,
 * where the op that is wrong is still running, so that an error names it:
 * a kfunc called from an op that may not call it, a DSQ that does not
 * exist, a local DSQ outside the task's affinity. */
#include "ext.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const ext_op_names[EXT_NOPS] = {
    "select_cpu", "enqueue", "dequeue", "dispatch", "tick", "runnable", "running", "stopping",
    "quiescent", "yield", "set_weight", "set_cpumask", "update_idle", "init_task", "exit_task",
    "enable", "disable", "init", "exit"};

static const char *exit_reason(int kind) {
  switch (kind) {
    case SCX_EXIT_ERROR_STALL: return "runnable task stall";
    case SCX_EXIT_ERROR_BPF: return "scx_bpf_error";
    default: return "runtime error";
  }
}

/* scx_dump_state's gist: each CPU's current task and local DSQ, and every
 * runnable task with how long it has waited, its DSQ and slice */
static void dump_state(const psModel *m, psData *d) {
  ext_shared *s = XS(m, d);
  char *b = s->dump;
  size_t n = sizeof s->dump, at = 0;
#define PUT(...)                                                        \
  do {                                                                  \
    if (at < n) at += (size_t)snprintf(b + at, n - at, __VA_ARGS__);    \
  } while (0)
  PUT("%s (%s) at t=%lld ns, jiffies=%llu\n", exit_reason(s->exit_kind), s->exit_msg,
      (long long)d->now_ns, (unsigned long long)d->jiffies);
  for (int cpu = 0; cpu < m->ncpu; cpu++) {
    const ext_rq *rq = XRQ(m, d, cpu);
    const psTask *curr = ps_curr(d, cpu);
    PUT("CPU %d: nr_run=%d local=%d curr=%s[%d]\n", cpu, rq->nr_running, rq->local.nr,
        curr->is_idle ? "swapper" : curr->name, curr->pid);
    for (int32_t i = m->ncpu; i < d->ntask; i++) {
      const psTask *p = &d->task[i];
      const ext_task *x = XTc(p);
      if (!p->pid || p->cpu != cpu || !(x->flags & EXT_TASK_QUEUED) || p == curr) continue;
      PUT("  %s[%d] %+lldms ops_state=%d dsq_id=0x%llx dsq_vtime=%llu slice=%llu weight=%u\n",
          p->name, p->pid,
          (long long)(((int64_t)x->runnable_at - (int64_t)d->jiffies) * 1000 / m->hz),
          x->ops_state, (unsigned long long)x->dsq_id, (unsigned long long)x->dsq_vtime,
          (unsigned long long)x->slice, x->weight);
    }
  }
#undef PUT
}

/* scx_ops_exit_kind, then scx_ops_disable_workfn: the first error ends
 * the scheduler; its ops are no longer called, ops.exit is told, and every
 * task goes to the fair class (ext_fallback.c). */
static const char *const problem_names[] = {"error", "affinity", "double insertion", "stall",
                                             "undispatched"};

void ext_error(const psModel *m, psData *d, int kind, const psTask *p, const char *fmt, ...) {
  ext_shared *s = XS(m, d);
  if (!s->enabled) return;
  int problem = kind >> EXT_PROBLEM_SHIFT;
  kind &= (1 << EXT_PROBLEM_SHIFT) - 1;
  const psExtOps *ops = XOPS(m, d);
  char msg[EXT_MSG_LEN - 64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (s->op >= 0)
    snprintf(s->exit_msg, sizeof s->exit_msg, "ops.%s at t=%lld ns: %s", ext_op_names[s->op],
             (long long)d->now_ns, msg);
  else
    snprintf(s->exit_msg, sizeof s->exit_msg, "at t=%lld ns: %s", (long long)d->now_ns, msg);
  s->exit_kind = kind;
  s->exit_ns = d->now_ns;
  s->exit_op = s->op;
  s->exit_pid = p ? p->pid : 0;
  s->exit_held_ns = -1;
  s->exit_dsq_id = SCX_DSQ_INVALID;
  if (p && !p->is_idle) {
    const ext_task *x = XTc(p);
    s->exit_dsq_id = x->dsq_id;
    if (x->ops_state == EXT_OPSS_QUEUED && x->dsq_id == SCX_DSQ_INVALID) s->exit_held_ns = x->enq_ns;
  }
  if (kind == SCX_EXIT_ERROR_STALL) problem = s->exit_held_ns >= 0 ? EXT_UNDISPATCHED_ : EXT_STALL_;
  s->exit_problem = problem;
  dump_state(m, d);
  s->enabled = 0;
  if (ops && ops->exit) {
    int32_t op = s->op;
    s->op = EXT_OP_EXIT;
    ops->exit(m, d, kind, exit_reason(kind), s->exit_msg);
    s->op = op;
  }
}

void scx_bpf_error(const psModel *m, psData *d, const char *msg) {
  ext_error(m, d, SCX_EXIT_ERROR_BPF, NULL, "%s", msg);
}

/* ---- built-in idle tracking ---- */

static int builtin_idle(const psModel *m) {
  const psExtOps *ops = XOPS_ANY(m);
  return !ops || !ops->update_idle || (ops->flags & SCX_OPS_KEEP_BUILTIN_IDLE);
}

static int idle_ok(const psModel *m, psData *d) {
  if (builtin_idle(m)) return 1;
  ext_error(m, d, SCX_EXIT_ERROR, NULL, "built-in idle tracking is disabled");
  return 0;
}

/* __scx_update_idle; notify: a real transition (put_prev_task_idle,
 * set_next_task_idle), else pick_task_idle's refresh */
void ext_update_idle(const psModel *m, psData *d, int cpu, int idle, int notify) {
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->update_idle && notify) {
    ext_shared *s = XS(m, d);
    int32_t op = s->op, tc = s->this_cpu;
    s->op = EXT_OP_UPDATE_IDLE;
    s->this_cpu = cpu;
    ops->update_idle(m, d, cpu, idle);
    s->op = op;
    s->this_cpu = tc;
  }
  if (builtin_idle(m) && (notify || ps_curr(d, cpu)->is_idle)) {
    if (idle)
      ps_cpu_set(&XS(m, d)->idle_mask, cpu);
    else
      ps_cpu_clear(&XS(m, d)->idle_mask, cpu);
  }
}

static int test_and_clear_idle(const psModel *m, psData *d, int cpu) {
  ext_shared *s = XS(m, d);
  int was = ps_cpu_test(&s->idle_mask, cpu);
  ps_cpu_clear(&s->idle_mask, cpu);
  return was;
}

/* scx_pick_idle_cpu with cpumask_any_and_distribute (lib/cpumask.c): the
 * first idle allowed CPU after the one this CPU's last call returned */
static int32_t pick_idle(const psModel *m, psData *d, const psCpuMask *allowed) {
  ext_shared *s = XS(m, d);
  int me = s->this_cpu >= 0 ? s->this_cpu : 0;
  ext_rq *rq = XRQ(m, d, me);
  for (;;) {
    /* the first candidate after distribute_prev, else the first from 0 */
    int from = rq->distribute_prev >= 0 && rq->distribute_prev < m->ncpu ? rq->distribute_prev + 1 : 0;
    int cpu = ps_cpumask_next_and(&s->idle_mask, allowed, from);
    if (cpu >= m->ncpu) cpu = ps_cpumask_next_and(&s->idle_mask, allowed, 0);
    if (cpu >= m->ncpu) return -16; /* -EBUSY */
    rq->distribute_prev = cpu;
    if (test_and_clear_idle(m, d, cpu)) return cpu;
  }
}

int32_t scx_bpf_pick_idle_cpu(const psModel *m, psData *d, const psCpuMask *cpus_allowed,
                              uint64_t flags) {
  (void)flags;
  if (!idle_ok(m, d)) return -16;
  return pick_idle(m, d, cpus_allowed);
}

int scx_bpf_test_and_clear_cpu_idle(const psModel *m, psData *d, int32_t cpu) {
  if (!idle_ok(m, d)) return 0;
  if (cpu < 0 || cpu >= m->ncpu) {
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "invalid CPU %d", cpu);
    return 0;
  }
  return test_and_clear_idle(m, d, cpu);
}

/* scx_select_cpu_dfl (no SMT): the waker's CPU for a sync wakeup when it
 * has nothing queued and some CPU is idle; prev_cpu if idle; any idle CPU */
int32_t scx_bpf_select_cpu_dfl(const psModel *m, psData *d, psTask *p, int32_t prev_cpu,
                               uint64_t wake_flags, int *is_idle) {
  *is_idle = 0;
  if (!idle_ok(m, d)) return prev_cpu;
  ext_shared *s = XS(m, d);
  if (prev_cpu < 0 || prev_cpu >= m->ncpu) {
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "invalid CPU %d", prev_cpu);
    return p->cpu;
  }
  int cpu = s->this_cpu;
  if ((wake_flags & SCX_WAKE_SYNC) && cpu >= 0 && ps_cpumask_any(&s->idle_mask) && !XRQ(m, d, cpu)->local.nr &&
      ext_allowed(p, cpu)) {
    *is_idle = 1;
    return cpu;
  }
  if (test_and_clear_idle(m, d, prev_cpu)) {
    *is_idle = 1;
    return prev_cpu;
  }
  cpu = pick_idle(m, d, &p->cpus_allowed);
  if (cpu >= 0) {
    *is_idle = 1;
    return cpu;
  }
  return prev_cpu;
}

/* ---- DSQs ---- */

int32_t scx_bpf_create_dsq(const psModel *m, psData *d, uint64_t dsq_id, int32_t node) {
  ext_shared *s = XS(m, d);
  if (node != 0 && node != -1) return -22;      /* -EINVAL: one node */
  if (dsq_id & SCX_DSQ_FLAG_BUILTIN) return -22; /* -EINVAL */
  if (ext_user_dsq(m, d, dsq_id)) return -17;    /* -EEXIST */
  if (s->nuser == EXT_MAX_USER_DSQS) return -12; /* -ENOMEM */
  ext_dsq_init(&s->user[s->nuser++], dsq_id);
  return 0;
}

int32_t scx_bpf_dsq_nr_queued(const psModel *m, psData *d, uint64_t dsq_id) {
  ext_shared *s = XS(m, d);
  if (dsq_id == SCX_DSQ_LOCAL) return XRQ(m, d, s->this_cpu >= 0 ? s->this_cpu : 0)->local.nr;
  if ((dsq_id & SCX_DSQ_LOCAL_ON) == SCX_DSQ_LOCAL_ON) {
    uint64_t c = dsq_id & SCX_DSQ_LOCAL_CPU_MASK;
    if (c < (uint64_t)m->ncpu) return XRQ(m, d, (int)c)->local.nr;
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "invalid CPU %lld", (long long)c);
    return -2;
  }
  /* the 6.12 global DSQ is not in dsq_hash: -ENOENT there; later kernels
   * answer it, and so does this class */
  if (dsq_id == SCX_DSQ_GLOBAL) return s->global.nr;
  ext_dsq *q = ext_user_dsq(m, d, dsq_id);
  return q ? q->nr : -2; /* -ENOENT */
}

/* The checks of scx_dispatch_preamble, and find_dsq_for_dispatch's and
 * task_can_run_on_remote_rq's made at once; 0 when the insertion may go on. */
static int insert_ok(const psModel *m, psData *d, psTask *p, uint64_t dsq_id, uint64_t enq_flags,
                     int vtime) {
  ext_shared *s = XS(m, d);
  if (!s->enabled) return 0;
  if (s->op != EXT_OP_SELECT_CPU && s->op != EXT_OP_ENQUEUE && s->op != EXT_OP_DISPATCH) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "scx_bpf_dsq_insert%s on %s[%d]: only ops.select_cpu, "
              "ops.enqueue and ops.dispatch may insert", vtime ? "_vtime" : "", p->name, p->pid);
    return 0;
  }
  if (enq_flags & SCX_ENQ_INTERNAL_MASK) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "invalid enq_flags 0x%llx for %s[%d]",
              (unsigned long long)enq_flags, p->name, p->pid);
    return 0;
  }
  if (dsq_id == SCX_DSQ_LOCAL || dsq_id == SCX_DSQ_GLOBAL) {
    if (vtime) {
      ext_error(m, d, SCX_EXIT_ERROR, p, "cannot use vtime ordering for built-in DSQs (%s[%d])",
                p->name, p->pid);
      return 0;
    }
    return 1;
  }
  if ((dsq_id & SCX_DSQ_LOCAL_ON) == SCX_DSQ_LOCAL_ON) {
    uint64_t c = dsq_id & SCX_DSQ_LOCAL_CPU_MASK;
    if (vtime || c >= (uint64_t)m->ncpu || !ext_allowed(p, (int)c)) {
      if (vtime)
        ext_error(m, d, SCX_EXIT_ERROR, p, "cannot use vtime ordering for built-in DSQs (%s[%d])",
                  p->name, p->pid);
      else if (c >= (uint64_t)m->ncpu)
        ext_error(m, d, SCX_EXIT_ERROR, p, "invalid CPU %lld in SCX_DSQ_LOCAL_ON dispatch verdict "
                  "for %s[%d]", (long long)c, p->name, p->pid);
      else
        ext_error(m, d, SCX_EXIT_ERROR | EXT_AFFINITY, p,
                  "SCX_DSQ_LOCAL[_ON] target CPU %d not allowed for %s[%d]",
                  (int)c, p->name, p->pid);
      return 0;
    }
    return 1;
  }
  if (!ext_user_dsq(m, d, dsq_id)) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "non-existent DSQ 0x%llx for %s[%d]",
              (unsigned long long)dsq_id, p->name, p->pid);
    return 0;
  }
  return 1;
}

/* scx_dispatch_commit: a verdict for the task on the enqueue path
 * (mark_direct_dispatch), or an entry of the dispatch buffer */
static void commit(const psModel *m, psData *d, psTask *p, uint64_t dsq_id, uint64_t enq_flags) {
  ext_shared *s = XS(m, d);
  int32_t i = ps_index(d, p);
  if (s->op != EXT_OP_DISPATCH) {
    if (s->ddsp_task == -2) {
      ext_error(m, d, SCX_EXIT_ERROR | EXT_TWICE, p, "%s[%d] already direct-dispatched", p->name,
                p->pid);
      return;
    }
    if (s->ddsp_task != i) {
      const psTask *t = s->ddsp_task >= 0 ? &d->task[s->ddsp_task] : p;
      ext_error(m, d, SCX_EXIT_ERROR, p, "scheduling for %s[%d] but trying to direct-dispatch %s[%d]",
                t->name, t->pid, p->name, p->pid);
      return;
    }
    s->ddsp_task = -2;
    XT(p)->ddsp_dsq_id = dsq_id;
    XT(p)->ddsp_enq_flags = enq_flags;
    return;
  }
  if (s->strict)
    for (int k = 0; k < s->dsp_cursor; k++)
      if (s->dsp_buf[k].task == i) {
        /* finish_dispatch would find the task no longer the scheduler's
         * and skip the second insertion silently */
        ext_error(m, d, SCX_EXIT_ERROR | EXT_TWICE, p, "%s[%d] inserted twice in one ops.dispatch", p->name,
                  p->pid);
        return;
      }
  const psExtOps *ops = XOPS_ANY(m);
  int max = ops->dispatch_max_batch ? (int)ops->dispatch_max_batch : SCX_DSP_DFL_MAX_BATCH;
  if (s->dsp_cursor >= max) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "dispatch buffer overflow (dispatch_max_batch=%d) at %s[%d]",
              max, p->name, p->pid);
    return;
  }
  s->dsp_buf[s->dsp_cursor++] = (ext_dsp_ent){.task = i, .dsq_id = dsq_id, .enq_flags = enq_flags};
}

void scx_bpf_dsq_insert(const psModel *m, psData *d, psTask *p, uint64_t dsq_id, uint64_t slice,
                        uint64_t enq_flags) {
  if (!insert_ok(m, d, p, dsq_id, enq_flags, 0)) return;
  XT(p)->slice = slice ? slice : XT(p)->slice ? XT(p)->slice : 1;
  commit(m, d, p, dsq_id, enq_flags);
}

void scx_bpf_dsq_insert_vtime(const psModel *m, psData *d, psTask *p, uint64_t dsq_id,
                              uint64_t slice, uint64_t vtime, uint64_t enq_flags) {
  if (!insert_ok(m, d, p, dsq_id, enq_flags, 1)) return;
  XT(p)->slice = slice ? slice : XT(p)->slice ? XT(p)->slice : 1;
  XT(p)->dsq_vtime = vtime;
  commit(m, d, p, dsq_id, enq_flags | SCX_ENQ_DSQ_PRIQ);
}

/* scx_bpf_consume: flush the buffer, then the first task of a user DSQ
 * that may run here into this CPU's local DSQ */
int scx_bpf_dsq_move_to_local(const psModel *m, psData *d, uint64_t dsq_id) {
  ext_shared *s = XS(m, d);
  if (!s->enabled) return 0;
  if (s->op != EXT_OP_DISPATCH || s->dsp_cpu < 0) {
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "scx_bpf_dsq_move_to_local: only ops.dispatch may move "
              "tasks to the local DSQ");
    return 0;
  }
  int cpu = s->dsp_cpu;
  ext_flush_dispatch_buf(m, d, cpu);
  ext_dsq *q = dsq_id == SCX_DSQ_GLOBAL ? &s->global : ext_user_dsq(m, d, dsq_id);
  if (!q) {
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "invalid DSQ ID 0x%016llx", (unsigned long long)dsq_id);
    return 0;
  }
  if (!ext_consume_dsq(m, d, cpu, q)) return 0;
  s->dsp_nr_tasks++;
  return 1;
}

/* scx_bpf_kick_cpu and kick_one_cpu, at once */
void scx_bpf_kick_cpu(const psModel *m, psData *d, int32_t cpu, uint64_t flags) {
  if (cpu < 0 || cpu >= m->ncpu) {
    ext_error(m, d, SCX_EXIT_ERROR, NULL, "invalid CPU %d", cpu);
    return;
  }
  psTask *curr = ps_curr(d, cpu);
  XRQ(m, d, cpu)->nr_kicks++;
  if (flags & SCX_KICK_IDLE) {
    if (flags & (SCX_KICK_PREEMPT | SCX_KICK_WAIT))
      ext_error(m, d, SCX_EXIT_ERROR, NULL, "PREEMPT/WAIT cannot be used with SCX_KICK_IDLE");
    if (curr->is_idle) ps_resched_cpu(d, cpu);
    return;
  }
  if ((flags & SCX_KICK_PREEMPT) && !curr->is_idle && !ext_rt(curr)) XT(curr)->slice = 0;
  ps_resched_cpu(d, cpu);
}

uint64_t scx_bpf_now(const psModel *m, const psData *d) {
  (void)m;
  return (uint64_t)d->now_ns;
}

int32_t ps_ext_this_cpu(const psModel *m, const psData *d) { return XS(m, d)->this_cpu; }

/* scx_ops_enable's ops.init, once for a state (a copy or a snapshot has
 * had it); 0 or its error */
int32_t ps_ext_enable(const psModel *m, psData *d) {
  ext_shared *s = XS(m, d);
  const psExtOps *ops = XOPS(m, d);
  if (s->inited || !ops) return 0;
  s->inited = 1;
  int32_t r = 0;
  if (ops->init) {
    s->op = EXT_OP_INIT;
    r = ops->init(m, d);
    s->op = -1;
    if (r) ext_error(m, d, SCX_EXIT_ERROR, NULL, "ops.init() failed (%d)", r);
  }
  return r;
}

void ps_ext_exit_info(const psModel *m, const psData *d, psExtExit *e) {
  const ext_shared *s = XS(m, d);
  e->kind = s->exit_kind;
  e->msg = s->exit_msg;
  e->dump = s->dump;
  e->op = s->exit_kind && s->exit_op >= 0 ? ext_op_names[s->exit_op] : NULL;
  e->pid = s->exit_kind ? s->exit_pid : 0;
  e->ns = s->exit_kind ? s->exit_ns : -1;
  e->held_ns = s->exit_kind ? s->exit_held_ns : -1;
  e->dsq_id = s->exit_kind ? s->exit_dsq_id : SCX_DSQ_INVALID;
  e->problem = s->exit_kind ? problem_names[s->exit_problem] : NULL;
}

void ps_ext_strict(const psModel *m, psData *d, uint32_t timeout_ms) {
  ext_shared *s = XS(m, d);
  s->strict = 1;
  s->strict_timeout_ms = timeout_ms;
  uint64_t next = d->jiffies + ext_timeout_jiffies(m, d) / 2;
  if (next < s->watchdog_next) s->watchdog_next = next;
}

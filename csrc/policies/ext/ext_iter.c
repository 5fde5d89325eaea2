/* DSQ iterators and the moves from them (kernel/sched/ext.c, 6.12:
 * bpf_iter_scx_dsq_new / _next / _destroy, scx_dispatch_from_dsq and
 * move_task_between_dsqs; the kfuncs scx_bpf_dispatch[_vtime]_from_dsq,
 * named scx_bpf_dsq_move[_vtime] from 6.13, and their _set_slice /
 * _set_vtime).
 *
 * The kernel keeps a cursor node in the DSQ's list, so that the walk goes
 * on wherever the task it returned has gone.  Here the walk remembers the
 * task it returned and the one after it then: the next step follows the
 * first of the two still queued where it was (same DSQ, same seq), and
 * ends when neither is -- a walk whose op moved both the last task and
 * the one after it away ends early, where the kernel's would go on. */
#include "ext.h"

static int in_place(const psData *d, const ext_dsq *q, int32_t i, uint32_t seq) {
  const ext_task *x = XTc(&d->task[i]);
  return x->dsq_id == q->id && x->dsq_seq == seq;
}

/* u32_before: a seq queued after the walk began */
static int after(uint32_t begun, uint32_t seq) { return (int32_t)(begun - seq) < 0; }

int32_t ps_ext_dsq_iter_new(const psModel *m, psData *d, psExtDsqIter *it, uint64_t dsq_id,
                            uint64_t flags) {
  *it = (psExtDsqIter){.dsq_id = dsq_id, .last = -2, .succ = -1};
  if (flags & ~SCX_DSQ_ITER_REV) return -22;  /* -EINVAL */
  const ext_dsq *q = ext_user_dsq(m, d, dsq_id);
  if (!q) return -2;                          /* -ENOENT: user DSQs only */
  it->flags = flags;
  it->seq = q->seq;
  it->valid = 1;
  return 0;
}

psTask *ps_ext_dsq_iter_next(const psModel *m, psData *d, psExtDsqIter *it) {
  if (!it->valid) return NULL;
  const ext_dsq *q = ext_user_dsq(m, d, it->dsq_id);
  int rev = (it->flags & SCX_DSQ_ITER_REV) != 0;
  int32_t i;
  if (it->last == -2)
    i = rev ? q->tail : q->head;
  else if (in_place(d, q, it->last, it->last_seq))
    i = rev ? XT(&d->task[it->last])->prev : XT(&d->task[it->last])->next;
  else if (it->succ >= 0 && in_place(d, q, it->succ, it->succ_seq))
    i = it->succ;
  else
    i = -1;
  while (i >= 0 && after(it->seq, XT(&d->task[i])->dsq_seq))
    i = rev ? XT(&d->task[i])->prev : XT(&d->task[i])->next;
  if (i < 0) {
    it->valid = 0;
    return NULL;
  }
  ext_task *x = XT(&d->task[i]);
  it->last = i;
  it->last_seq = x->dsq_seq;
  it->succ = rev ? x->prev : x->next;
  it->succ_seq = it->succ >= 0 ? XT(&d->task[it->succ])->dsq_seq : 0;
  return &d->task[i];
}

int scx_bpf_dsq_move(const psModel *m, psData *d, psExtDsqIter *it, psTask *p, uint64_t dsq_id,
                     uint64_t enq_flags) {
  ext_shared *s = XS(m, d);
  uint64_t flags = it->flags;
  it->flags &= ~(SCX_DSQ_ITER_HAS_SLICE_ | SCX_DSQ_ITER_HAS_VTIME_);
  if (!s->enabled) return 0;
  if (s->op != EXT_OP_DISPATCH) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "scx_bpf_dsq_move%s on %s[%d]: only ops.dispatch may move "
              "tasks between DSQs here (the kernel also lets BPF timers and syscall programs)",
              enq_flags & SCX_ENQ_DSQ_PRIQ ? "_vtime" : "", p->name, p->pid);
    return 0;
  }
  /* did the task leave the DSQ, or come back to it after the walk began? */
  ext_dsq *src = ext_user_dsq(m, d, it->dsq_id);
  if (!src || p->is_idle || XTc(p)->dsq_id != src->id || after(it->seq, XTc(p)->dsq_seq))
    return 0;
  int cpu;
  ext_dsq *dst = ext_find_dsq(m, d, dsq_id, p, &cpu);
  if (!s->enabled) return 0;
  if (flags & SCX_DSQ_ITER_HAS_VTIME_) XT(p)->dsq_vtime = it->vtime;
  if (flags & SCX_DSQ_ITER_HAS_SLICE_) XT(p)->slice = it->slice;
  ext_dsq_remove(d, src, ps_index(d, p));
  if (cpu >= 0)
    ext_dispatch_to_local(m, d, cpu, p, enq_flags);
  else
    ext_dispatch_enqueue(m, d, dst, p, enq_flags);
  return 1;
}

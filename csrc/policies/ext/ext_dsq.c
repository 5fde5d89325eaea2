/* Dispatch queues (kernel/sched/ext.c, 6.12: dispatch_enqueue,
 * task_unlink_from_dsq, find_user_dsq): lists of task indices linked
 * through ext_task.next/prev.  A vtime-ordered DSQ keeps its list in
 * dsq_vtime order, a task going after those of equal vtime (rb_add with
 * scx_dsq_priq_less, time_before64), so the list is what the kernel's
 * rbtree and list hold together. */
#include "ext.h"

void ext_dsq_init(ext_dsq *q, uint64_t id) {
  q->id = id;
  q->head = q->tail = -1;
  q->nr = 0;
  q->priq = 0;
}

static void link_before(psData *d, ext_dsq *q, int32_t i, int32_t before) {
  ext_task *x = XT(&d->task[i]);
  x->next = before;
  x->prev = before >= 0 ? XT(&d->task[before])->prev : q->tail;
  if (x->prev >= 0)
    XT(&d->task[x->prev])->next = i;
  else
    q->head = i;
  if (before >= 0)
    XT(&d->task[before])->prev = i;
  else
    q->tail = i;
}

void ext_dsq_add(psData *d, ext_dsq *q, int32_t i, uint64_t enq_flags) {
  ext_task *x = XT(&d->task[i]);
  int32_t before;
  if (enq_flags & SCX_ENQ_DSQ_PRIQ) {
    before = q->head;
    while (before >= 0 && (int64_t)(XT(&d->task[before])->dsq_vtime - x->dsq_vtime) <= 0)
      before = XT(&d->task[before])->next;
    x->flags |= EXT_TASK_ON_PRIQ;
    q->priq = 1;
  } else {
    before = enq_flags & (SCX_ENQ_HEAD | SCX_ENQ_PREEMPT) ? q->head : -1;
  }
  link_before(d, q, i, before);
  q->nr++;
  x->dsq_id = q->id;
  /* dispatch_enqueue: the order tasks are queued, for the iterators */
  x->dsq_seq = ++q->seq;
}

void ext_dsq_remove(psData *d, ext_dsq *q, int32_t i) {
  ext_task *x = XT(&d->task[i]);
  if (x->prev >= 0)
    XT(&d->task[x->prev])->next = x->next;
  else
    q->head = x->next;
  if (x->next >= 0)
    XT(&d->task[x->next])->prev = x->prev;
  else
    q->tail = x->prev;
  x->next = x->prev = -1;
  x->flags &= ~EXT_TASK_ON_PRIQ;
  x->dsq_id = SCX_DSQ_INVALID;
  if (--q->nr == 0) q->priq = 0;
}

ext_dsq *ext_user_dsq(const psModel *m, const psData *d, uint64_t id) {
  ext_shared *s = XS(m, d);
  for (int k = 0; k < s->nuser; k++)
    if (s->user[k].id == id) return &s->user[k];
  return NULL;
}

ext_dsq *ext_dsq_of(const psModel *m, psData *d, const psTask *p) {
  uint64_t id = XTc(p)->dsq_id;
  if (id == SCX_DSQ_INVALID) return NULL;
  if (id == SCX_DSQ_LOCAL) return &XRQ(m, d, p->cpu)->local;
  if (id == SCX_DSQ_GLOBAL) return &XS(m, d)->global;
  return ext_user_dsq(m, d, id);
}

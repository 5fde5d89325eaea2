/* The sched_ext class's invariants (the check hook, after every instant
 * with debug on): each DSQ's list is linked both ways, holds nr tasks,
 * each of them live, runnable in the class, with the DSQ's id as its
 * dsq_id (a local DSQ's tasks on its CPU), in dsq_vtime order on a
 * vtime-ordered DSQ; every task a DSQ holds is on the one its dsq_id
 * names.  Safe on a damaged state: indices are checked before use. */
#include "ext.h"

#include <stdio.h>

static int check_dsq(const psModel *m, const psData *d, const ext_dsq *q, int cpu, char *err,
                     int errlen, int *seen) {
  int n = 0;
  int32_t prev = -1;
  for (int32_t i = q->head; i >= 0; i = XTc(&d->task[i])->next) {
    if (i < m->ncpu || i >= d->ntask || ++n > q->nr) {
      snprintf(err, errlen, "DSQ 0x%llx: link to slot %d, or more than its nr=%d tasks",
               (unsigned long long)q->id, i, q->nr);
      return -1;
    }
    const psTask *p = &d->task[i];
    const ext_task *x = XTc(p);
    if (!p->pid || x->prev != prev || x->dsq_id != q->id || !(x->flags & EXT_TASK_QUEUED) ||
        (cpu >= 0 && p->cpu != cpu)) {
      snprintf(err, errlen, "DSQ 0x%llx: pid %d is not linked, queued or placed as it holds it",
               (unsigned long long)q->id, p->pid);
      return -1;
    }
    if (q->priq && prev >= 0 && (int64_t)(x->dsq_vtime - XTc(&d->task[prev])->dsq_vtime) < 0) {
      snprintf(err, errlen, "DSQ 0x%llx: pid %d is out of dsq_vtime order",
               (unsigned long long)q->id, p->pid);
      return -1;
    }
    prev = i;
  }
  if (n != q->nr || q->tail != prev) {
    snprintf(err, errlen, "DSQ 0x%llx: holds %d tasks, nr=%d", (unsigned long long)q->id, n,
             q->nr);
    return -1;
  }
  *seen += n;
  return 0;
}

int ext_check_dsqs(const psModel *m, const psData *d, char *err, int errlen) {
  const ext_shared *s = XS(m, d);
  int seen = 0, on = 0;
  if (s->nuser < 0 || s->nuser > EXT_MAX_USER_DSQS) {
    snprintf(err, errlen, "%d user DSQs: at most %d", s->nuser, EXT_MAX_USER_DSQS);
    return -1;
  }
  for (int cpu = 0; cpu < m->ncpu; cpu++)
    if (check_dsq(m, d, &XRQ(m, d, cpu)->local, cpu, err, errlen, &seen)) return -1;
  if (check_dsq(m, d, &s->global, -1, err, errlen, &seen)) return -1;
  for (int k = 0; k < s->nuser; k++)
    if (check_dsq(m, d, &s->user[k], -1, err, errlen, &seen)) return -1;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *p = &d->task[i];
    on += p->pid && !ext_rt(p) && XTc(p)->dsq_id != SCX_DSQ_INVALID;
  }
  if (on != seen) {
    snprintf(err, errlen, "%d tasks name a DSQ, the DSQs hold %d", on, seen);
    return -1;
  }
  return 0;
}

/* The fallback: when a scheduler ends on an error, the kernel's
 * scx_ops_disable_workfn (kernel/sched/ext.c, 6.12) moves every task back
 * to the fair class (__setscheduler_class, then check_class_changed's
 * switched_to_fair), which from 6.6 is EEVDF.  Here the class hands its
 * tasks to EEVDF's code (fair_hooks.c, policy_eevdf.c), whose runqueue
 * sits first in each CPU's area: each task becomes a fresh entity (weight
 * from its nice, no lag), queued on the CPU it is on as a class change
 * queues it (ENQUEUE_RESTORE | ENQUEUE_MOVE), each CPU's running task
 * first, as cfs_rq->curr; RT tasks join EEVDF's RT lists.  The class's
 * own state stays as the error left it (the dump, the DSQs' last counts);
 * its task fields then read the fair entity's bytes. */
#include "ext.h"

#include <string.h>

static void fresh_entity(psTask *p) {
  memset(p->priv, 0, sizeof p->priv);
  fair_se_init(p);
}

static int queued(const psTask *p, const psTask *woken, const psTask *sleeping) {
  return p == woken || (p->on_rq && p != sleeping);
}

void ext_switch_to_fair(const psModel *m, psData *d, const psTask *woken, const psTask *sleeping) {
  const fair_class *c = fair_class_of(m);
  ext_shared *s = XS(m, d);
  s->fair = 1;
  /* the DSQs are the class's no more */
  for (int cpu = 0; cpu < m->ncpu; cpu++) ext_dsq_init(&XRQ(m, d, cpu)->local, SCX_DSQ_LOCAL);
  ext_dsq_init(&s->global, SCX_DSQ_GLOBAL);
  for (int k = 0; k < s->nuser; k++) ext_dsq_init(&s->user[k], s->user[k].id);
  /* the running tasks first: each is its cfs_rq's curr before anything
   * else is queued there */
  for (int cpu = 0; cpu < m->ncpu; cpu++) {
    psTask *p = ps_curr(d, cpu);
    if (p->is_idle) continue;
    fresh_entity(p);
    if (!queued(p, woken, sleeping)) continue;
    SE(p)->exec_start = (uint64_t)d->now_ns;
    if (fair_rt(p)) {
      fair_rt_enqueue(m, d, p);
    } else {
      fair_enqueue_task(m, d, p, ENQUEUE_RESTORE | ENQUEUE_MOVE);
      c->set_next_entity(m, d, cpu, ps_index(d, p));  /* the root cfs_rq's: no groups here */
    }
  }
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    psTask *p = &d->task[i];
    if (p->pid && ps_curr(d, p->cpu) == p) continue;
    /* a free slot too (an exited task's): its bytes are EEVDF's from now,
     * which the invariants read, and a spawn into it starts afresh */
    fresh_entity(p);
    if (!p->pid || !queued(p, woken, sleeping)) continue;
    if (fair_rt(p))
      fair_rt_enqueue(m, d, p);
    else
      fair_enqueue_task(m, d, p, ENQUEUE_RESTORE | ENQUEUE_MOVE);
  }
  for (int cpu = 0; cpu < m->ncpu; cpu++) ps_resched_cpu(d, cpu);
}

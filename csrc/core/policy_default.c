/* The engine's defaults for the hooks a policy may leave NULL (policy.h),
 * so that a simple policy writes only what it decides, and the engine calls
 * every hook without testing it. */
#include <stdio.h>

#include "engine_internal.h"

static int default_configure(psModel *m, char *err, int errlen) { return 0; }

static void default_init_rq(const psModel *m, psData *d, int cpu) {}

static void default_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child) {
  child->cpu = parent->cpu;
  if (m->hooks.task_spawn(m, d, child)) ps_resched_cpu(d, child->cpu);
}

static void default_task_exit(const psModel *m, psData *d, psTask *p, psTask *parent) {}

static void default_put_prev(const psModel *m, psData *d, psTask *prev) {}

static void default_tick(const psModel *m, psData *d, int cpu) {}

static int64_t default_tick_batch(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  return 0;
}

static void default_yield(const psModel *m, psData *d, psTask *p) { ps_resched_cpu(d, p->cpu); }

static void default_set_nice(const psModel *m, psData *d, psTask *p, int nice) {}

static void default_set_scheduler(const psModel *m, psData *d, psTask *p, int policy,
                                  int rt_priority) {
  p->policy = policy;
  p->rt_priority = rt_priority;
}

/* A queued task leaves its runqueue and is activated on dest as if it woke
 * there; a sleeping one will wake there. */
static void default_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  if (!p->on_rq) {
    p->cpu = dest;
    return;
  }
  int src = p->cpu;
  m->hooks.deactivate(m, d, p);
  p->cpu = dest;
  ps_count_up(&p->nr_migrations);
  ps_log(m, d, PS_EVT_MIGRATE, dest, p, src, p->prio, 0);
  if (m->hooks.wakeup(m, d, p, NULL, 0)) ps_resched_cpu(d, dest);
}

const psColumn ps_default_queue_columns[2] = {{"prio", NULL}, {"pid", NULL}};

static int default_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  int n = 0;
  for (int32_t i = m->ncpu; i < d->ntask && n < max; i++) {
    const psTask *t = &d->task[i];
    if (!t->on_rq || t->cpu != cpu) continue;
    /* slots are reused: insert in pid order */
    int k = n++;
    for (; k > 0 && out[2 * (k - 1) + 1] > t->pid; k--) {
      out[2 * k] = out[2 * (k - 1)];
      out[2 * k + 1] = out[2 * (k - 1) + 1];
    }
    out[2 * k] = t->prio;
    out[2 * k + 1] = t->pid;
  }
  return n;
}

static int default_check(const psModel *m, const psData *d, char *err, int errlen) { return 0; }

static int default_check_init(const psModel *m, const psTask *t, char *err, int errlen) { return 0; }

static void default_retune(const psModel *m, psData *d) {}

static int default_control(const psModel *m, psData *d, int op, const int64_t *args, int nargs,
                           int64_t *out, char *err, int errlen) {
  snprintf(err, errlen, "policy %s takes no policy calls (task groups are the fair presets')",
           m->policy->name);
  return -1;
}

static void default_watch(const psModel *m, psData *d) {}

int ps_hooks_resolve(const psPolicy *pol, psHooks *out, char *err, int errlen) {
  const psHooks *h = &pol->hooks;
  const char *missing = !h->task_spawn ? "task_spawn"
                        : !h->wakeup   ? "wakeup"
                        : !h->deactivate ? "deactivate"
                        : !h->pick_next ? "pick_next" : NULL;
  if (missing) {
    snprintf(err, errlen, "policy %s has no %s hook (task_spawn, wakeup, deactivate and "
             "pick_next are mandatory)", pol->name, missing);
    return -1;
  }
  *out = *h;
#define DEFAULT(hook) \
  if (!out->hook) out->hook = default_##hook
  DEFAULT(configure);
  DEFAULT(init_rq);
  DEFAULT(task_fork);
  DEFAULT(task_exit);
  DEFAULT(put_prev);
  DEFAULT(tick);
  DEFAULT(tick_batch);
  DEFAULT(yield);
  DEFAULT(set_nice);
  DEFAULT(set_scheduler);
  DEFAULT(migrate);
  DEFAULT(dump);
  DEFAULT(check);
  DEFAULT(check_init);
  DEFAULT(retune);
  DEFAULT(control);
  DEFAULT(watch);
#undef DEFAULT
  return 0;
}

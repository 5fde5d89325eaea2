#include "o1_runqueue.h"

#include <stdio.h>

int o1_check_runqueues(const psModel *m, const psData *d, int max_prio, int lru, int expired_used,
                       char *err, int errlen) {
  for (int c = 0; c < m->ncpu; c++) {
    const o1_runqueue *rq = o1_runqueue_of(m, d, c);
    uint32_t queued = 0;
    for (int a = 0; a < 2; a++) {
      const psPrioArray *arr = &rq->arrays[a];
      int n = 0, normal = 0, nlru = 0;
      for (int k = 0; k <= max_prio; k++) {
        int bit = (int)(arr->bitmap[k / 64] >> (k % 64) & 1);
        if (k == max_prio ? !bit : bit != (arr->head[k] >= 0)) {
          snprintf(err, errlen, "cpu %d array %d: bit %d disagrees with its list", c, a, k);
          return -1;
        }
        if (k == max_prio) break;
        int32_t prev = -1;
        for (int32_t i = arr->head[k]; i >= 0; i = d->task[i].run_next) {
          const psTask *t = &d->task[i];
          if (t->prio != k || t->array != a || t->cpu != c || t->run_prev != prev) {
            snprintf(err, errlen, "cpu %d array %d: pid %d misqueued at prio %d", c, a, t->pid, k);
            return -1;
          }
          prev = i;
          normal += k >= 100;
          if (++n > d->ntask) {
            snprintf(err, errlen, "cpu %d array %d: cycle in list %d", c, a, k);
            return -1;
          }
        }
        if (arr->tail[k] != prev) {
          snprintf(err, errlen, "cpu %d array %d: tail of list %d is wrong", c, a, k);
          return -1;
        }
      }
      for (int32_t i = arr->lru_head; i >= 0 && nlru <= d->ntask; i = d->task[i].lru_next) nlru++;
      if (n != arr->nr_active || (lru ? nlru != normal : nlru != 0)) {
        snprintf(err, errlen, "cpu %d array %d: nr_active %d, %d queued, %d normal, lru %d", c, a,
                 arr->nr_active, n, normal, nlru);
        return -1;
      }
      queued += (uint32_t)n;
    }
    if (queued != rq->nr_running) {
      snprintf(err, errlen, "cpu %d: nr_running %u but %u queued", c, rq->nr_running, queued);
      return -1;
    }
    if (!expired_used && rq->arrays[!rq->active].nr_active) {
      snprintf(err, errlen, "cpu %d: the expired array is not empty", c);
      return -1;
    }
  }
  return 0;
}

int o1_dump(const psModel *m, const psData *d, int cpu, int max_prio, int32_t *out, int max) {
  const o1_runqueue *rq = o1_runqueue_of(m, d, cpu);
  int n = 0;
  for (int a = 0; a < 2; a++) {
    const psPrioArray *arr = &rq->arrays[a ? !rq->active : rq->active];
    for (int k = 0; k < max_prio; k++)
      for (int32_t i = arr->head[k]; i >= 0 && n < max; i = d->task[i].run_next, n++) {
        out[3 * n] = a;
        out[3 * n + 1] = k;
        out[3 * n + 2] = d->task[i].pid;
      }
  }
  return n;
}

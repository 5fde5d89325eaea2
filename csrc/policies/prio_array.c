#include "prio_array.h"

#include <string.h>

void psu_array_init(psPrioArray *a, int max_prio) {
  memset(a, 0, sizeof(*a));
  a->max_prio = max_prio;
  for (int k = 0; k < PS_PRIO_LEVELS; k++) a->head[k] = a->tail[k] = -1;
  a->lru_head = a->lru_tail = -1;
  psu_set_bit(a, max_prio);
}

void psu_insert_before(psTask *tasks, int32_t i, int32_t before, psPrioArray *a, int32_t id) {
  psPrioLinks *t = psu_links(tasks, i);
  psPrioLinks *b = psu_links(tasks, before);
  t->run_next = before;
  t->run_prev = b->run_prev;
  if (b->run_prev >= 0)
    psu_links(tasks, b->run_prev)->run_next = i;
  else
    a->head[tasks[before].prio] = i;
  b->run_prev = i;
  a->nr_active++;
  t->array = id;
}

#include "prio_array.h"

#include <string.h>

static void set_bit(psPrioArray *a, int b) { a->bitmap[b / 64] |= (uint64_t)1 << (b % 64); }
static void clear_bit(psPrioArray *a, int b) { a->bitmap[b / 64] &= ~((uint64_t)1 << (b % 64)); }

void psu_array_init(psPrioArray *a, int max_prio) {
  memset(a, 0, sizeof(*a));
  a->max_prio = max_prio;
  for (int k = 0; k < PS_PRIO_LEVELS; k++) a->head[k] = a->tail[k] = -1;
  a->lru_head = a->lru_tail = -1;
  set_bit(a, max_prio);
}

void psu_lru_add_tail(psTask *tasks, int32_t i, psPrioArray *a) {
  psPrioLinks *t = psu_links(tasks, i);
  t->lru_next = -1;
  t->lru_prev = a->lru_tail;
  if (a->lru_tail >= 0)
    psu_links(tasks, a->lru_tail)->lru_next = i;
  else
    a->lru_head = i;
  a->lru_tail = i;
}

static void lru_del(psTask *tasks, int32_t i, psPrioArray *a) {
  psPrioLinks *t = psu_links(tasks, i);
  if (t->lru_prev >= 0)
    psu_links(tasks, t->lru_prev)->lru_next = t->lru_next;
  else
    a->lru_head = t->lru_next;
  if (t->lru_next >= 0)
    psu_links(tasks, t->lru_next)->lru_prev = t->lru_prev;
  else
    a->lru_tail = t->lru_prev;
  t->lru_next = t->lru_prev = -1;
}

void psu_enqueue_task(psTask *tasks, int32_t i, psPrioArray *a, int32_t id, int lru) {
  psPrioLinks *t = psu_links(tasks, i);
  int p = tasks[i].prio;
  t->run_next = -1;
  t->run_prev = a->tail[p];
  if (a->tail[p] >= 0)
    psu_links(tasks, a->tail[p])->run_next = i;
  else
    a->head[p] = i;
  a->tail[p] = i;
  if (lru) psu_lru_add_tail(tasks, i, a);
  set_bit(a, p);
  a->nr_active++;
  t->array = id;
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

void psu_dequeue_task(psTask *tasks, int32_t i, psPrioArray *a, int lru) {
  psPrioLinks *t = psu_links(tasks, i);
  int p = tasks[i].prio;
  a->nr_active--;
  if (t->run_prev >= 0)
    psu_links(tasks, t->run_prev)->run_next = t->run_next;
  else
    a->head[p] = t->run_next;
  if (t->run_next >= 0)
    psu_links(tasks, t->run_next)->run_prev = t->run_prev;
  else
    a->tail[p] = t->run_prev;
  t->run_next = t->run_prev = -1;
  if (lru) lru_del(tasks, i, a);
  if (a->head[p] < 0) clear_bit(a, p);
  t->array = -1;
}

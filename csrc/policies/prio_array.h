/* The O(1) priority array: a bitmap with one bit per priority, a FIFO list
 * per priority, and find-first-bit (kernel/sched.c, struct prio_array).
 * Lists are linked by task index rather than pointer, so a state can be
 * copied with memcpy.  The bit at max_prio is always set (the kernel's
 * delimiter bit), so find-first-bit on an empty array returns max_prio.
 * The optional second list is Houston's least-recently-run list (lru_list).
 * A task's links are the first thing in its psTask.priv (psPrioLinks). */
#ifndef PS_PRIO_ARRAY_H
#define PS_PRIO_ARRAY_H
#include <stdint.h>

#include "task.h"

#define PS_PRIO_LEVELS 192 /* room for Houston's 180 priorities plus the delimiter */
#define PS_BITMAP_WORDS (PS_PRIO_LEVELS / 64)

/* A task's place in the arrays, at the start of its policy area. */
typedef struct psPrioLinks {
  int32_t array;              /* priority array it is queued in: -1 none, else 0/1 */
  int32_t run_next, run_prev; /* links of its priority list (task indices) */
  int32_t lru_next, lru_prev; /* links of the lru list */
} psPrioLinks;

static inline psPrioLinks *psu_links(psTask *tasks, int32_t i) { return (psPrioLinks *)tasks[i].priv; }
static inline const psPrioLinks *psu_links_const(const psTask *t) {
  return (const psPrioLinks *)t->priv;
}
/* Not queued, no links (a new or forked task). */
static inline void psu_links_clear(psTask *t) {
  psPrioLinks *l = (psPrioLinks *)t->priv;
  l->array = l->run_next = l->run_prev = l->lru_next = l->lru_prev = -1;
}

typedef struct psPrioArray {
  int32_t nr_active;
  int32_t max_prio;
  uint64_t bitmap[PS_BITMAP_WORDS];
  int32_t head[PS_PRIO_LEVELS], tail[PS_PRIO_LEVELS];
  int32_t lru_head, lru_tail;
} psPrioArray;

void psu_array_init(psPrioArray *a, int max_prio);

/* Link t just before task `before` in before's prio list (fork's
 * list_add_tail(&p->run_list, &current->run_list)); the bitmap is unchanged. */
void psu_insert_before(psTask *tasks, int32_t i, int32_t before, psPrioArray *a, int32_t id);

/* The list operations below are inline: every wakeup and every sleep runs
 * one, and as calls through the policy's layers they cost more than their
 * bodies. */

static inline void psu_set_bit(psPrioArray *a, int b) { a->bitmap[b / 64] |= (uint64_t)1 << (b % 64); }
static inline void psu_clear_bit(psPrioArray *a, int b) {
  a->bitmap[b / 64] &= ~((uint64_t)1 << (b % 64));
}

/* Append to / unlink from the lru list alone. */
static inline void psu_lru_add_tail(psTask *tasks, int32_t i, psPrioArray *a) {
  psPrioLinks *t = psu_links(tasks, i);
  t->lru_next = -1;
  t->lru_prev = a->lru_tail;
  if (a->lru_tail >= 0)
    psu_links(tasks, a->lru_tail)->lru_next = i;
  else
    a->lru_head = i;
  a->lru_tail = i;
}

static inline void psu_lru_del(psTask *tasks, int32_t i, psPrioArray *a) {
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

/* enqueue_task: append t (index i) at the tail of its prio list; with lru,
 * also at the tail of the lru list.  `id` is stored in its links' array. */
static inline void psu_enqueue_task(psTask *tasks, int32_t i, psPrioArray *a, int32_t id, int lru) {
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
  psu_set_bit(a, p);
  a->nr_active++;
  t->array = id;
}

/* dequeue_task: unlink t from its prio list (and the lru list with lru). */
static inline void psu_dequeue_task(psTask *tasks, int32_t i, psPrioArray *a, int lru) {
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
  if (lru) psu_lru_del(tasks, i, a);
  if (a->head[p] < 0) psu_clear_bit(a, p);
  t->array = -1;
}

static inline int psu_find_first_bit(const psPrioArray *a) {
  for (int w = 0; w < PS_BITMAP_WORDS; w++)
    if (a->bitmap[w]) return w * 64 + __builtin_ctzll(a->bitmap[w]);
  return PS_PRIO_LEVELS;
}

#endif

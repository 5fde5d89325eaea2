#include "events.h"

#include <stdlib.h>
#include <string.h>

/* (time, class, rank) order; class and rank are non-negative, so they
 * compare as one 64-bit word, and the whole test is branch-free (the heap's cost is
 * mostly mispredicted branches here). */
static inline int evt_less(const psEvt *a, const psEvt *b) {
  uint64_t oa = (uint64_t)(uint32_t)a->cls << 32 | (uint32_t)a->rank;
  uint64_t ob = (uint64_t)(uint32_t)b->cls << 32 | (uint32_t)b->rank;
  return (a->time_ns < b->time_ns) | ((a->time_ns == b->time_ns) & (oa < ob));
}

static void sift_up(psHeap *h, int64_t i) {
  psEvt x = h->e[i];
  while (i > 0) {
    int64_t parent = (i - 1) / 2;
    if (!evt_less(&x, &h->e[parent])) break;
    h->e[i] = h->e[parent];
    i = parent;
  }
  h->e[i] = x;
}

static void sift_down(psHeap *h, int64_t i) {
  psEvt x = h->e[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && evt_less(&h->e[c + 1], &h->e[c])) c++;
    if (!evt_less(&h->e[c], &x)) break;
    h->e[i] = h->e[c];
    i = c;
  }
  h->e[i] = x;
}

int psu_heap_push(psHeap *h, psEvt ev) {
  if (h->n == h->cap) {
    int64_t cap = h->cap ? 2 * h->cap : 64;
    psEvt *e = realloc(h->e, (size_t)cap * sizeof(psEvt));
    if (!e) return -1;
    h->e = e;
    h->cap = cap;
  }
  h->e[h->n] = ev;
  sift_up(h, h->n++);
  return 0;
}

void psu_heap_pop(psHeap *h) {
  h->e[0] = h->e[--h->n];
  if (h->n) sift_down(h, 0);
}

void psu_heap_free(psHeap *h) {
  free(h->e);
  memset(h, 0, sizeof(*h));
}

int psu_heap_copy(psHeap *dst, const psHeap *src) {
  memset(dst, 0, sizeof(*dst));
  if (!src->cap) return 0;
  dst->e = malloc((size_t)src->cap * sizeof(psEvt));
  if (!dst->e) return -1;
  memcpy(dst->e, src->e, (size_t)src->n * sizeof(psEvt));
  dst->n = src->n;
  dst->cap = src->cap;
  return 0;
}

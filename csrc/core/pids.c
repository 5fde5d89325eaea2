/* The pid table (pids.h). */
#include "pids.h"

#include <stdlib.h>
#include <string.h>

/* Fibonacci hashing: consecutive pids, the usual case, spread evenly. */
static uint32_t home(const psPids *h, int32_t pid) {
  return (uint32_t)((uint32_t)pid * 2654435769u) >> (32 - h->bits);
}

static int grow(psPids *h) {
  int32_t bits = h->e ? h->bits + 1 : 4;
  psPidEntry *old = h->e;
  size_t n = (size_t)1 << h->bits;
  psPidEntry *e = calloc((size_t)1 << bits, sizeof *e);
  if (!e) return -1;
  h->e = e;
  h->bits = bits;
  h->used = 0;
  for (size_t i = 0; old && i < n; i++)
    if (old[i].pid) psu_pids_insert(h, old[i].pid, old[i].slot);
  free(old);
  return 0;
}

int psu_pids_insert(psPids *h, int32_t pid, int32_t slot) {
  if ((!h->e || 2 * (int64_t)(h->used + 1) > (int64_t)1 << h->bits) && grow(h)) return -1;
  uint32_t mask = ((uint32_t)1 << h->bits) - 1;
  uint32_t i = home(h, pid);
  while (h->e[i].pid) i = (i + 1) & mask;
  h->e[i].pid = pid;
  h->e[i].slot = slot;
  h->used++;
  return 0;
}

int32_t psu_pids_find(const psPids *h, int32_t pid) {
  if (!h->e || pid < 1) return -1;
  uint32_t mask = ((uint32_t)1 << h->bits) - 1;
  for (uint32_t i = home(h, pid);; i = (i + 1) & mask) {
    if (h->e[i].pid == pid) return h->e[i].slot;
    if (!h->e[i].pid) return -1;
  }
}

/* Linear probing's deletion without tombstones: the entries after the
 * hole that may not stay past it move into it (Knuth, 6.4 Algorithm R). */
void psu_pids_remove(psPids *h, int32_t pid) {
  if (!h->e) return;
  uint32_t mask = ((uint32_t)1 << h->bits) - 1;
  uint32_t i = home(h, pid);
  while (h->e[i].pid != pid) {
    if (!h->e[i].pid) return;
    i = (i + 1) & mask;
  }
  for (uint32_t j = (i + 1) & mask; h->e[j].pid; j = (j + 1) & mask) {
    uint32_t k = home(h, h->e[j].pid);
    /* j's entry may fill the hole at i unless its home lies cyclically
     * in (i, j] */
    if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
      h->e[i] = h->e[j];
      i = j;
    }
  }
  h->e[i].pid = 0;
  h->e[i].slot = 0;
  h->used--;
}

int psu_pids_copy(psPids *dst, const psPids *src) {
  *dst = *src;
  if (!src->e) return 0;
  size_t n = ((size_t)1 << src->bits) * sizeof(psPidEntry);
  dst->e = malloc(n);
  if (!dst->e) {
    memset(dst, 0, sizeof *dst);
    return -1;
  }
  memcpy(dst->e, src->e, n);
  return 0;
}

void psu_pids_free(psPids *h) {
  free(h->e);
  memset(h, 0, sizeof *h);
}

#include "trace.h"

#include <stdlib.h>
#include <string.h>

void psu_ring_init(psRing *r, size_t elem) {
  memset(r, 0, sizeof(*r));
  r->elem = elem;
}

/* Unroll the ring into a larger buffer with its records in order. */
static int ring_grow(psRing *r, int64_t cap) {
  unsigned char *b = malloc((size_t)cap * r->elem);
  if (!b) return -1;
  psu_ring_read(r, b);
  free(r->buf);
  r->buf = b;
  r->start = 0;
  r->cap = cap;
  return 0;
}

int psu_ring_push(psRing *r, const void *rec, int64_t max_bytes, int overwrite) {
  int64_t limit = max_bytes / (int64_t)r->elem;
  if (r->n == r->cap) {
    if (r->cap < limit) {
      int64_t cap = r->cap ? 2 * r->cap : 1024;
      if (cap > limit) cap = limit;
      if (ring_grow(r, cap)) return PS_RING_NOMEM;
    } else if (!overwrite) {
      return PS_RING_FULL;
    } else if (r->cap == 0) {
      r->dropped += r->dropped < PS_COUNT_MAX;  /* a cap below one record keeps nothing */
      return PS_RING_OK;
    } else {
      memcpy(r->buf + (size_t)r->start * r->elem, rec, r->elem);
      r->start = (r->start + 1) % r->cap;
      r->dropped += r->dropped < PS_COUNT_MAX;
      return PS_RING_OK;
    }
  }
  int64_t at = (r->start + r->n) % r->cap;
  memcpy(r->buf + (size_t)at * r->elem, rec, r->elem);
  r->n++;
  return PS_RING_OK;
}

void psu_ring_read(const psRing *r, void *out) {
  if (!r->n) return;
  int64_t first = r->cap - r->start < r->n ? r->cap - r->start : r->n;
  memcpy(out, r->buf + (size_t)r->start * r->elem, (size_t)first * r->elem);
  if (first < r->n)
    memcpy((unsigned char *)out + (size_t)first * r->elem, r->buf, (size_t)(r->n - first) * r->elem);
}

void psu_ring_clear(psRing *r) {
  r->start = r->n = 0;
  r->dropped = 0;
}

void psu_ring_free(psRing *r) {
  free(r->buf);
  size_t elem = r->elem;
  psu_ring_init(r, elem);
}

int psu_ring_copy(psRing *dst, const psRing *src) {
  *dst = *src;
  dst->buf = NULL;
  if (!src->cap) return 0;
  dst->buf = malloc((size_t)src->cap * src->elem);
  if (!dst->buf) return -1;
  memcpy(dst->buf, src->buf, (size_t)src->cap * src->elem);
  return 0;
}

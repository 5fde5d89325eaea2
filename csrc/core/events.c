#include "events.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define evt_less psu_evt_less

/* ---- the 2.4/2.5 timer wheel's order ---- */

/* Where a jiffy timer falls among those due at its jiffy, in the timer
 * wheel of 2.4 and 2.5 (kernel/timer.c: read in 2.4.27, whose wheel is
 * 2.4.20's, and in the per-CPU tvec_base_t of 2.5/2.6.0).  internal_add_timer
 * puts a timer idx = expires - timer_jiffies ahead in vector tv1 (idx < 2^8,
 * bucket expires & 255) or tv2..tv5 (idx < 2^14, 2^20, 2^26, 2^32: bucket
 * (expires >> 8 + 6k) & 63), appending it ("Timers are FIFO!":
 * list_add(&timer->list, vec->prev)).  run_timer_list (2.4) / __run_timers
 * (2.5) first cascades when tv1's index wraps: cascade_timers / cascade
 * re-adds every timer of tv2's current bucket, in list order, through
 * internal_add_timer, then tv3's when tv2's wrapped, and so on, lowest
 * vector first; then it runs tv1's bucket from its head.  So the timers of
 * jiffy j fire in the order they were appended to tv1's bucket j, and a
 * timer armed 256 or more jiffies ahead is appended only when it is
 * cascaded, after the timers armed straight into that bucket before the
 * cascade and before those armed after it.
 *
 * Which vectors a timer of jiffy j passes through depends only on j and on
 * the vector it was armed into; vector L's bucket of j is cascaded at
 * c_L = j with its low bits of vector L - 1 cleared, into the vector that
 * idx = j - c_L picks, and the vectors cascading into one vector do so at
 * one jiffy.  So each vector's list for j is: the timers armed into it
 * before that jiffy, then the lists cascaded in (lowest vector first), then
 * those armed after.  A timer's place is that path as digits, tv1's most
 * significant, in mixed radix 6, 5, 4, 3, 2 (per vector: before, one per
 * vector above it, after): timers of one place were armed into one list
 * part and keep their arming order.  The simulator's jiffy 0 is a wheel
 * boundary, as timer_jiffies = 0 at 2.4's boot. */
static const int wheel_bits[6] = {0, 8, 14, 20, 26, 32};

static int wheel_vector(uint64_t idx) {
  int v = 1;
  while (v < 5 && idx >= (uint64_t)1 << wheel_bits[v]) v++;
  return v;
}

int64_t psu_wheel_place(uint64_t j, uint64_t tj) {
  int armed = wheel_vector(j - tj);
  /* into[v]: the vector v's bucket of j cascades into; at[v]: the jiffy a
   * cascade into v comes at, 0 when none does */
  int into[6] = {0};
  uint64_t at[6] = {0};
  for (int v = 2; v <= 5; v++) {
    uint64_t c = j & ~(((uint64_t)1 << wheel_bits[v - 1]) - 1);
    into[v] = wheel_vector(j - c);
    at[into[v]] = c;
  }
  /* the path from tv1 up: at each vector, the digit of the part it is in */
  int64_t place = 0;
  int v = 1, path[6] = {0};
  for (int w = armed; w > 1; w = into[w]) path[into[w]] = w;
  for (; v <= 5; v++) {
    int radix = 7 - v, digit;
    if (v == armed)
      digit = at[v] && tj > at[v] ? radix - 1 : 0;
    else if (path[v])
      digit = path[v] - v;  /* 1: cascaded from the next vector up, 2: ... */
    else
      digit = 0;  /* a vector off its path */
    place = place * radix + digit;
  }
  return place;
}

/* ---- the heap ---- */

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

static int heap_push(psHeap *h, psEvt ev) {
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

static void heap_pop(psHeap *h) {
  h->e[0] = h->e[--h->n];
  if (h->n) sift_down(h, 0);
}

/* ---- the wheel ---- */

static int bucket_reserve(psBucket *b) {
  if (b->n < b->cap) return 0;
  int32_t cap = b->cap ? 2 * b->cap : 8;
  psEvt *e = realloc(b->e, (size_t)cap * sizeof(psEvt));
  if (!e) return -1;
  b->e = e;
  b->cap = cap;
  return 0;
}

static int later_first(const void *a, const void *b) {
  return evt_less(b, a) ? -1 : evt_less(a, b) ? 1 : 0;
}

/* Up to 16 events due at one time (a jiffy's timers, nearly always), as
 * keys cls:rank:slot, sorted by networks of compare-exchanges that compile
 * to conditional moves -- Knuth's 19 for 8 keys (TAOCP 5.3.4) on each half,
 * then a merge -- rather than by the insertion sort, whose branches follow
 * the pids' random order: their mispredictions were most of the wheel's
 * cost on 64 CPUs.  0 when the bucket is not such. */
#define PS_CX(k, i, j)                          \
  do {                                          \
    uint64_t x_ = k[i], y_ = k[j];              \
    k[i] = x_ > y_ ? x_ : y_;                   \
    k[j] = x_ > y_ ? y_ : x_;                   \
  } while (0)

static inline void sort8_desc(uint64_t *k) {
  PS_CX(k, 0, 2); PS_CX(k, 1, 3); PS_CX(k, 4, 6); PS_CX(k, 5, 7);
  PS_CX(k, 0, 4); PS_CX(k, 1, 5); PS_CX(k, 2, 6); PS_CX(k, 3, 7);
  PS_CX(k, 0, 1); PS_CX(k, 2, 3); PS_CX(k, 4, 5); PS_CX(k, 6, 7);
  PS_CX(k, 2, 4); PS_CX(k, 3, 5);
  PS_CX(k, 1, 4); PS_CX(k, 3, 6);
  PS_CX(k, 1, 2); PS_CX(k, 3, 4); PS_CX(k, 5, 6);
}
#undef PS_CX

static int bucket_sort_small(psBucket *b) {
  int32_t n = b->n;
  if (n > 16) return 0;
  /* two halves of 8 and a 0 after each, where a merge stops */
  uint64_t k[18], other_time = 0;
  int halves = n > 8 ? 2 : 1;
  /* class and rank are non-negative, (class, rank) below 2^58 (a class is
   * at most 2, a rank below 2^56), so it fits above 6 bits; bit 5 keeps
   * every key above the padding 0s, which sort last.  The slots past n are
   * read as slot n - 1 and masked, so that no branch depends on n. */
  for (int h = 0; h < halves; h++) {
#pragma GCC unroll 8
    for (int32_t j = 0; j < 8; j++) {
      int32_t i = 8 * h + j;
      const psEvt *e = &b->e[i < n ? i : n - 1];
      uint64_t in = -(uint64_t)(i < n);
      other_time |= (uint64_t)(e->time_ns ^ b->e[0].time_ns);
      k[9 * h + j] = (((uint64_t)(uint32_t)e->cls << PS_RANK_BITS | (uint64_t)e->rank) << 6 |
                      32 | (uint64_t)i) & in;
    }
    k[9 * h + 8] = 0;
    sort8_desc(&k[9 * h]);
  }
  if (other_time) return 0;
  psEvt sorted[16];
  if (halves == 1) {
    for (int32_t i = 0; i < n; i++) sorted[i] = b->e[k[i] & 31];
  } else {
    for (int32_t i = 0, x = 0, y = 9; i < n; i++) {
      uint64_t kx = k[x], ky = k[y];
      int left = kx > ky;
      sorted[i] = b->e[(left ? kx : ky) & 31];
      x += left;
      y += !left;
    }
  }
  memcpy(b->e, sorted, (size_t)n * sizeof(psEvt));
  return 1;
}

/* Latest first, so that the earliest pops off the end.  Up to 4 events,
 * insertion sort (fewer instructions than the networks, and few branches
 * to mispredict: on 8 CPUs the networks cost 0.6 %); 5 to 16 due at one
 * time, the networks (64 CPUs, bench_ticks (h): -3 % per switch); qsort
 * past 32.  Keys are unique (a task has one timer or I/O pending, a source
 * one firing), so the result does not depend on the method. */
static void bucket_sort(psBucket *b) {
  if (b->n > 4 && bucket_sort_small(b)) return;
  if (b->n > 32) {
    qsort(b->e, (size_t)b->n, sizeof(psEvt), later_first);
    return;
  }
  for (int32_t i = 1; i < b->n; i++) {
    psEvt x = b->e[i];
    int32_t j = i;
    for (; j > 0 && evt_less(&b->e[j - 1], &x); j--) b->e[j] = b->e[j - 1];
    b->e[j] = x;
  }
}

/* Insert into the sorted bucket, keeping it sorted (room reserved). */
static void bucket_insert(psBucket *b, psEvt ev) {
  int32_t lo = 0, hi = b->n;
  while (lo < hi) {
    int32_t mid = (lo + hi) / 2;
    if (evt_less(&b->e[mid], &ev)) hi = mid;
    else lo = mid + 1;
  }
  memmove(&b->e[lo + 1], &b->e[lo], (size_t)(b->n - lo) * sizeof(psEvt));
  b->e[lo] = ev;
  b->n++;
}

void psu_evq_init(psEvq *q, int64_t width, int heap_only) {
  memset(q, 0, sizeof(*q));
  q->width = width > 0 ? width : 1;
  q->sorted = 1;
  q->heap_only = heap_only;
}

int psu_evq_push_slow(psEvq *q, psEvt ev) {
  if (!q->nwheel && q->base != q->last_ns / q->width) {
    /* an empty wheel restarts its window at the present */
    q->base = q->last_ns / q->width;
    q->sorted = 1;
    q->cur = NULL;
  }
  int64_t slot = ev.time_ns / q->width;
  if (q->heap_only || slot < q->base || slot - q->base >= PS_WHEEL) {
    if (heap_push(&q->heap, ev)) return -1;
  } else {
    if (!q->wheel) {
      q->wheel = calloc(PS_WHEEL, sizeof(psBucket));
      if (!q->wheel) return -1;
    }
    int64_t k = slot & (PS_WHEEL - 1);
    psBucket *b = &q->wheel[k];
    if (bucket_reserve(b)) return -1;
    if (slot == q->base && q->sorted) bucket_insert(b, ev);
    else b->e[b->n++] = ev;
    q->nonempty[k >> 6] |= 1ULL << (k & 63);
    q->nwheel++;
  }
  q->n++;
  return 0;
}

/* How many buckets after bucket k (0 for k itself) the first that holds
 * events is, in wheel order; one must. */
static int64_t to_nonempty(const uint64_t *bits, int64_t k) {
  int64_t w = k >> 6;
  uint64_t x = bits[w] & (~0ULL << (k & 63));
  /* the word of k again last: its bits below k are the end of the window */
  while (!x) {
    w = (w + 1) & (PS_WHEEL / 64 - 1);
    x = bits[w];
  }
  return ((w << 6 | __builtin_ctzll(x)) - k) & (PS_WHEEL - 1);
}

const psEvt *psu_evq_top_slow(psEvq *q) {
  const psEvt *w = NULL;
  if (q->nwheel) {
    int64_t skip = to_nonempty(q->nonempty, q->base & (PS_WHEEL - 1));
    if (skip) {
      q->base += skip;
      q->sorted = 0;
    }
    psBucket *b = &q->wheel[q->base & (PS_WHEEL - 1)];
    if (!q->sorted) {
      bucket_sort(b);
      q->sorted = 1;
      /* a count, stopping where the engine's stop (PS_COUNT_MAX, trace.h) */
      if (q->nsorted < PS_COUNT_MAX) q->nsorted++;
    }
    q->cur = b;
    w = &b->e[b->n - 1];
  }
  const psEvt *h = q->heap.n ? &q->heap.e[0] : NULL;
  q->from_wheel = w && (!h || evt_less(w, h));
  return q->from_wheel ? w : h;
}

void psu_evq_take_heap(psEvq *q) {
  q->last_ns = q->heap.e[0].time_ns;
  heap_pop(&q->heap);
  q->n--;
}

int64_t psu_evq_earliest(const psEvq *q) {
  int64_t t = q->heap.n ? q->heap.e[0].time_ns : INT64_MAX;
  if (q->nwheel)
    for (int k = 0; k < PS_WHEEL; k++)
      for (int32_t i = 0; i < q->wheel[k].n; i++)
        if (q->wheel[k].e[i].time_ns < t) t = q->wheel[k].e[i].time_ns;
  return t;
}

static int earlier_first(const void *a, const void *b) { return later_first(b, a); }

psEvt *psu_evq_sorted(const psEvq *q, int *bad) {
  if (!q->n) return NULL;
  psEvt *out = malloc((size_t)q->n * sizeof(psEvt));
  if (!out) {
    *bad = 1;
    return NULL;
  }
  /* an empty heap or bucket may have no array yet (memcpy from NULL is undefined) */
  if (q->heap.n) memcpy(out, q->heap.e, (size_t)q->heap.n * sizeof(psEvt));
  int64_t n = q->heap.n;
  if (q->nwheel)
    for (int k = 0; k < PS_WHEEL; k++) {
      if (q->wheel[k].n) memcpy(out + n, q->wheel[k].e, (size_t)q->wheel[k].n * sizeof(psEvt));
      n += q->wheel[k].n;
    }
  qsort(out, (size_t)n, sizeof(psEvt), earlier_first);
  return out;
}

void psu_evq_free(psEvq *q) {
  free(q->heap.e);
  if (q->wheel)
    for (int k = 0; k < PS_WHEEL; k++) free(q->wheel[k].e);
  free(q->wheel);
  psu_evq_init(q, q->width, q->heap_only);
}

int psu_evq_copy(psEvq *dst, const psEvq *src) {
  *dst = *src;
  dst->heap.e = NULL;
  dst->wheel = NULL;
  dst->cur = NULL;  /* a bucket of src's; top() finds dst's again */
  if (src->heap.cap) {
    dst->heap.e = malloc((size_t)src->heap.cap * sizeof(psEvt));
    if (!dst->heap.e) goto nomem;
    memcpy(dst->heap.e, src->heap.e, (size_t)src->heap.n * sizeof(psEvt));
  }
  if (src->wheel) {
    dst->wheel = calloc(PS_WHEEL, sizeof(psBucket));
    if (!dst->wheel) goto nomem;
    for (int k = 0; k < PS_WHEEL; k++) {
      const psBucket *b = &src->wheel[k];
      if (!b->cap) continue;
      dst->wheel[k].e = malloc((size_t)b->cap * sizeof(psEvt));
      if (!dst->wheel[k].e) goto nomem;
      memcpy(dst->wheel[k].e, b->e, (size_t)b->n * sizeof(psEvt));
      dst->wheel[k].n = b->n;
      dst->wheel[k].cap = b->cap;
    }
  }
  return 0;
nomem:
  psu_evq_free(dst);
  return -1;
}

/* The event queue of timed interrupt-context events.
 * Ordered by (time, class, rank): class and rank make the order of events
 * due at one instant canonical -- timers before I/O before sources; timers
 * in the order the kernel runs them (the rank psu_timer_rank gives: the
 * order they were armed in, as the 2.4/2.5 timer wheel's buckets reorder
 * it, or as hrtimers' ties are), I/O by pid, sources by id -- so a run
 * never depends on the order events were queued in, nor on which task slot
 * a pid happens to occupy.
 *
 * Two parts hold the events: a timer wheel of PS_WHEEL buckets, each one
 * tick wide, for events due within PS_WHEEL ticks (sleeps and periodic
 * sources nearly all are), and a min-heap for the rest.  A heap push and
 * pop cost ~400 instructions with 100 events pending (callgrind, a hundred
 * sleepers beside two hogs), a bucket append a few: the earliest bucket
 * is sorted once, when it becomes the earliest.  Which part holds an event
 * never changes the order events come out in: top() compares the wheel's
 * earliest with the heap's. */
#ifndef PS_EVENTS_H
#define PS_EVENTS_H
#include <stddef.h>
#include <stdint.h>

enum {
  PS_EV_TIMER = 0,   /* a task's sleep timer; key = task index, rank = psu_timer_rank */
  PS_EV_IO = 1,      /* a task's I/O completion; key = task index, rank = pid */
  PS_EV_SOURCE = 2,  /* an external source fires; key = rank = source index */
};

/* A rank is below 2^56: (class, rank) compare as one 64-bit word. */
#define PS_RANK_BITS 56
/* A timer's rank: its place among the timers of its jiffy that the wheel's
 * cascades give it (psu_wheel_place, below PS_WHEEL_PLACES), then its
 * arming sequence number (psData.timer_seq, 1 .. PS_TIMER_SEQ_MAX). */
#define PS_TIMER_SEQ_BITS 46
#define PS_TIMER_SEQ_MAX ((INT64_C(1) << PS_TIMER_SEQ_BITS) - 1)
#define PS_WHEEL_PLACES 720
_Static_assert((int64_t)PS_WHEEL_PLACES << PS_TIMER_SEQ_BITS <= INT64_C(1) << PS_RANK_BITS,
               "a timer's rank fits its bits");

typedef struct psEvt {
  int64_t time_ns;
  int64_t rank;  /* 0 .. 2^PS_RANK_BITS - 1 */
  int32_t cls;
  int32_t key;
} psEvt;

/* The place among the timers due at jiffy j (of the 2.4/2.5 timer wheel,
 * kernel/timer.c) of one armed when the wheel's timer_jiffies was tj <= j
 * (the jiffy after the last whose timers have run): 0 .. PS_WHEEL_PLACES -
 * 1, timers of one place firing in arming order.  See events.c. */
int64_t psu_wheel_place(uint64_t j, uint64_t tj);
/* A jiffy timer's rank.  Its common case inline: a timer due within 256
 * jiffies goes straight to the wheel's first vector, before the timers
 * cascaded into its bucket when armed before that cascade (the softirq of
 * j's multiple of 256), after them when armed after it. */
static inline int64_t psu_timer_rank(uint64_t j, uint64_t tj, int64_t seq) {
  int64_t place = j - tj < 256 ? (tj > (j & ~(uint64_t)255) ? PS_WHEEL_PLACES - 120 : 0)
                               : psu_wheel_place(j, tj);
  return place << PS_TIMER_SEQ_BITS | seq;
}

typedef struct psHeap {
  psEvt *e;
  int64_t n, cap;
} psHeap;

typedef struct psBucket {
  psEvt *e;
  int32_t n, cap;
} psBucket;

/* a power of two: 256 ticks, 256 ms at HZ=1000 */
#define PS_WHEEL 256

typedef struct psEvq {
  psHeap heap;
  psBucket *wheel;   /* PS_WHEEL buckets, allocated at the first push into one */
  int64_t width;     /* ns per bucket */
  /* Every event in the wheel has its slot (time / width) in
   * [base, base + PS_WHEEL), in bucket slot % PS_WHEEL; the heap holds
   * events outside that window when they were queued. */
  int64_t base;
  int64_t nwheel;    /* events in the wheel */
  int64_t n;         /* events in all */
  int64_t last_ns;   /* time of the last event popped: no event is queued before it */
  int32_t sorted;    /* bucket `base` is sorted, latest first */
  int32_t from_wheel;  /* where top() found the earliest */
  /* bucket `base` while it is sorted, else NULL: top()'s inline test */
  psBucket *cur;
  /* bit k set when bucket k holds events: top() finds the next one
   * without visiting the empty buckets between */
  uint64_t nonempty[PS_WHEEL / 64];
  /* the wheel switched off (PS_FAST_WHEEL): every event goes to the heap,
   * which gives the same order */
  int32_t heap_only;
  /* buckets sorted as they became the earliest: the wheel's work */
  int64_t nsorted;
} psEvq;

/* An empty queue of buckets `width` ns wide (the tick), or of the heap
 * alone. */
void psu_evq_init(psEvq *q, int64_t width, int heap_only);
/* psu_evq_push's general case. */
int psu_evq_push_slow(psEvq *q, psEvt ev);
/* 0, or -1 when memory ran out (the queue is unchanged).  Inline for the
 * common case, an event due after the earliest bucket and within the
 * wheel (a sleep's timer), appended to its bucket with room in it.
 * slot: ev.time_ns / q->width, which a jiffy timer's caller knows without
 * dividing (a division was a third of a sleep's cost). */
static inline int psu_evq_push_slot(psEvq *q, psEvt ev, int64_t slot) {
  if (q->nwheel && slot > q->base && slot - q->base < PS_WHEEL) {
    int64_t k = slot & (PS_WHEEL - 1);
    psBucket *b = &q->wheel[k];
    if (b->n < b->cap) {
      b->e[b->n++] = ev;
      q->nonempty[k >> 6] |= 1ULL << (k & 63);
      q->nwheel++;
      q->n++;
      return 0;
    }
  }
  return psu_evq_push_slow(q, ev);
}
static inline int psu_evq_push(psEvq *q, psEvt ev) {
  return psu_evq_push_slot(q, ev, ev.time_ns / q->width);
}
/* The earliest event, or NULL when the queue is empty; settles the wheel
 * (moves `base` to its earliest bucket and sorts it) when it must. */
const psEvt *psu_evq_top_slow(psEvq *q);
static inline int psu_evt_less(const psEvt *a, const psEvt *b) {
  /* class and rank are non-negative and the rank below 2^56, so they
   * compare as one 64-bit word; the test is branch-free (mispredicted
   * branches were most of a heap's cost) */
  uint64_t oa = (uint64_t)(uint32_t)a->cls << PS_RANK_BITS | (uint64_t)a->rank;
  uint64_t ob = (uint64_t)(uint32_t)b->cls << PS_RANK_BITS | (uint64_t)b->rank;
  return (a->time_ns < b->time_ns) | ((a->time_ns == b->time_ns) & (oa < ob));
}
static inline const psEvt *psu_evq_top(psEvq *q) {
  /* the common case inline: a settled wheel whose earliest bucket is not
   * empty, earlier than the heap's top */
  const psBucket *b = q->cur;
  if (b && b->n) {
    const psEvt *w = &b->e[b->n - 1];
    if (!q->heap.n || psu_evt_less(w, &q->heap.e[0])) {
      q->from_wheel = 1;
      return w;
    }
  }
  return psu_evq_top_slow(q);
}
/* psu_evq_take's heap case. */
void psu_evq_take_heap(psEvq *q);
/* Remove the event the last psu_evq_top() returned, with nothing queued
 * between the two calls. */
static inline void psu_evq_take(psEvq *q) {
  if (!q->from_wheel) {
    psu_evq_take_heap(q);
    return;
  }
  psBucket *b = q->cur;  /* top() found the earliest there */
  q->last_ns = b->e[--b->n].time_ns;
  if (!b->n) {
    int64_t k = q->base & (PS_WHEEL - 1);
    q->nonempty[k >> 6] &= ~(1ULL << (k & 63));
  }
  q->nwheel--;
  q->n--;
}
/* After psu_evq_take, the event that follows in the same bucket, or NULL:
 * a look ahead that settles nothing (it may be due later than the heap's
 * top; callers check its time). */
static inline const psEvt *psu_evq_next_in_bucket(const psEvq *q) {
  const psBucket *b = q->cur;
  return q->from_wheel && b && b->n ? &b->e[b->n - 1] : NULL;
}
/* The earliest event's time without reordering anything (INT64_MAX when
 * empty): O(n), for the invariant checks. */
int64_t psu_evq_earliest(const psEvq *q);
/* Every event, earliest first, in a new array (NULL when empty or out of
 * memory: *bad is then set); a sorted array is also a valid heap. */
psEvt *psu_evq_sorted(const psEvq *q, int *bad);
void psu_evq_free(psEvq *q);
/* Deep copy; 0 or -1 on allocation failure. */
int psu_evq_copy(psEvq *dst, const psEvq *src);

#endif

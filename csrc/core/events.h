/* The event queue: a min-heap of timed interrupt-context events.
 * Ordered by (time, class, rank): class and rank make the order of events
 * due at one instant canonical (timers before I/O before sources, then by
 * pid or source id), so a run never depends on the order events were queued
 * in, nor on which task slot a pid happens to occupy. */
#ifndef PS_EVENTS_H
#define PS_EVENTS_H
#include <stdint.h>

enum {
  PS_EV_TIMER = 0,   /* a task's sleep timer; key = task index, rank = pid */
  PS_EV_IO = 1,      /* a task's I/O completion; key = task index, rank = pid */
  PS_EV_SOURCE = 2,  /* an external source fires; key = rank = source index */
};

typedef struct psEvt {
  int64_t time_ns;
  int32_t cls;
  int32_t key;
  int32_t rank;
  int32_t pad;   /* zero: records compare byte for byte */
} psEvt;

typedef struct psHeap {
  psEvt *e;
  int64_t n, cap;
} psHeap;

/* 0, or -1 when memory ran out (the heap is unchanged). */
int psu_heap_push(psHeap *h, psEvt ev);
/* The earliest event; the heap must not be empty. */
static inline const psEvt *psu_heap_top(const psHeap *h) { return &h->e[0]; }
void psu_heap_pop(psHeap *h);
void psu_heap_free(psHeap *h);
/* Deep copy; 0 or -1 on allocation failure. */
int psu_heap_copy(psHeap *dst, const psHeap *src);

#endif

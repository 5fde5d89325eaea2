/* Recorded output: the event log, sampled series and wakeup latencies.
 * Each is a growable ring of fixed records with a byte cap; when a ring is
 * full it either refuses (the step fails with a clear error) or overwrites
 * its oldest records, as the user chose. */
#ifndef PS_TRACE_H
#define PS_TRACE_H
#include <stddef.h>
#include <stdint.h>

/* A count that runs add to (switches, wakeups, migrations, posts, dropped
 * records ...) stops at PS_COUNT_MAX, 2^62: a billion a simulated second
 * for the clock's whole range (73 years) stays below 2^61, so only a state
 * loaded at the top of the domain reaches it, and every state stays one
 * its snapshot holds (snapshot.c checks counts against it). */
#define PS_COUNT_MAX (INT64_C(1) << 62)

/* Event kinds of the log.  A column a kind does not use holds -1 (pid,
 * other) or 0 (prio, value).  pysched.EVENT_FIELDS says the same in Python;
 * tests/core/test_codes.py checks it against this enum and against the logs. */
enum {
  PS_EVT_SWITCH = 0,    /* pid = next, other = prev, value = prev's state */
  PS_EVT_WAKEUP = 1,    /* pid = wakee, other = waker (-1: interrupt context), value = sync */
  PS_EVT_FORK = 2,      /* pid = child, other = parent */
  PS_EVT_EXIT = 3,      /* pid = exiting task, other = parent (-1: spawned from Python) */
  PS_EVT_PRIO = 4,      /* pid's prio changed to `prio`; value = old prio */
  PS_EVT_EXPIRE = 5,    /* pid's slice expired; value = 1 if it went to the expired array */
  PS_EVT_BACKBOOST = 6, /* pid = waker given `value` sleep_avg by wakee `other` */
  PS_EVT_MIGRATE = 7,   /* pid moved to `cpu`, other = old cpu; value = 1 if moved to its
                           waker's CPU at a sync wakeup, 0 if by the balancer or affinity */
  PS_EVT_ARRAY_SWITCH = 8, /* the runqueue of `cpu` swapped active and expired; value = how
                              many times it has, this one included */
  PS_EVT_STARVING = 9,  /* an interactive task went to expired because EXPIRED_STARVING;
                           value = nr_running */
  PS_NEVT_KINDS
};

typedef struct psEventRec {
  int64_t time_ns;
  int64_t value;
  int32_t pid;
  int32_t other;
  int32_t cpu;
  int16_t kind;
  int16_t prio;
} psEventRec;  /* 32 bytes, no padding: records compare byte for byte */

typedef struct psLatencyRec {
  int64_t time_ns;     /* when the task started to run */
  int64_t latency_ns;  /* since its wakeup */
  int32_t pid;
  int32_t cpu;
} psLatencyRec;

/* One call of a periodic op (interbench's periodic_schedule) or frame op. */
typedef struct psPeriodicRec {
  int64_t start_ns;           /* when the call began: the task ran after its wakeup */
  int64_t due_ns;             /* when it was due to begin: its deadline (before any advance:
                                 the target of the sleep that preceded it) */
  int64_t latency_ns;         /* start - when it was due to start (the timer's expiry plus
                                 the deadline advance), 0 if not later; a frame: how late
                                 its work finished */
  int64_t finish_ns;          /* when its work was done; -1: skipped, a whole period late */
  int64_t missed_latency_ns;  /* periods lost x the interval */
  int32_t pid;
  int32_t met;                /* its work finished by the next deadline */
  int32_t missed;             /* deadlines missed by this call */
  int32_t dropped;            /* bursts dropped (interbench's missed_burns increment) */
} psPeriodicRec;  /* 56 bytes, no padding */

/* A ring of fixed-size records. */
typedef struct psRing {
  unsigned char *buf;
  size_t elem;
  int64_t start, n, cap;  /* records: first, count, allocated */
  int64_t dropped;        /* overwritten records */
} psRing;

enum { PS_RING_OK = 0, PS_RING_FULL = 1, PS_RING_NOMEM = 2 };

void psu_ring_init(psRing *r, size_t elem);
/* Append one record.  max_bytes caps the ring; overwrite chooses what a full
 * ring does.  Returns PS_RING_*. */
int psu_ring_push(psRing *r, const void *rec, int64_t max_bytes, int overwrite);
/* Record k (0: the oldest) of the ring; k < r->n. */
static inline const void *psu_ring_at(const psRing *r, int64_t k) {
  return r->buf + (size_t)((r->start + k) % r->cap) * r->elem;
}
/* Copy the records, oldest first, into out (n * elem bytes). */
void psu_ring_read(const psRing *r, void *out);
void psu_ring_clear(psRing *r);
void psu_ring_free(psRing *r);
int psu_ring_copy(psRing *dst, const psRing *src);

#endif

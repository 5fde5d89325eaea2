/* Workload programs: each task runs a small program of ops, interpreted in C.
 * Programs are plain data in the model.  The interpreter executes one op at
 * a time and hands every syscall (run, sleep, post, fork ...) back to the
 * engine as a request, so it depends on nothing but this header. */
#ifndef PS_PROGRAM_H
#define PS_PROGRAM_H
#include <stdint.h>

#include "rng.h"

/* Duration distributions; parameters are in nanoseconds. */
enum {
  PS_DIST_CONST = 0,        /* a */
  PS_DIST_UNIFORM = 1,      /* a .. b */
  PS_DIST_EXPONENTIAL = 2,  /* mean a */
  PS_DIST_NORMAL = 3,       /* mean a, sd b, clipped to >= 0 */
};

typedef struct psDist {
  int32_t kind;
  double a, b;
} psDist;

/* Scheduling classes a setscheduler op names (the kernel's
 * SCHED_NORMAL/FIFO/RR values). */
enum { PS_SCHED_NORMAL = 0, PS_SCHED_FIFO = 1, PS_SCHED_RR = 2 };

/* Op codes.  Everything the workload library needs is here from the start,
 * so that later policies and workloads add no engine changes. */
enum {
  PS_OP_RUN = 0,       /* compute for d ns of CPU */
  PS_OP_SLEEP = 1,     /* interruptible timer sleep, expires on a tick */
  PS_OP_IO = 2,        /* uninterruptible sleep ended by a device interrupt after d ns */
  PS_OP_WAIT = 3,      /* arg: channel */
  PS_OP_POST = 4,      /* arg: channel, arg2: sync */
  PS_OP_LOOP = 5,      /* arg: iterations (0 = forever), arg2: index of its END */
  PS_OP_END = 6,       /* arg: index of its LOOP */
  PS_OP_FORK = 7,      /* arg: program id, arg2: number of children */
  PS_OP_EXIT = 8,
  PS_OP_YIELD = 9,
  PS_OP_NICE = 10,     /* arg: nice value */
  PS_OP_SETSCHED = 11, /* arg: PS_SCHED_*, arg2: rt_priority */
  PS_OP_PERIODIC = 12, /* interbench's periodic_schedule: arg interval us, arg2 deadline advance
                          us, d the work; a call runs the work, then sleeps to the next deadline */
  PS_OP_FRAME = 13,    /* interbench's Gaming frame: d the work, arg its deadline in us after
                          the frame starts; no sleep */
  PS_OP_TIMER = 14,    /* rt-app's timer: sleep to the task's reference + arg us; arg2 1:
                          relative (a late task restarts the reference from now); 2: the
                          reference starts at the run's time 0, not at the task's start */
  PS_OP_AFFINITY = 15, /* sched_setaffinity on itself: arg the index of cpus_allowed among
                          the model's CPU sets (psModel.masks) */
  PS_NOPS
};

typedef struct psOp {
  int32_t kind;
  int32_t arg, arg2;
  psDist d;
} psOp;

#define PS_LOOP_DEPTH 8

typedef struct psLoopFrame {
  int32_t op;      /* index of the LOOP op */
  int64_t left;    /* iterations still to run after this one; -1 = forever */
} psLoopFrame;

/* Where a task is in its program: the interpreter's whole per-task state. */
typedef struct psProgState {
  int32_t prog;               /* program id */
  int32_t pc;                 /* next op (index into the model's op array) */
  int32_t loop_depth;
  int32_t op_left;            /* repetitions left of a multi-step op (fork n), 0 none */
  psLoopFrame loop[PS_LOOP_DEPTH];
  /* the timed ops (periodic, frame, timer) */
  int32_t phase;              /* 0: a periodic/frame call begins, 1: its work is done */
  int32_t pad;
  int64_t deadline_ns;        /* periodic: the next deadline, -1 before the first call */
  int64_t due_begin_ns;       /* periodic: when the next call is due to begin (the sleep's
                                 target) */
  int64_t due_start_ns;       /* ... and when it counts as late from (the timer's expiry
                                 plus the deadline advance) */
  int64_t call_ns, call_due_ns, call_lat_ns;  /* the current call: start, deadline, latency */
  int64_t timer_ns;           /* timer: the reference, -1 before the first */
} psProgState;

/* What a program asks of the machine: the syscalls, with their arguments. */
enum {
  PS_SYS_NONE = 0,     /* a structure op (loop, end): nothing to do */
  PS_SYS_RUN,          /* ns of CPU work */
  PS_SYS_SLEEP,        /* ns */
  PS_SYS_IO,           /* ns */
  PS_SYS_WAIT,         /* arg: channel */
  PS_SYS_POST,         /* arg: channel, arg2: sync */
  PS_SYS_FORK,         /* arg: program id */
  PS_SYS_EXIT,
  PS_SYS_YIELD,
  PS_SYS_NICE,         /* arg: nice */
  PS_SYS_SETSCHED,     /* arg: PS_SCHED_*, arg2: rt_priority */
  PS_SYS_AFFINITY,     /* cpus_allowed: cpus, or (cpus NULL, a program's op) the model's
                          CPU set number arg */
  PS_SYS_PERIODIC,     /* ns: the work (drawn as a call begins), arg: interval us, arg2: advance us */
  PS_SYS_FRAME,        /* ns: the work, arg: deadline us */
  PS_SYS_TIMER,        /* arg: period us, arg2: relative */
};

typedef struct psSyscall {
  int32_t kind;
  int32_t arg, arg2;
  int64_t ns;
  const struct psCpuMask *cpus;
} psSyscall;

typedef struct psProgram {
  int32_t first;  /* index of its first op in the model's op array */
  int32_t n;      /* number of ops */
} psProgram;

/* Largest duration a distribution may produce: 10^6 s, so that clock
 * arithmetic can never overflow int64 in any run. */
#define PS_MAX_DURATION_NS ((int64_t)1000000 * 1000000000)

/* A drawn duration as ns: rounded, clipped to 0 .. PS_MAX_DURATION_NS. */
static inline int64_t psu_dist_ns(double x) {
  if (!(x > 0)) return 0;
  if (x > (double)PS_MAX_DURATION_NS) return PS_MAX_DURATION_NS;
  return (int64_t)(x + 0.5);
}
/* Draw one duration (ns) from an exponential or normal d. */
int64_t psu_dist_sample_slow(const psDist *d, psRng *r);
/* Draw one duration (ns) from d.  Constant and uniform inline: they are
 * most programs' run and sleep ops, drawn once per op. */
static inline int64_t psu_dist_sample(const psDist *d, psRng *r) {
  if (d->kind == PS_DIST_CONST) return psu_dist_ns(d->a);
  if (d->kind == PS_DIST_UNIFORM) return psu_dist_ns(d->a + (d->b - d->a) * psu_rng_uniform(r));
  return psu_dist_sample_slow(d, r);
}

/* Execute the next op of the program at s (ops: the model's op array,
 * prog: the task's program), drawing durations from rng, and return the
 * request it makes.  The end of the program is an exit.  A fork of n
 * children is n requests.  Inline: it runs once per op, in the engine's
 * innermost loop. */

/* Loop bookkeeping at an END op: jump back or fall through. */
static inline void psu_loop_end(psProgState *s, const psOp *o) {
  psLoopFrame *f = &s->loop[s->loop_depth - 1];
  if (f->left < 0 || f->left-- > 0) {
    s->pc = o->arg + 1;
    return;
  }
  s->loop_depth--;
  s->pc++;
}

static inline psSyscall psu_program_next(const psOp *ops, const psProgram *prog, psProgState *s,
                                         psRng *rng) {
  psSyscall r = {PS_SYS_NONE, 0, 0, 0, 0};
  if (s->pc >= prog->first + prog->n) {
    r.kind = PS_SYS_EXIT;
    return r;
  }
  const psOp *o = &ops[s->pc];
  switch (o->kind) {
    case PS_OP_RUN: case PS_OP_SLEEP: case PS_OP_IO:
      r.kind = o->kind == PS_OP_RUN ? PS_SYS_RUN : o->kind == PS_OP_SLEEP ? PS_SYS_SLEEP : PS_SYS_IO;
      r.ns = psu_dist_sample(&o->d, rng);
      s->pc++;
      break;
    case PS_OP_WAIT: case PS_OP_POST:
      r.kind = o->kind == PS_OP_WAIT ? PS_SYS_WAIT : PS_SYS_POST;
      r.arg = o->arg;
      r.arg2 = o->arg2;
      s->pc++;
      break;
    case PS_OP_LOOP: {
      psLoopFrame *f = &s->loop[s->loop_depth++];
      f->op = s->pc;
      f->left = o->arg ? (int64_t)o->arg - 1 : -1;
      s->pc++;
      break;
    }
    case PS_OP_END:
      psu_loop_end(s, o);
      break;
    case PS_OP_FORK:
      r.kind = PS_SYS_FORK;
      r.arg = o->arg;
      if (!s->op_left) s->op_left = o->arg2;
      if (--s->op_left == 0) s->pc++;
      break;
    case PS_OP_EXIT:
      r.kind = PS_SYS_EXIT;
      break;
    case PS_OP_YIELD:
      r.kind = PS_SYS_YIELD;
      s->pc++;
      break;
    case PS_OP_NICE:
      r.kind = PS_SYS_NICE;
      r.arg = o->arg;
      s->pc++;
      break;
    case PS_OP_SETSCHED:
      r.kind = PS_SYS_SETSCHED;
      r.arg = o->arg;
      r.arg2 = o->arg2;
      s->pc++;
      break;
    case PS_OP_AFFINITY:
      r.kind = PS_SYS_AFFINITY;
      r.arg = o->arg;
      s->pc++;
      break;
    default:
      /* the timed ops: the engine, which knows the time, steps them and
       * moves the pc on when a call is complete */
      r.kind = o->kind == PS_OP_PERIODIC ? PS_SYS_PERIODIC
               : o->kind == PS_OP_FRAME  ? PS_SYS_FRAME
                                         : PS_SYS_TIMER;
      r.arg = o->arg;
      r.arg2 = o->arg2;
      if (o->kind != PS_OP_TIMER && s->phase == 0) r.ns = psu_dist_sample(&o->d, rng);
      break;
  }
  return r;
}

/* Take back the fork request just returned (the fork failed), so that
 * resuming the program retries it. */
void psu_program_unfork(psProgState *s);

/* Check one program's structure (op codes, loop nesting, channel and
 * program references).  Returns 0 or -1 with a message. */
int psu_program_check(const psOp *ops, int n, int nprog, int nchan, char *err, int errlen);

#endif

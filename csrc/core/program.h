/* Workload programs: each task runs a small program of ops, interpreted in C.
 * Programs are plain data in the model; the interpreter advances one task
 * until it needs CPU time or blocks. */
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
  PS_NOPS
};

typedef struct psOp {
  int32_t kind;
  int32_t arg, arg2;
  psDist d;
} psOp;

typedef struct psProgram {
  int32_t first;  /* index of its first op in the model's op array */
  int32_t n;      /* number of ops */
} psProgram;

/* Largest duration a distribution may produce: 10^6 s, so that clock
 * arithmetic can never overflow int64 in any run. */
#define PS_MAX_DURATION_NS ((int64_t)1000000 * 1000000000)

/* Draw one duration (ns) from d. */
int64_t psu_dist_sample(const psDist *d, psRng *r);

/* Check one program's structure (op codes, loop nesting, channel and
 * program references).  Returns 0 or -1 with a message. */
int psu_program_check(const psOp *ops, int n, int nprog, int nchan, char *err, int errlen);

#endif

/* The workload interpreter and the checks on programs. */
#include <math.h>
#include <stdio.h>

#include "program.h"

int64_t psu_dist_sample_slow(const psDist *d, psRng *r) {
  if (d->kind == PS_DIST_EXPONENTIAL) return psu_dist_ns(psu_rng_exponential(r, d->a));
  return psu_dist_ns(psu_rng_normal(r, d->a, d->b));
}

int psu_program_check(const psOp *ops, int n, int nprog, int nchan, char *err, int errlen) {
  int stack[PS_LOOP_DEPTH];
  int depth = 0;
  for (int i = 0; i < n; i++) {
    const psOp *o = &ops[i];
    switch (o->kind) {
      case PS_OP_PERIODIC: case PS_OP_FRAME: case PS_OP_TIMER:
        if (o->arg < (o->kind == PS_OP_PERIODIC ? 0 : 1) || o->arg2 < 0 ||
            (o->kind == PS_OP_TIMER && o->arg2 > 2) || (o->kind == PS_OP_FRAME && o->arg2)) {
          snprintf(err, errlen, "op %d: bad interval %d us / second argument %d", i, o->arg, o->arg2);
          return -1;
        }
        if (o->kind == PS_OP_TIMER) break;
        /* the work's distribution, checked as a run's */
        __attribute__((fallthrough));
      case PS_OP_RUN: case PS_OP_SLEEP: case PS_OP_IO:
        if (o->d.kind < PS_DIST_CONST || o->d.kind > PS_DIST_NORMAL || !isfinite(o->d.a) ||
            !isfinite(o->d.b) || o->d.a < 0 || o->d.b < 0) {
          snprintf(err, errlen, "op %d: bad duration distribution", i);
          return -1;
        }
        break;
      case PS_OP_WAIT: case PS_OP_POST:
        if (o->arg < 0 || o->arg >= nchan) {
          snprintf(err, errlen, "op %d: channel %d does not exist", i, o->arg);
          return -1;
        }
        break;
      case PS_OP_LOOP:
        if (depth == PS_LOOP_DEPTH) {
          snprintf(err, errlen, "op %d: loops nest deeper than %d", i, PS_LOOP_DEPTH);
          return -1;
        }
        if (o->arg < 0) {
          snprintf(err, errlen, "op %d: loop count %d must be >= 0 (0 = forever)", i, o->arg);
          return -1;
        }
        stack[depth++] = i;
        break;
      case PS_OP_END:
        if (!depth || o->arg != stack[depth - 1] || ops[stack[depth - 1]].arg2 != i) {
          snprintf(err, errlen, "op %d: end without a matching loop", i);
          return -1;
        }
        depth--;
        break;
      case PS_OP_FORK:
        if (o->arg < 0 || o->arg >= nprog || o->arg2 < 1) {
          snprintf(err, errlen, "op %d: fork of unknown program %d or count %d < 1", i, o->arg, o->arg2);
          return -1;
        }
        break;
      case PS_OP_EXIT: case PS_OP_YIELD: break;
      case PS_OP_NICE:
        if (o->arg < -20 || o->arg > 19) {
          snprintf(err, errlen, "op %d: nice %d outside -20..19", i, o->arg);
          return -1;
        }
        break;
      case PS_OP_SETSCHED:
        if (o->arg < PS_SCHED_NORMAL || o->arg > PS_SCHED_RR ||
            (o->arg == PS_SCHED_NORMAL ? o->arg2 != 0 : (o->arg2 < 1 || o->arg2 > 99))) {
          snprintf(err, errlen, "op %d: bad policy %d / rt_priority %d", i, o->arg, o->arg2);
          return -1;
        }
        break;
      case PS_OP_AFFINITY:
        if (o->arg < 0) {
          snprintf(err, errlen, "op %d: set_affinity names CPU set %d", i, o->arg);
          return -1;
        }
        break;
      default:
        snprintf(err, errlen, "op %d: unknown op code %d", i, o->kind);
        return -1;
    }
  }
  if (depth) {
    snprintf(err, errlen, "loop at op %d has no end", stack[depth - 1]);
    return -1;
  }
  return 0;
}

void psu_program_unfork(psProgState *s) {
  if (s->op_left) {
    s->op_left++;
  } else {
    /* it was the last child: the pc had moved on */
    s->pc--;
    s->op_left = 1;
  }
}

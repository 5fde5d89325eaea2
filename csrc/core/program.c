/* The workload interpreter and the checks on programs. */
#include <math.h>
#include <stdio.h>

#include "program.h"

int64_t psu_dist_sample(const psDist *d, psRng *r) {
  double x;
  switch (d->kind) {
    case PS_DIST_CONST: x = d->a; break;
    case PS_DIST_UNIFORM: x = d->a + (d->b - d->a) * psu_rng_uniform(r); break;
    case PS_DIST_EXPONENTIAL: x = psu_rng_exponential(r, d->a); break;
    default: x = psu_rng_normal(r, d->a, d->b); break;
  }
  if (!(x > 0)) return 0;
  if (x > (double)PS_MAX_DURATION_NS) return PS_MAX_DURATION_NS;
  return (int64_t)(x + 0.5);
}

int psu_program_check(const psOp *ops, int n, int nprog, int nchan, char *err, int errlen) {
  int stack[PS_LOOP_DEPTH];
  int depth = 0;
  for (int i = 0; i < n; i++) {
    const psOp *o = &ops[i];
    switch (o->kind) {
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

/* Loop bookkeeping at an END op: jump back or fall through. */
static void loop_end(psProgState *s, const psOp *o) {
  psLoopFrame *f = &s->loop[s->loop_depth - 1];
  if (f->left < 0 || f->left-- > 0) {
    s->pc = o->arg + 1;
    return;
  }
  s->loop_depth--;
  s->pc++;
}

psSyscall psu_program_next(const psOp *ops, const psProgram *prog, psProgState *s, psRng *rng) {
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
      loop_end(s, o);
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
    default: /* PS_OP_SETSCHED */
      r.kind = PS_SYS_SETSCHED;
      r.arg = o->arg;
      r.arg2 = o->arg2;
      s->pc++;
      break;
  }
  return r;
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

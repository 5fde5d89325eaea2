/* The workload interpreter and the checks on programs. */
#include <math.h>
#include <stdio.h>

#include "engine_internal.h"

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
static void loop_end(psTask *p, const psOp *o) {
  psLoopFrame *f = &p->loop[p->loop_depth - 1];
  if (f->left < 0 || f->left-- > 0) {
    p->pc = o->arg + 1;
    return;
  }
  p->loop_depth--;
  p->pc++;
}

void ps_program_advance(const psModel *m, psData *d, int32_t ti) {
  psTask *p = &d->task[ti];
  const psProgram *prog = &m->progs[p->prog];
  int cpu = p->cpu;
  while (!d->failed) {
    ps_count_action(d);
    if (d->failed) return;
    if (p->pc >= prog->first + prog->n) {
      ps_do_exit(m, d, p);
      return;
    }
    const psOp *o = &m->ops[p->pc];
    switch (o->kind) {
      case PS_OP_RUN:
        p->pc++;
        p->burst_left_ns = psu_dist_sample(&o->d, &p->rng);
        if (p->burst_left_ns > 0) return;
        break;
      case PS_OP_SLEEP:
        p->pc++;
        ps_do_sleep(m, d, p, psu_dist_sample(&o->d, &p->rng));
        ps_resched_cpu(d, cpu);
        return;
      case PS_OP_IO:
        p->pc++;
        ps_do_io(m, d, p, psu_dist_sample(&o->d, &p->rng));
        ps_resched_cpu(d, cpu);
        return;
      case PS_OP_WAIT:
        p->pc++;
        if (ps_do_wait(m, d, p, o->arg)) {
          ps_resched_cpu(d, cpu);
          return;
        }
        break;
      case PS_OP_POST:
        p->pc++;
        ps_do_post(m, d, o->arg, p, o->arg2);
        break;
      case PS_OP_LOOP: {
        psLoopFrame *f = &p->loop[p->loop_depth++];
        f->op = p->pc;
        f->left = o->arg ? (int64_t)o->arg - 1 : -1;
        p->pc++;
        break;
      }
      case PS_OP_END:
        loop_end(p, o);
        break;
      case PS_OP_FORK:
        if (o->arg >= m->nprogs) {
          ps_fail(d, "pid %d forks program %d, which does not exist", p->pid, o->arg);
          return;
        }
        if (!p->op_left) p->op_left = o->arg2;
        if (ps_do_fork(m, d, ti, o->arg)) return;
        p = &d->task[ti];  /* fork may have moved the task array */
        if (--p->op_left == 0) p->pc++;
        break;
      case PS_OP_EXIT:
        ps_do_exit(m, d, p);
        return;
      case PS_OP_YIELD:
        p->pc++;
        m->policy->yield(m, d, p);
        ps_resched_cpu(d, cpu);
        return;
      case PS_OP_NICE:
        p->pc++;
        ps_do_nice(m, d, p, o->arg);
        break;
      default: /* PS_OP_SETSCHED */
        p->pc++;
        m->policy->set_scheduler(m, d, p, o->arg, o->arg2);
        break;
    }
    /* a syscall that asked for a reschedule returns through schedule() */
    if (d->cpu[cpu].need_resched) return;
  }
}

/* The model: machine, policy parameters, programs and sources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysched.h"

static int64_t scaled_default(const psParamInfo *p, int hz) {
  if (!p->hz_scaled) return p->def;
  int64_t v = p->def * hz / 1000;
  return v < 1 && p->def > 0 ? 1 : v;
}

int ps_param_index(const psModel *m, const char *name) {
  for (int i = 0; i < m->policy->nparams; i++)
    if (!strcmp(m->policy->params[i].name, name)) return i;
  return -1;
}

int ps_preset_hz(const psPreset *p) { return p->hz ? p->hz : 1000; }

void ps_model_find_timer_params(psModel *m) {
  m->hrtimer_param = ps_param_index(m, "hrtimer_sleep");
  m->slack_param = ps_param_index(m, "timer_slack_ns");
  if (m->slack_param < 0) m->hrtimer_param = -1;
}

int ps_model_init(psModel *m, const psPreset *preset, int ncpu, int hz, uint64_t seed,
                  char *err, int errlen) {
  if (ps_model_defaults(m, preset, ncpu, hz, seed, err, errlen)) return -1;
  return m->hooks.configure(m, err, errlen);
}

int ps_model_defaults(psModel *m, const psPreset *preset, int ncpu, int hz, uint64_t seed,
                      char *err, int errlen) {
  memset(m, 0, sizeof(*m));
  if (!hz) hz = ps_preset_hz(preset);
  if (ncpu < 1 || ncpu > PS_MAX_CPUS) {
    snprintf(err, errlen, "cpus=%d is outside 1..%d", ncpu, PS_MAX_CPUS);
    return -1;
  }
  if (hz < 1 || hz > 100000 || 1000000000 % hz) {
    snprintf(err, errlen, "hz=%d must divide 1e9 and lie in 1..100000", hz);
    return -1;
  }
  const psPolicy *pol = preset->policy;
  if (ps_hooks_resolve(pol, &m->hooks, err, errlen)) return -1;
  m->ncpu = ncpu;
  m->hz = hz;
  m->tick_ns = 1000000000 / hz;
  m->seed = seed;
  m->policy = pol;
  m->rq_stride = ps_rq_stride(pol, ncpu);
  m->preset = preset;
  m->max_tasks = 100000;
  m->series_every = 1;
  m->max_trace_bytes = (int64_t)256 << 20;
  m->fast_paths = PS_FAST_ALL;
  m->starve_ns = PS_MAX_TIME_NS;  /* no wait is starvation until a threshold is set */
  for (int i = 0; i < pol->nparams; i++) m->param[i] = scaled_default(&pol->params[i], hz);
  ps_model_find_timer_params(m);
  for (int l = 0; l < 3 && preset->overrides[l]; l++)
    for (const psOverride *o = preset->overrides[l]; o->name; o++) {
      int i = ps_param_index(m, o->name);
      psParamInfo scaled = pol->params[i];
      scaled.def = o->value;
      m->param[i] = scaled_default(&scaled, hz);
    }
  return 0;
}

int ps_formula_index(const psPolicy *pol, const char *name) {
  for (int i = 0; i < pol->nformulas; i++)
    if (!strcmp(pol->formulas[i].name, name)) return i;
  return -1;
}

int ps_formula_call(const psModel *m, int i, const int64_t *args, int n, int64_t *out, char *err,
                    int errlen) {
  const psFormula *f = &m->policy->formulas[i];
  if (n != f->nargs) {
    snprintf(err, errlen, "%s takes %d arguments (%s), not %d", f->name, f->nargs, f->args, n);
    return -1;
  }
  for (int k = 0; k < n; k++)
    if (args[k] < f->min[k] || args[k] > f->max[k]) {
      /* the k-th name of the comma-separated list */
      const char *a = f->args;
      for (int j = 0; j < k; j++) a = strchr(a, ',') + 1;
      while (*a == ' ') a++;
      int len = (int)strcspn(a, ",");
      snprintf(err, errlen, "%.*s=%lld is outside the allowed range %lld..%lld", len, a,
               (long long)args[k], (long long)f->min[k], (long long)f->max[k]);
      return -1;
    }
  *out = f->fn(m, args);
  return 0;
}

int64_t ps_derived_value(const psModel *m, int i) {
  return psu_field_read(m->derived, &m->policy->derived_fields[i]);
}

const psColumn *ps_queue_columns(const psPolicy *pol, int *n) {
  if (pol->queue_columns) {
    *n = pol->nqueue_columns;
    return pol->queue_columns;
  }
  *n = 2;
  return ps_default_queue_columns;
}

void ps_model_free(psModel *m) {
  free(m->ops);
  free(m->masks);
  free(m->progs);
  free(m->src);
  memset(m, 0, sizeof(*m));
}

int ps_model_copy(psModel *dst, const psModel *src) {
  *dst = *src;
  dst->ctx = NULL;
  dst->ops = NULL;
  dst->masks = NULL;
  dst->progs = NULL;
  dst->src = NULL;
  if (src->cap_ops && !(dst->ops = malloc((size_t)src->cap_ops * sizeof(psOp)))) goto nomem;
  if (src->cap_masks && !(dst->masks = malloc((size_t)src->cap_masks * sizeof(psCpuMask)))) goto nomem;
  if (src->cap_progs && !(dst->progs = malloc((size_t)src->cap_progs * sizeof(psProgram)))) goto nomem;
  if (src->cap_src && !(dst->src = malloc((size_t)src->cap_src * sizeof(psSourceDef)))) goto nomem;
  if (src->nops) memcpy(dst->ops, src->ops, (size_t)src->nops * sizeof(psOp));
  if (src->nmasks) memcpy(dst->masks, src->masks, (size_t)src->nmasks * sizeof(psCpuMask));
  if (src->nprogs) memcpy(dst->progs, src->progs, (size_t)src->nprogs * sizeof(psProgram));
  if (src->nsrc) memcpy(dst->src, src->src, (size_t)src->nsrc * sizeof(psSourceDef));
  return 0;
nomem:
  ps_model_free(dst);
  return -1;
}

int ps_set_params(psModel *m, const char *const *names, const int64_t *values, int n, char *err,
                  int errlen) {
  int64_t saved[PS_MAX_PARAMS];
  unsigned char derived[PS_DERIVED_BYTES];
  memcpy(saved, m->param, sizeof saved);
  memcpy(derived, m->derived, sizeof derived);
  for (int k = 0; k < n; k++) {
    int i = ps_param_index(m, names[k]);
    if (i < 0) {
      snprintf(err, errlen, "unknown parameter '%s' for policy %s", names[k], m->policy->name);
      goto undo;
    }
    const psParamInfo *p = &m->policy->params[i];
    if (values[k] < p->min || values[k] > p->max) {
      snprintf(err, errlen, "%s=%lld is outside the allowed range %lld..%lld (%s)", names[k],
               (long long)values[k], (long long)p->min, (long long)p->max, p->unit);
      goto undo;
    }
    m->param[i] = values[k];
  }
  /* the set is checked as a whole: limits may depend on one another */
  if (m->hooks.configure(m, err, errlen)) goto undo;
  return 0;
undo:
  memcpy(m->param, saved, sizeof saved);
  memcpy(m->derived, derived, sizeof derived);
  return -1;
}

/* Room for `need` elements in the array `arr` of capacity `cap`, which
 * doubles from `first`; out of memory, to `label` with both unchanged.  A
 * macro: the arrays are of several types. */
#define GROW_OR(arr, cap, need, first, label)                      \
  do {                                                             \
    if ((need) > (cap)) {                                          \
      int32_t cap_ = (cap) ? (cap) : (first);                      \
      while (cap_ < (need)) cap_ *= 2;                             \
      void *grown_ = realloc((arr), (size_t)cap_ * sizeof *(arr)); \
      if (!grown_) goto label;                                     \
      (arr) = grown_;                                              \
      (cap) = cap_;                                                \
    }                                                              \
  } while (0)

int ps_add_program(psModel *m, const psOp *ops, int n, const psCpuMask *masks, int nmasks,
                   char *err, int errlen) {
  if (n < 0 || n > 1000000) {
    snprintf(err, errlen, "a program has %d ops; allowed 0..1000000", n);
    return -1;
  }
  if (nmasks < 0 || nmasks > n) {
    snprintf(err, errlen, "a program of %d ops has %d CPU sets; allowed 0..%d", n, nmasks, n);
    return -1;
  }
  /* fork targets may be programs added after this one (a program that
   * forks itself, or a batch): the interpreter checks them when it forks */
  if (psu_program_check(ops, n, 1 << 20, m->nchan, err, errlen)) return -1;
  psCpuMask all;
  ps_cpumask_fill(&all, m->ncpu);
  for (int i = 0; i < n; i++) {
    if (ops[i].kind != PS_OP_AFFINITY) continue;
    if (ops[i].arg >= nmasks) {
      snprintf(err, errlen, "op %d: set_affinity names CPU set %d; the program has 0..%d", i,
               ops[i].arg, nmasks - 1);
      return -1;
    }
    const psCpuMask *s = &masks[ops[i].arg];
    if (!ps_cpumask_any(s)) {
      snprintf(err, errlen, "op %d: set_affinity to no CPU", i);
      return -1;
    }
    if (!ps_cpumask_subset(s, &all)) {
      snprintf(err, errlen, "op %d: set_affinity names cpu %d; this machine has cpus 0..%d", i,
               ps_cpumask_last(s), m->ncpu - 1);
      return -1;
    }
  }
  GROW_OR(m->masks, m->cap_masks, m->nmasks + nmasks, 4, nomem);
  GROW_OR(m->ops, m->cap_ops, m->nops + n, 64, nomem);
  GROW_OR(m->progs, m->cap_progs, m->nprogs + 1, 16, nomem);
  int first = m->nops;
  for (int i = 0; i < n; i++) {
    psOp o = ops[i];
    /* loop/end references are relative to the program; make them absolute */
    if (o.kind == PS_OP_LOOP) o.arg2 += first;
    if (o.kind == PS_OP_END) o.arg += first;
    /* and CPU sets the model's */
    if (o.kind == PS_OP_AFFINITY) o.arg += m->nmasks;
    m->ops[first + i] = o;
  }
  m->nops += n;
  if (nmasks) memcpy(m->masks + m->nmasks, masks, (size_t)nmasks * sizeof(psCpuMask));
  m->nmasks += nmasks;
  m->progs[m->nprogs].first = first;
  m->progs[m->nprogs].n = n;
  return m->nprogs++;
nomem:
  snprintf(err, errlen, "out of memory adding a program");
  return -1;
}

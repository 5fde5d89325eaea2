/* Checks of a policy library before pysched uses any of it (policy_lib.h).
 * A built-in policy is checked by its tests; a library's policy comes from
 * a user's file, so everything the engine, the binding and snapshots take
 * for granted about a psPolicy is verified here, with a message that says
 * which table entry is wrong. */
#include <stdio.h>
#include <string.h>

#include "policy_lib.h"

#define BAD(...)                        \
  do {                                  \
    snprintf(err, errlen, __VA_ARGS__); \
    return -1;                          \
  } while (0)

static int name_ok(const char *s) { return s && *s && strlen(s) < PS_SNAPSHOT_NAME; }

static size_t field_size(int type) { return type == PS_F_I64 || type == PS_F_U64 ? 8 : 4; }

/* A state table: types known, areas among `areas` (a mask of 1 << PS_AT_*),
 * names short and unique, each field inside its area (`size` bytes, or
 * psTask for PS_AT_TASK). */
static int fields_ok(const psPolicy *pol, const char *what, const psFieldInfo *f, int n,
                     size_t size, unsigned areas, char *err, int errlen) {
  int task_table = (areas >> PS_AT_TASK) & 1;
  if (n < 0 || (n && !f)) BAD("policy %s: %s: %d entries", pol->name, what, n);
  for (int i = 0; i < n; i++) {
    if (!name_ok(f[i].name))
      BAD("policy %s: %s field %d has no name, or one of 64 bytes or more", pol->name, what, i);
    if (f[i].type != PS_F_I32 && f[i].type != PS_F_U32 && f[i].type != PS_F_I64 &&
        f[i].type != PS_F_U64)
      BAD("policy %s: %s field %s: type %d is not PS_F_I32, PS_F_U32, PS_F_I64 or PS_F_U64",
          pol->name, what, f[i].name, f[i].type);
    if (f[i].at < 0 || f[i].at > PS_AT_MODEL || !((areas >> f[i].at) & 1))
      BAD("policy %s: %s field %s: area %d is not allowed here", pol->name, what, f[i].name,
          f[i].at);
    size_t limit = f[i].at == PS_AT_TASK ? sizeof(psTask) : size;
    if (f[i].offset > limit || field_size(f[i].type) > limit - f[i].offset)
      BAD("policy %s: %s field %s: offset %zu + %zu bytes lies outside its %zu-byte area",
          pol->name, what, f[i].name, f[i].offset, field_size(f[i].type), limit);
    for (int k = 0; k < i; k++)
      if (!strcmp(f[k].name, f[i].name))
        BAD("policy %s: %s field %s appears twice", pol->name, what, f[i].name);
    for (int k = 0; task_table && k < ps_ntask_fields; k++)
      if (!strcmp(ps_task_fields[k].name, f[i].name))
        BAD("policy %s: task field %s has the name of a generic field", pol->name, f[i].name);
  }
  return 0;
}

static int is_task_field(const psPolicy *pol, const char *name) {
  for (int k = 0; k < ps_ntask_fields; k++)
    if (!strcmp(ps_task_fields[k].name, name)) return 1;
  for (int k = 0; k < pol->ntask_fields; k++)
    if (!strcmp(pol->task_fields[k].name, name)) return 1;
  return 0;
}

static int param_index(const psPolicy *pol, const char *name) {
  for (int i = 0; i < pol->nparams; i++)
    if (!strcmp(pol->params[i].name, name)) return i;
  return -1;
}

static int params_ok(const psPolicy *pol, char *err, int errlen) {
  if (pol->nparams < 0 || pol->nparams > PS_MAX_PARAMS || (pol->nparams && !pol->params))
    BAD("policy %s: %d parameters; allowed 0..%d", pol->name, pol->nparams, PS_MAX_PARAMS);
  for (int i = 0; i < pol->nparams; i++) {
    const psParamInfo *p = &pol->params[i];
    if (!name_ok(p->name) || !p->unit)
      BAD("policy %s: parameter %d needs a name (under 64 bytes) and a unit", pol->name, i);
    if (param_index(pol, p->name) != i)
      BAD("policy %s: parameter %s appears twice", pol->name, p->name);
    if (p->min > p->max || p->def < p->min || p->def > p->max)
      BAD("policy %s: parameter %s: default %lld outside its range %lld..%lld", pol->name,
          p->name, (long long)p->def, (long long)p->min, (long long)p->max);
  }
  return 0;
}

static int formulas_ok(const psPolicy *pol, char *err, int errlen) {
  if (pol->nformulas < 0 || (pol->nformulas && !pol->formulas))
    BAD("policy %s: %d formulas", pol->name, pol->nformulas);
  for (int i = 0; i < pol->nformulas; i++) {
    const psFormula *f = &pol->formulas[i];
    if (!f->name || !f->fn || !f->args)
      BAD("policy %s: formula %d needs a name, args and fn", pol->name, i);
    if (f->nargs < 0 || f->nargs > 4)
      BAD("policy %s: formula %s takes %d arguments; allowed 0..4", pol->name, f->name, f->nargs);
    /* the error message of a call names an argument by its place in args */
    int commas = 0;
    for (const char *c = f->args; *c; c++) commas += *c == ',';
    if (f->nargs ? commas != f->nargs - 1 : *f->args != 0)
      BAD("policy %s: formula %s: args \"%s\" does not name its %d arguments", pol->name, f->name,
          f->args, f->nargs);
    for (int k = 0; k < f->nargs; k++)
      if (f->min[k] > f->max[k])
        BAD("policy %s: formula %s: argument %d has min > max", pol->name, f->name, k + 1);
  }
  return 0;
}

static int presets_ok(const psPolicy *pol, char *err, int errlen) {
  if (pol->npresets < 1 || !pol->presets) BAD("policy %s declares no preset", pol->name);
  for (int i = 0; i < pol->npresets; i++) {
    const psPreset *pre = &pol->presets[i];
    if (!name_ok(pre->name)) BAD("policy %s: preset %d needs a name under 64 bytes", pol->name, i);
    if (pre->policy != pol) BAD("preset %s does not name its policy %s", pre->name, pol->name);
    if (pre->hz && (pre->hz < 1 || pre->hz > 100000 || 1000000000 % pre->hz))
      BAD("preset %s: hz=%d must divide 1e9 and lie in 1..100000 (or 0: 1000)", pre->name, pre->hz);
    for (int l = 0; l < 3 && pre->overrides[l]; l++)
      for (const psOverride *o = pre->overrides[l]; o->name; o++)
        if (param_index(pol, o->name) < 0)
          BAD("preset %s overrides '%s', which is not a parameter of policy %s", pre->name,
              o->name, pol->name);
  }
  return 0;
}

int ps_policy_check(const psPolicy *pol, char *err, int errlen) {
  if (!pol) BAD("a NULL policy");
  if (!pol->name || !*pol->name) BAD("a policy without a name");
  psHooks hooks;
  if (ps_hooks_resolve(pol, &hooks, err, errlen)) return -1;
  if (pol->rq_size < 1 || pol->rq_size > ((size_t)1 << 24))
    BAD("policy %s: rq_size %zu; allowed 1..%d bytes", pol->name, pol->rq_size, 1 << 24);
  if (pol->rq_per_cpu > 64)
    BAD("policy %s: rq_per_cpu %zu; allowed 0..64 bytes", pol->name, pol->rq_per_cpu);
  if (pol->tick_batch_local < 0 || pol->tick_batch_local > PS_TICK_BATCH_TRUSTED)
    BAD("policy %s: tick_batch_local %d; allowed 0..%d", pol->name, pol->tick_batch_local,
        PS_TICK_BATCH_TRUSTED);
  if (params_ok(pol, err, errlen) ||
      fields_ok(pol, "task", pol->task_fields, pol->ntask_fields, PS_TASK_PRIV,
                1u << PS_AT_PRIV | 1u << PS_AT_TASK, err, errlen) ||
      fields_ok(pol, "runqueue", pol->rq_fields, pol->nrq_fields, pol->rq_size, 1u << PS_AT_PRIV,
                err, errlen) ||
      fields_ok(pol, "derived", pol->derived_fields, pol->nderived_fields, PS_DERIVED_BYTES,
                1u << PS_AT_PRIV | 1u << PS_AT_MODEL, err, errlen) ||
      formulas_ok(pol, err, errlen) || presets_ok(pol, err, errlen))
    return -1;
  for (int i = 0; pol->headline && pol->headline[i]; i++)
    if (!is_task_field(pol, pol->headline[i]))
      BAD("policy %s: headline field %s is not a task field", pol->name, pol->headline[i]);
  if (pol->queue_columns && (pol->nqueue_columns < 1 || pol->nqueue_columns > 16))
    BAD("policy %s: %d queue columns; allowed 1..16", pol->name, pol->nqueue_columns);
  for (int i = 0; pol->queue_columns && i < pol->nqueue_columns; i++)
    if (!pol->queue_columns[i].name) BAD("policy %s: queue column %d has no name", pol->name, i);
  return 0;
}

int ps_policy_library_check(const psPolicyLibrary *lib, const char *origin, char *err,
                            int errlen) {
  if (lib->abi != PS_ABI_VERSION)
    BAD("%s was built for pysched policy ABI %d; this pysched has ABI %d: build it again "
        "against this pysched's headers", origin, lib->abi, PS_ABI_VERSION);
  static const char *const names[PS_ABI_NSIZES] = PS_ABI_NAMES;
  const uint64_t sizes[PS_ABI_NSIZES] = PS_ABI_SIZES;
  for (int i = 0; i < PS_ABI_NSIZES; i++)
    if (lib->sizes[i] != sizes[i])
      BAD("%s saw a %s of %llu bytes where this pysched has %llu, though both say ABI %d: its "
          "headers are not this pysched's", origin, names[i], (unsigned long long)lib->sizes[i],
          (unsigned long long)sizes[i], PS_ABI_VERSION);
  if (lib->npolicies < 1 || !lib->policies) BAD("%s names no policy", origin);
  char msg[PS_ERRLEN];
  for (int k = 0; k < lib->npolicies; k++) {
    if (ps_policy_check(lib->policies[k], msg, sizeof msg)) BAD("%s: %s", origin, msg);
    /* preset names are unique within the library (across libraries, the
     * binding's registry sees to it) */
    for (int j = 0; j <= k; j++)
      for (int a = 0; a < lib->policies[k]->npresets; a++)
        for (int b = 0; b < (j < k ? lib->policies[j]->npresets : a); b++)
          if (!strcmp(lib->policies[k]->presets[a].name, lib->policies[j]->presets[b].name))
            BAD("%s: preset %s is declared twice", origin, lib->policies[k]->presets[a].name);
  }
  return 0;
}

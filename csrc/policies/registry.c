/* The registry: every policy the core knows, each with the presets its own
 * file declares.  A new policy is one C file and one line in PS_POLICIES. */
#include <string.h>

#include "policy.h"

#define PS_POLICIES(X)  \
  X(ps_policy_o1)       \
  X(ps_policy_houston)  \
  X(ps_policy_linux24)  \
  X(ps_policy_cfs)      \
  X(ps_policy_eevdf)    \
  /* a new policy: one line above this one */

#define DECLARE(p) extern const psPolicy p;
PS_POLICIES(DECLARE)
#undef DECLARE

#define ENTRY(p) &p,
static const psPolicy *const policies[] = {PS_POLICIES(ENTRY)};
#undef ENTRY

#define NPOLICIES ((int)(sizeof(policies) / sizeof(policies[0])))

int ps_npresets(void) {
  int n = 0;
  for (int k = 0; k < NPOLICIES; k++) n += policies[k]->npresets;
  return n;
}

const psPreset *ps_preset(int i) {
  for (int k = 0; k < NPOLICIES; k++) {
    if (i < policies[k]->npresets) return &policies[k]->presets[i];
    i -= policies[k]->npresets;
  }
  return NULL;
}

const psPreset *ps_preset_find(const char *name) {
  for (int k = 0; k < NPOLICIES; k++)
    for (int i = 0; i < policies[k]->npresets; i++)
      if (!strcmp(policies[k]->presets[i].name, name)) return &policies[k]->presets[i];
  return NULL;
}

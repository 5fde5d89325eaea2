/* Jim Houston's self-tuning scheduler (the 2003 patch against 2.5.64-bk4). */
#ifndef PS_POLICY_HOUSTON_H
#define PS_POLICY_HOUSTON_H
#include "houston_math.h"
#include "pysched.h"

extern const psPolicy ps_policy_houston;

/* The constants a model of this policy runs with (in psModel.derived). */
static inline const houston_const *ps_houston_const(const psModel *m) {
  return (const houston_const *)m->derived;
}

#endif

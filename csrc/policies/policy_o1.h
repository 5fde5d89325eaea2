/* The Linux 2.5 O(1) scheduler family's 2.5 member (2.5.64, -bk4, 2.5.65). */
#ifndef PS_POLICY_O1_H
#define PS_POLICY_O1_H
#include "policy.h"

extern const psPolicy ps_policy_o1;

#endif

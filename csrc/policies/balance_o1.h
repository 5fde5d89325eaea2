/* The 2.5 SMP load balancer over priority arrays (fact sheet §5.10), shared
 * by the O(1) family (o1_family.h says how a member differs). */
#ifndef PS_BALANCE_O1_H
#define PS_BALANCE_O1_H
#include "o1_family.h"

/* load_balance(rq, idle): pull tasks from the busiest CPU to `cpu`.
 * Returns the number pulled, or -1 when no runqueue is busy enough to pull
 * from (find_busiest_queue found none). */
int o1_load_balance(const psModel *m, psData *d, int cpu, int idle);

#endif

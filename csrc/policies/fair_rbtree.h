/* The ordered queue of the fair schedulers: a red-black tree of task slots,
 * augmented with the smallest vruntime of each subtree, as the kernel's
 * tasks_timeline (lib/rbtree.c's rb_add_augmented_cached and
 * rb_erase_augmented_cached with kernel/sched/fair.c's min_vruntime_cb).
 * Links are entity ids (task indices, or group entities' ids, fair_common.h),
 * so a state copies with memcpy; the root and the cached leftmost node live
 * in the cfs_rq.
 *
 * Entities with equal keys keep their order of insertion (a new one goes to
 * the right of its equals, as rb_add does), so the tree's in-order sequence
 * is the kernel's whatever its shape: the fair policies only ever read it in
 * order (leftmost, next, the first eligible entity in deadline order). */
#ifndef PS_FAIR_RBTREE_H
#define PS_FAIR_RBTREE_H
#include <stdint.h>

#include "policy.h"
#include "task.h"

/* A node's colour, or where the entity is when it is in no tree. */
enum {
  FAIR_NODE_BLACK = 0,
  FAIR_NODE_RED = 1,
  FAIR_NODE_OFF = -1,  /* in no tree (running as cfs_rq->curr, asleep, or new) */
  FAIR_NODE_RT = 2,    /* on a real-time list: left/right are its next/prev */
};

/* The links, first in every entity's fair_se (fair_common.h). */
typedef struct fair_node {
  int32_t left, right, parent;  /* entity ids (fair_common.h: task slots, or FAIR_GSE + q), -1 none */
  int16_t color;                /* FAIR_NODE_* */
  int16_t group;                /* the task group whose cfs_rq holds the entity (0: the root) */
} fair_node;

/* What the tree is sorted by: vruntime (CFS) or deadline (EEVDF, since 6.9;
 * see fair_common.h for 6.6). */
enum { FAIR_KEY_VRUNTIME = 0, FAIR_KEY_DEADLINE = 1 };

typedef struct fair_tree {
  psTask *task;      /* the task slots (d->task) */
  unsigned char *rq; /* the runqueue areas, holding the group entities (d->rq) */
  size_t rq_size;
  int32_t *root;     /* the runqueue's root and leftmost */
  int32_t *leftmost;
  int key;           /* FAIR_KEY_* */
} fair_tree;

/* Insert slot i (not in any tree) after its equals. */
void fair_rb_insert(const fair_tree *t, int32_t i);
/* Remove slot i, which is in this tree. */
void fair_rb_erase(const fair_tree *t, int32_t i);
/* The next entity in key order, or -1. */
int32_t fair_rb_next(const psModel *m, const psData *d, int32_t i);
/* The leftmost entity of the subtree at i (-1 for an empty subtree). */
int32_t fair_rb_first(const psModel *m, const psData *d, int32_t i);

/* The tree's invariants: links valid entity ids (fair_ent_ok) and mutually consistent, no
 * cycle, keys in order, no red node with a red child, equal black heights,
 * every subtree's min_vruntime right, leftmost right; *count is set to the
 * number of nodes.  0, or -1 with a message.  Safe on a damaged state. */
int fair_rb_check(const psModel *m, const psData *d, const fair_tree *t, int32_t *count, char *err,
                  int errlen);

#endif

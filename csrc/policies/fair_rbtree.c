/* The fair schedulers' augmented red-black tree (fair_rbtree.h): the
 * textbook insertion and deletion (CLRS, with an explicit parent for a nil
 * child), the augment recomputed bottom-up along every changed path and at
 * both nodes of a rotation, as lib/rbtree.c's augmented callbacks do. */
#include "fair_rbtree.h"

#include <stdio.h>

#include "fair_common.h"

#define NIL (-1)

#define RB_GROUPS 0
#define RB(name) name##_tasks
#include "fair_rbtree_impl.h"
#undef RB
#undef RB_GROUPS
#define RB_GROUPS 1
#define RB(name) name##_groups
#include "fair_rbtree_impl.h"
#undef RB
#undef RB_GROUPS

/* a tree with no group entity (fair_tree.rq NULL) takes the task-only copy */
void fair_rb_insert(const fair_tree *t, int32_t i) {
  if (t->rq)
    fair_rb_insert_groups(t, i);
  else
    fair_rb_insert_tasks(t, i);
}

void fair_rb_erase(const fair_tree *t, int32_t z) {
  if (t->rq)
    fair_rb_erase_groups(t, z);
  else
    fair_rb_erase_tasks(t, z);
}

static inline const fair_node *Nc(const psModel *m, const psData *d, int32_t i) {
  return &fair_ent(m, d, i)->node;
}

int32_t fair_rb_first(const psModel *m, const psData *d, int32_t i) {
  if (i == NIL) return NIL;
  while (Nc(m, d, i)->left != NIL) i = Nc(m, d, i)->left;
  return i;
}

int32_t fair_rb_next(const psModel *m, const psData *d, int32_t i) {
  if (Nc(m, d, i)->right != NIL) return fair_rb_first(m, d, Nc(m, d, i)->right);
  int32_t p = Nc(m, d, i)->parent;
  while (p != NIL && Nc(m, d, p)->right == i) {
    i = p;
    p = Nc(m, d, p)->parent;
  }
  return p;
}

/* ---- invariants ---- */

typedef struct walk {
  const psModel *m;
  const psData *d;
  const fair_tree *t;
  int32_t limit, count, prev;
  char *err;
  int errlen;
} walk;

/* Check the subtree at i (reached from parent), in order; returns its
 * black height, or -1 with err set. */
static int check_subtree(walk *w, int32_t i, int32_t parent, int depth) {
  if (i == NIL) return 1;
  if (!fair_ent_ok(w->m, w->d, i) || depth > 2 * 32 + 2 || ++w->count > w->limit) {
    snprintf(w->err, w->errlen, "tree: a link out of range, too deep or a cycle (slot %d)", i);
    return -1;
  }
  const fair_node *n = N_groups(w->t, i);
  if (n->parent != parent || (n->color != FAIR_NODE_RED && n->color != FAIR_NODE_BLACK)) {
    snprintf(w->err, w->errlen, "tree: slot %d has a wrong parent or colour", i);
    return -1;
  }
  if (n->color == FAIR_NODE_RED && (red_groups(w->t, n->left) || red_groups(w->t, n->right))) {
    snprintf(w->err, w->errlen, "tree: red slot %d has a red child", i);
    return -1;
  }
  int hl = check_subtree(w, n->left, i, depth + 1);
  if (hl < 0) return -1;
  if (w->prev != NIL && less_groups(w->t, i, w->prev)) {
    snprintf(w->err, w->errlen, "tree: slot %d is out of key order", i);
    return -1;
  }
  w->prev = i;
  int hr = check_subtree(w, n->right, i, depth + 1);
  if (hr < 0) return -1;
  if (hl != hr) {
    snprintf(w->err, w->errlen, "tree: unequal black heights below slot %d", i);
    return -1;
  }
  const fair_se *se = E_groups(w->t, i);
  uint64_t v = se->vruntime;
  if (n->left != NIL) v = min_vruntime_of(v, E_groups(w->t, n->left)->min_vruntime);
  if (n->right != NIL) v = min_vruntime_of(v, E_groups(w->t, n->right)->min_vruntime);
  if (v != se->min_vruntime) {
    snprintf(w->err, w->errlen, "tree: slot %d's min_vruntime is stale", i);
    return -1;
  }
  return hl + (n->color == FAIR_NODE_BLACK);
}

int fair_rb_check(const psModel *m, const psData *d, const fair_tree *t, int32_t *count, char *err,
                  int errlen) {
  walk w = {m, d, t, d->ntask + m->ncpu * FAIR_MAX_GROUPS, 0, NIL, err, errlen};
  int32_t root = *t->root;
  if ((root != NIL && !fair_ent_ok(m, d, root)) ||
      (*t->leftmost != NIL && !fair_ent_ok(m, d, *t->leftmost))) {
    snprintf(err, errlen, "tree: root or leftmost out of range");
    return -1;
  }
  if (root != NIL && N_groups(t, root)->color != FAIR_NODE_BLACK) {
    snprintf(err, errlen, "tree: the root is not black");
    return -1;
  }
  if (check_subtree(&w, root, NIL, 0) < 0) return -1;
  if (*t->leftmost != fair_rb_first_t_groups(t, root)) {
    snprintf(err, errlen, "tree: the cached leftmost is wrong");
    return -1;
  }
  *count = w.count;
  return 0;
}

/* The fair schedulers' augmented red-black tree (fair_rbtree.h): the
 * textbook insertion and deletion (CLRS, with an explicit parent for a nil
 * child), the augment recomputed bottom-up along every changed path and at
 * both nodes of a rotation, as lib/rbtree.c's augmented callbacks do. */
#include "fair_rbtree.h"

#include <stdio.h>

#include "fair_common.h"

#define NIL (-1)

static inline fair_se *E(const fair_tree *t, int32_t i) { return fair_ent(t->m, t->d, i); }
static inline fair_node *N(const fair_tree *t, int32_t i) { return &E(t, i)->node; }
static inline const fair_node *Nc(const psModel *m, const psData *d, int32_t i) {
  return &fair_ent(m, d, i)->node;
}

static uint64_t key_of(const fair_se *se, int key) {
  return key == FAIR_KEY_DEADLINE ? se->deadline : se->vruntime;
}

/* entity_before / __entity_less: (s64)(a - b) < 0 */
static int less(const fair_tree *t, int32_t a, int32_t b) {
  return vdiff(key_of(E(t, a), t->key), key_of(E(t, b), t->key)) < 0;
}

static int red(const fair_tree *t, int32_t i) { return i != NIL && N(t, i)->color == FAIR_NODE_RED; }

/* min_vruntime_update: se->min_vruntime = min(se->vruntime, children's) */
static void augment(const fair_tree *t, int32_t i) {
  fair_se *se = E(t, i);
  uint64_t v = se->vruntime;
  int32_t c[2] = {se->node.left, se->node.right};
  for (int k = 0; k < 2; k++)
    if (c[k] != NIL) v = min_vruntime_of(v, E(t, c[k])->min_vruntime);
  se->min_vruntime = v;
}

static void propagate(const fair_tree *t, int32_t i) {
  for (; i != NIL; i = N(t, i)->parent) augment(t, i);
}

/* Put v where u was (u's parent now points to v). */
static void replace_child(const fair_tree *t, int32_t u, int32_t v) {
  int32_t p = N(t, u)->parent;
  if (p == NIL)
    *t->root = v;
  else if (N(t, p)->left == u)
    N(t, p)->left = v;
  else
    N(t, p)->right = v;
  if (v != NIL) N(t, v)->parent = p;
}

static void rotate_left(const fair_tree *t, int32_t x) {
  int32_t y = N(t, x)->right;
  N(t, x)->right = N(t, y)->left;
  if (N(t, y)->left != NIL) N(t, N(t, y)->left)->parent = x;
  replace_child(t, x, y);
  N(t, y)->left = x;
  N(t, x)->parent = y;
  augment(t, x);
  augment(t, y);
}

static void rotate_right(const fair_tree *t, int32_t x) {
  int32_t y = N(t, x)->left;
  N(t, x)->left = N(t, y)->right;
  if (N(t, y)->right != NIL) N(t, N(t, y)->right)->parent = x;
  replace_child(t, x, y);
  N(t, y)->right = x;
  N(t, x)->parent = y;
  augment(t, x);
  augment(t, y);
}

void fair_rb_insert(const fair_tree *t, int32_t i) {
  int32_t parent = NIL, node = *t->root;
  int leftmost = 1, left = 0;
  while (node != NIL) {
    parent = node;
    left = less(t, i, node);
    if (left) {
      node = N(t, node)->left;
    } else {
      node = N(t, node)->right;
      leftmost = 0;
    }
  }
  fair_node *n = N(t, i);
  n->left = n->right = NIL;
  n->parent = parent;
  n->color = FAIR_NODE_RED;
  if (parent == NIL)
    *t->root = i;
  else if (left)
    N(t, parent)->left = i;
  else
    N(t, parent)->right = i;
  if (leftmost) *t->leftmost = i;
  propagate(t, i);
  /* the insertion fixup */
  int32_t z = i;
  while (red(t, N(t, z)->parent)) {
    int32_t p = N(t, z)->parent, g = N(t, p)->parent;
    if (p == N(t, g)->left) {
      int32_t u = N(t, g)->right;
      if (red(t, u)) {
        N(t, p)->color = N(t, u)->color = FAIR_NODE_BLACK;
        N(t, g)->color = FAIR_NODE_RED;
        z = g;
        continue;
      }
      if (z == N(t, p)->right) {
        z = p;
        rotate_left(t, z);
        p = N(t, z)->parent;
      }
      N(t, p)->color = FAIR_NODE_BLACK;
      N(t, g)->color = FAIR_NODE_RED;
      rotate_right(t, g);
    } else {
      int32_t u = N(t, g)->left;
      if (red(t, u)) {
        N(t, p)->color = N(t, u)->color = FAIR_NODE_BLACK;
        N(t, g)->color = FAIR_NODE_RED;
        z = g;
        continue;
      }
      if (z == N(t, p)->left) {
        z = p;
        rotate_right(t, z);
        p = N(t, z)->parent;
      }
      N(t, p)->color = FAIR_NODE_BLACK;
      N(t, g)->color = FAIR_NODE_RED;
      rotate_left(t, g);
    }
  }
  N(t, *t->root)->color = FAIR_NODE_BLACK;
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

static void erase_fixup(const fair_tree *t, int32_t x, int32_t xp) {
  while (x != *t->root && !red(t, x)) {
    if (x == N(t, xp)->left) {
      int32_t w = N(t, xp)->right;
      if (red(t, w)) {
        N(t, w)->color = FAIR_NODE_BLACK;
        N(t, xp)->color = FAIR_NODE_RED;
        rotate_left(t, xp);
        w = N(t, xp)->right;
      }
      if (!red(t, N(t, w)->left) && !red(t, N(t, w)->right)) {
        N(t, w)->color = FAIR_NODE_RED;
        x = xp;
        xp = N(t, x)->parent;
        continue;
      }
      if (!red(t, N(t, w)->right)) {
        N(t, N(t, w)->left)->color = FAIR_NODE_BLACK;
        N(t, w)->color = FAIR_NODE_RED;
        rotate_right(t, w);
        w = N(t, xp)->right;
      }
      N(t, w)->color = N(t, xp)->color;
      N(t, xp)->color = FAIR_NODE_BLACK;
      N(t, N(t, w)->right)->color = FAIR_NODE_BLACK;
      rotate_left(t, xp);
    } else {
      int32_t w = N(t, xp)->left;
      if (red(t, w)) {
        N(t, w)->color = FAIR_NODE_BLACK;
        N(t, xp)->color = FAIR_NODE_RED;
        rotate_right(t, xp);
        w = N(t, xp)->left;
      }
      if (!red(t, N(t, w)->right) && !red(t, N(t, w)->left)) {
        N(t, w)->color = FAIR_NODE_RED;
        x = xp;
        xp = N(t, x)->parent;
        continue;
      }
      if (!red(t, N(t, w)->left)) {
        N(t, N(t, w)->right)->color = FAIR_NODE_BLACK;
        N(t, w)->color = FAIR_NODE_RED;
        rotate_left(t, w);
        w = N(t, xp)->left;
      }
      N(t, w)->color = N(t, xp)->color;
      N(t, xp)->color = FAIR_NODE_BLACK;
      N(t, N(t, w)->left)->color = FAIR_NODE_BLACK;
      rotate_right(t, xp);
    }
    x = *t->root;
    break;
  }
  if (x != NIL) N(t, x)->color = FAIR_NODE_BLACK;
}

void fair_rb_erase(const fair_tree *t, int32_t z) {
  if (*t->leftmost == z) *t->leftmost = fair_rb_next(t->m, t->d, z);
  fair_node *zn = N(t, z);
  int32_t x, xp;
  int removed_black;
  if (zn->left == NIL || zn->right == NIL) {
    x = zn->left == NIL ? zn->right : zn->left;
    xp = zn->parent;
    removed_black = zn->color == FAIR_NODE_BLACK;
    replace_child(t, z, x);
  } else {
    int32_t y = fair_rb_first(t->m, t->d, zn->right);
    fair_node *yn = N(t, y);
    removed_black = yn->color == FAIR_NODE_BLACK;
    x = yn->right;
    if (yn->parent == z) {
      xp = y;
    } else {
      xp = yn->parent;
      replace_child(t, y, x);
      yn->right = zn->right;
      N(t, yn->right)->parent = y;
    }
    replace_child(t, z, y);
    yn->left = zn->left;
    N(t, yn->left)->parent = y;
    yn->color = zn->color;
  }
  /* every changed subtree lies on the path from xp to the root */
  propagate(t, xp);
  if (removed_black) erase_fixup(t, x, xp);
  zn->left = zn->right = zn->parent = NIL;
  zn->color = FAIR_NODE_OFF;
}

/* ---- invariants ---- */

typedef struct walk {
  const fair_tree *t;
  int32_t limit, count, prev;
  char *err;
  int errlen;
} walk;

/* Check the subtree at i (reached from parent), in order; returns its
 * black height, or -1 with err set. */
static int check_subtree(walk *w, int32_t i, int32_t parent, int depth) {
  if (i == NIL) return 1;
  if (!fair_ent_ok(w->t->m, w->t->d, i) || depth > 2 * 32 + 2 || ++w->count > w->limit) {
    snprintf(w->err, w->errlen, "tree: a link out of range, too deep or a cycle (slot %d)", i);
    return -1;
  }
  const fair_node *n = N(w->t, i);
  if (n->parent != parent || (n->color != FAIR_NODE_RED && n->color != FAIR_NODE_BLACK)) {
    snprintf(w->err, w->errlen, "tree: slot %d has a wrong parent or colour", i);
    return -1;
  }
  if (n->color == FAIR_NODE_RED && (red(w->t, n->left) || red(w->t, n->right))) {
    snprintf(w->err, w->errlen, "tree: red slot %d has a red child", i);
    return -1;
  }
  int hl = check_subtree(w, n->left, i, depth + 1);
  if (hl < 0) return -1;
  if (w->prev != NIL && less(w->t, i, w->prev)) {
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
  const fair_se *se = E(w->t, i);
  uint64_t v = se->vruntime;
  if (n->left != NIL) v = min_vruntime_of(v, E(w->t, n->left)->min_vruntime);
  if (n->right != NIL) v = min_vruntime_of(v, E(w->t, n->right)->min_vruntime);
  if (v != se->min_vruntime) {
    snprintf(w->err, w->errlen, "tree: slot %d's min_vruntime is stale", i);
    return -1;
  }
  return hl + (n->color == FAIR_NODE_BLACK);
}

int fair_rb_check(const fair_tree *t, int32_t *count, char *err, int errlen) {
  walk w = {t, t->d->ntask + t->m->ncpu * FAIR_MAX_GROUPS, 0, NIL, err, errlen};
  int32_t root = *t->root;
  if ((root != NIL && !fair_ent_ok(t->m, t->d, root)) ||
      (*t->leftmost != NIL && !fair_ent_ok(t->m, t->d, *t->leftmost))) {
    snprintf(err, errlen, "tree: root or leftmost out of range");
    return -1;
  }
  if (root != NIL && N(t, root)->color != FAIR_NODE_BLACK) {
    snprintf(err, errlen, "tree: the root is not black");
    return -1;
  }
  if (check_subtree(&w, root, NIL, 0) < 0) return -1;
  if (*t->leftmost != fair_rb_first(t->m, t->d, root)) {
    snprintf(err, errlen, "tree: the cached leftmost is wrong");
    return -1;
  }
  *count = w.count;
  return 0;
}

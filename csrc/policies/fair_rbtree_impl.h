/* The body of the fair schedulers' red-black tree (fair_rbtree.c), included
 * there twice: with RB_GROUPS 0 every entity id is a task slot (a machine
 * without task groups, the path of every run before groups existed), with
 * RB_GROUPS 1 an id may be a group entity's.  RB(name) names each copy's
 * functions.  Not a header of its own: fair_rbtree.c defines RB and
 * RB_GROUPS before it includes this. */
static inline fair_se *RB(E)(const fair_tree *t, int32_t i) {
#if RB_GROUPS
  if (i >= FAIR_GSE) return fair_group_se_at(t->rq, t->rq_size, i);
#endif
  return SE(&t->task[i]);
}
static inline fair_node *RB(N)(const fair_tree *t, int32_t i) { return &RB(E)(t, i)->node; }

static uint64_t RB(key_of)(const fair_se *se, int key) {
  return key == FAIR_KEY_DEADLINE ? se->deadline : se->vruntime;
}

/* entity_before / __entity_less: (s64)(a - b) < 0 */
static int RB(less)(const fair_tree *t, int32_t a, int32_t b) {
  return vdiff(RB(key_of)(RB(E)(t, a), t->key), RB(key_of)(RB(E)(t, b), t->key)) < 0;
}

static int RB(red)(const fair_tree *t, int32_t i) { return i != NIL && RB(N)(t, i)->color == FAIR_NODE_RED; }

/* min_vruntime_update: se->min_vruntime = min(se->vruntime, children's) */
static void RB(augment)(const fair_tree *t, int32_t i) {
  fair_se *se = RB(E)(t, i);
  uint64_t v = se->vruntime;
  int32_t c[2] = {se->node.left, se->node.right};
  for (int k = 0; k < 2; k++)
    if (c[k] != NIL) v = min_vruntime_of(v, RB(E)(t, c[k])->min_vruntime);
  se->min_vruntime = v;
}

/* min_vruntime_cb_propagate (RB_DECLARE_CALLBACKS, include/linux/
 * rbtree_augmented.h): augment from i up to stop (exclusive), ending at
 * the first node whose value does not change -- every node above it
 * depends on the changed subtree only through it.  The tree's values are
 * the same as augmenting every node up to the root. */
static void RB(propagate)(const fair_tree *t, int32_t i, int32_t stop) {
  while (i != stop) {
    fair_se *se = RB(E)(t, i);
    uint64_t old = se->min_vruntime;
    RB(augment)(t, i);
    if (se->min_vruntime == old) break;
    i = se->node.parent;
  }
}

/* Put v where u was (u's parent now points to v). */
static void RB(replace_child)(const fair_tree *t, int32_t u, int32_t v) {
  int32_t p = RB(N)(t, u)->parent;
  if (p == NIL)
    *t->root = v;
  else if (RB(N)(t, p)->left == u)
    RB(N)(t, p)->left = v;
  else
    RB(N)(t, p)->right = v;
  if (v != NIL) RB(N)(t, v)->parent = p;
}

static void RB(rotate_left)(const fair_tree *t, int32_t x) {
  int32_t y = RB(N)(t, x)->right;
  RB(N)(t, x)->right = RB(N)(t, y)->left;
  if (RB(N)(t, y)->left != NIL) RB(N)(t, RB(N)(t, y)->left)->parent = x;
  RB(replace_child)(t, x, y);
  RB(N)(t, y)->left = x;
  RB(N)(t, x)->parent = y;
  RB(augment)(t, x);
  RB(augment)(t, y);
}

static void RB(rotate_right)(const fair_tree *t, int32_t x) {
  int32_t y = RB(N)(t, x)->left;
  RB(N)(t, x)->left = RB(N)(t, y)->right;
  if (RB(N)(t, y)->right != NIL) RB(N)(t, RB(N)(t, y)->right)->parent = x;
  RB(replace_child)(t, x, y);
  RB(N)(t, y)->right = x;
  RB(N)(t, x)->parent = y;
  RB(augment)(t, x);
  RB(augment)(t, y);
}

static void RB(fair_rb_insert)(const fair_tree *t, int32_t i) {
  int32_t parent = NIL, node = *t->root;
  int leftmost = 1, left = 0;
  while (node != NIL) {
    parent = node;
    left = RB(less)(t, i, node);
    if (left) {
      node = RB(N)(t, node)->left;
    } else {
      node = RB(N)(t, node)->right;
      leftmost = 0;
    }
  }
  fair_node *n = RB(N)(t, i);
  n->left = n->right = NIL;
  n->parent = parent;
  n->color = FAIR_NODE_RED;
  if (parent == NIL)
    *t->root = i;
  else if (left)
    RB(N)(t, parent)->left = i;
  else
    RB(N)(t, parent)->right = i;
  if (leftmost) *t->leftmost = i;
  /* the new node's own value first (its stale one says nothing) */
  RB(augment)(t, i);
  RB(propagate)(t, parent, NIL);
  /* the insertion fixup */
  int32_t z = i;
  while (RB(red)(t, RB(N)(t, z)->parent)) {
    int32_t p = RB(N)(t, z)->parent, g = RB(N)(t, p)->parent;
    if (p == RB(N)(t, g)->left) {
      int32_t u = RB(N)(t, g)->right;
      if (RB(red)(t, u)) {
        RB(N)(t, p)->color = RB(N)(t, u)->color = FAIR_NODE_BLACK;
        RB(N)(t, g)->color = FAIR_NODE_RED;
        z = g;
        continue;
      }
      if (z == RB(N)(t, p)->right) {
        z = p;
        RB(rotate_left)(t, z);
        p = RB(N)(t, z)->parent;
      }
      RB(N)(t, p)->color = FAIR_NODE_BLACK;
      RB(N)(t, g)->color = FAIR_NODE_RED;
      RB(rotate_right)(t, g);
    } else {
      int32_t u = RB(N)(t, g)->left;
      if (RB(red)(t, u)) {
        RB(N)(t, p)->color = RB(N)(t, u)->color = FAIR_NODE_BLACK;
        RB(N)(t, g)->color = FAIR_NODE_RED;
        z = g;
        continue;
      }
      if (z == RB(N)(t, p)->left) {
        z = p;
        RB(rotate_right)(t, z);
        p = RB(N)(t, z)->parent;
      }
      RB(N)(t, p)->color = FAIR_NODE_BLACK;
      RB(N)(t, g)->color = FAIR_NODE_RED;
      RB(rotate_left)(t, g);
    }
  }
  RB(N)(t, *t->root)->color = FAIR_NODE_BLACK;
}

static int32_t RB(fair_rb_first_t)(const fair_tree *t, int32_t i) {
  if (i == NIL) return NIL;
  while (RB(N)(t, i)->left != NIL) i = RB(N)(t, i)->left;
  return i;
}

static int32_t RB(fair_rb_next_t)(const fair_tree *t, int32_t i) {
  if (RB(N)(t, i)->right != NIL) return RB(fair_rb_first_t)(t, RB(N)(t, i)->right);
  int32_t p = RB(N)(t, i)->parent;
  while (p != NIL && RB(N)(t, p)->right == i) {
    i = p;
    p = RB(N)(t, p)->parent;
  }
  return p;
}

static void RB(erase_fixup)(const fair_tree *t, int32_t x, int32_t xp) {
  while (x != *t->root && !RB(red)(t, x)) {
    if (x == RB(N)(t, xp)->left) {
      int32_t w = RB(N)(t, xp)->right;
      if (RB(red)(t, w)) {
        RB(N)(t, w)->color = FAIR_NODE_BLACK;
        RB(N)(t, xp)->color = FAIR_NODE_RED;
        RB(rotate_left)(t, xp);
        w = RB(N)(t, xp)->right;
      }
      if (!RB(red)(t, RB(N)(t, w)->left) && !RB(red)(t, RB(N)(t, w)->right)) {
        RB(N)(t, w)->color = FAIR_NODE_RED;
        x = xp;
        xp = RB(N)(t, x)->parent;
        continue;
      }
      if (!RB(red)(t, RB(N)(t, w)->right)) {
        RB(N)(t, RB(N)(t, w)->left)->color = FAIR_NODE_BLACK;
        RB(N)(t, w)->color = FAIR_NODE_RED;
        RB(rotate_right)(t, w);
        w = RB(N)(t, xp)->right;
      }
      RB(N)(t, w)->color = RB(N)(t, xp)->color;
      RB(N)(t, xp)->color = FAIR_NODE_BLACK;
      RB(N)(t, RB(N)(t, w)->right)->color = FAIR_NODE_BLACK;
      RB(rotate_left)(t, xp);
    } else {
      int32_t w = RB(N)(t, xp)->left;
      if (RB(red)(t, w)) {
        RB(N)(t, w)->color = FAIR_NODE_BLACK;
        RB(N)(t, xp)->color = FAIR_NODE_RED;
        RB(rotate_right)(t, xp);
        w = RB(N)(t, xp)->left;
      }
      if (!RB(red)(t, RB(N)(t, w)->right) && !RB(red)(t, RB(N)(t, w)->left)) {
        RB(N)(t, w)->color = FAIR_NODE_RED;
        x = xp;
        xp = RB(N)(t, x)->parent;
        continue;
      }
      if (!RB(red)(t, RB(N)(t, w)->left)) {
        RB(N)(t, RB(N)(t, w)->right)->color = FAIR_NODE_BLACK;
        RB(N)(t, w)->color = FAIR_NODE_RED;
        RB(rotate_left)(t, w);
        w = RB(N)(t, xp)->left;
      }
      RB(N)(t, w)->color = RB(N)(t, xp)->color;
      RB(N)(t, xp)->color = FAIR_NODE_BLACK;
      RB(N)(t, RB(N)(t, w)->left)->color = FAIR_NODE_BLACK;
      RB(rotate_right)(t, xp);
    }
    x = *t->root;
    break;
  }
  if (x != NIL) RB(N)(t, x)->color = FAIR_NODE_BLACK;
}

static void RB(fair_rb_erase)(const fair_tree *t, int32_t z) {
  if (*t->leftmost == z) *t->leftmost = RB(fair_rb_next_t)(t, z);
  fair_node *zn = RB(N)(t, z);
  int32_t x, xp;
  int removed_black;
  int32_t xp_top;
  if (zn->left == NIL || zn->right == NIL) {
    x = zn->left == NIL ? zn->right : zn->left;
    xp = zn->parent;
    removed_black = zn->color == FAIR_NODE_BLACK;
    RB(replace_child)(t, z, x);
    xp_top = xp;
  } else {
    int32_t y = RB(fair_rb_first_t)(t, zn->right);
    fair_node *yn = RB(N)(t, y);
    /* the successor takes z's place, and z's value until the propagation
     * below reaches it (__rb_erase_augmented's augment->copy) */
    uint64_t z_min = RB(E)(t, z)->min_vruntime;
    removed_black = yn->color == FAIR_NODE_BLACK;
    x = yn->right;
    if (yn->parent == z) {
      xp = y;
    } else {
      xp = yn->parent;
      RB(replace_child)(t, y, x);
      yn->right = zn->right;
      RB(N)(t, yn->right)->parent = y;
    }
    RB(replace_child)(t, z, y);
    yn->left = zn->left;
    RB(N)(t, yn->left)->parent = y;
    yn->color = zn->color;
    RB(E)(t, y)->min_vruntime = z_min;
    /* the successor's old place up to its new one, then from there up */
    RB(propagate)(t, xp, y);
    xp_top = y;
  }
  /* every changed subtree lies on the path from xp to the root */
  RB(propagate)(t, xp_top, NIL);
  if (removed_black) RB(erase_fixup)(t, x, xp);
  zn->left = zn->right = zn->parent = NIL;
  zn->color = FAIR_NODE_OFF;
}


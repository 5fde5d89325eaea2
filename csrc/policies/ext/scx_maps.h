/* The maps of sched_ext's C dialect (pysched/scx.h includes this file):
 * BPF_MAP_TYPE_ARRAY, PERCPU_ARRAY and HASH, declared the libbpf way
 *
 *     struct {
 *       __uint(type, BPF_MAP_TYPE_ARRAY);
 *       __uint(max_entries, 16);
 *       __type(key, u32);
 *       __type(value, u64);
 *     } name SEC(".maps");
 *
 * with bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem and
 * bpf_map_lookup_percpu_elem.  The declaration carries only types (and a
 * cached id); the storage is the simulator's: an area at the end of every
 * CPU's runqueue area, which copies and snapshots carry.  A map takes its
 * place in the area the first time a simulator uses it (zeroed, as the
 * kernel's arrays start), found again by a hash of its name, so that the
 * layout is a simulator's own and the same in any process.  ARRAY and HASH
 * live in CPU 0's area, PERCPU_ARRAY at the same place in each CPU's.
 * Each area holds PS_SCX_MAP_BYTES (default 32768; build_policy's
 * extra_cflags=("-DPS_SCX_MAP_BYTES=...",) to change) for at most
 * PS_SCX_MAX_MAPS maps; a map that does not fit is an scx_bpf_error naming
 * it.  A HASH map is a table of max_entries slots searched in order
 * (lookups cost O(max_entries)); it is never iterated.
 * Read: kernel/bpf/arraymap.c and hashtab.c (6.12) for the update flags'
 * errors and the arrays' 8-byte element stride. */
#ifndef PYSCHED_SCX_MAPS_H
#define PYSCHED_SCX_MAPS_H

#ifndef PS_SCX_MAP_BYTES
#define PS_SCX_MAP_BYTES 32768
#endif
#define PS_SCX_MAX_MAPS 16
/* the scalar globals a simulator keeps (pysched/policy/scx_tunables.py) */
#define PS_SCX_MAX_GLOBALS 64

/* include/uapi/linux/bpf.h */
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
/* the others a scheduler may name, refused where used */
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_MAP_TYPE_QUEUE 22
#define BPF_MAP_TYPE_STACK 23
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_MAP_TYPE_TASK_STORAGE 29
#define BPF_MAP_TYPE_ARENA 33
#define BPF_ANY 0
#define BPF_NOEXIST 1
#define BPF_EXIST 2
#define BPF_F_NO_PREALLOC 1

/* bpf_helpers.h's declarations: types only, plus the id the type member
 * brings (the hash of the map's name, computed at its first use) */
#define __uint(name, val) PS_SCX_UINT_##name(val)
#define PS_SCX_UINT_type(val) \
  int (*type)[val];           \
  u64 ps_id_
#define PS_SCX_UINT_max_entries(val) int (*max_entries)[val]
#define PS_SCX_UINT_map_flags(val) int (*map_flags)[(val) + 1]
#define PS_SCX_UINT_pinning(val) int (*pinning)[(val) + 1]
#define PS_SCX_UINT_key_size(val) \
  _Static_assert(0, "__uint(key_size, ...): declare maps with __type(key, T)")
#define PS_SCX_UINT_value_size(val) \
  _Static_assert(0, "__uint(value_size, ...): declare maps with __type(value, T)")
#define __type(name, val) __typeof__(val) *name
#define __array(name, val) \
  _Static_assert(0, "__array (maps of maps, prog arrays) is not supported by pysched/scx.h")

/* A map's place in a simulator's areas. */
typedef struct ps_scx_map_ent {
  u64 id;
  u32 off, bytes;
} ps_scx_map_ent;

typedef struct ps_scx_area {
  u32 nmaps, used;   /* CPU 0's: the maps placed, the bytes they take */
  ps_scx_map_ent dir[PS_SCX_MAX_MAPS];
  u64 globals[PS_SCX_MAX_GLOBALS];   /* CPU 0's: the scheduler's scalar globals */
  _Alignas(8) unsigned char bytes[PS_SCX_MAP_BYTES];
} ps_scx_area;

/* where the area starts in each CPU's runqueue area (set when the library
 * loads, from the class's rq_size) */
static size_t ps_scx_area_off_;

static inline ps_scx_area *ps_scx_area_(const psModel *m, const psData *d, int cpu) {
  return (ps_scx_area *)((unsigned char *)ps_rq(m, d, cpu) + ps_scx_area_off_);
}

#ifndef PS_SCX_NGLOBALS
#define PS_SCX_NGLOBALS 0
#endif
_Static_assert(PS_SCX_NGLOBALS <= PS_SCX_MAX_GLOBALS, "more scalar globals than a simulator keeps");

/* the slot of scalar global k in the simulator an op runs for */
static inline void *ps_scx_global_(int k) {
  return &ps_scx_area_(ps_scx_cur_.m, ps_scx_cur_.d, 0)->globals[k];
}

/* the engine callocs the runqueue areas: nothing to do but say so here */
static inline void ps_scx_maps_init_(const psModel *m, psData *d, int cpu) {
  (void)m, (void)d, (void)cpu;
}

static inline u64 ps_scx_map_id_(u64 *idp, const char *name) {
  u64 id = __atomic_load_n(idp, __ATOMIC_RELAXED);
  if (id) return id;
  id = 14695981039346656037ULL;   /* FNV-1a */
  for (const char *c = name; *c; c++) id = (id ^ (unsigned char)*c) * 1099511628211ULL;
  id |= 1;
  __atomic_store_n(idp, id, __ATOMIC_RELAXED);
  return id;
}

#define PS_SCX_ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* bytes of one CPU's storage of a map */
static inline size_t ps_scx_map_bytes_(int kind, u32 max, size_t ks, size_t vs) {
  return kind == BPF_MAP_TYPE_HASH ? (size_t)max * (8 + PS_SCX_ALIGN8(ks) + PS_SCX_ALIGN8(vs))
                                   : (size_t)max * PS_SCX_ALIGN8(vs);
}

/* The storage of a map in this simulator (CPU cpu's for a per-CPU one),
 * placed at its first use; NULL after an error. */
static inline unsigned char *ps_scx_map_base_(u64 *idp, const char *name, int kind, u32 max,
                                              size_t ks, size_t vs, int cpu) {
  const psModel *m = ps_scx_cur_.m;
  psData *d = ps_scx_cur_.d;
  u64 id = ps_scx_map_id_(idp, name);
  ps_scx_area *a0 = ps_scx_area_(m, d, 0);
  u32 k = 0;
  while (k < a0->nmaps && a0->dir[k].id != id) k++;
  if (k == a0->nmaps) {
    size_t bytes = ps_scx_map_bytes_(kind, max, ks, vs);
    if (k == PS_SCX_MAX_MAPS || bytes > PS_SCX_MAP_BYTES - a0->used) {
      ps_scx_error_("map %s needs %zu bytes: the maps have %d bytes and %d maps a CPU "
                    "(build with -DPS_SCX_MAP_BYTES=...)", name, bytes, PS_SCX_MAP_BYTES,
                    PS_SCX_MAX_MAPS);
      return NULL;
    }
    a0->dir[k].id = id;
    a0->dir[k].off = a0->used;
    a0->dir[k].bytes = (u32)bytes;
    a0->used += (u32)bytes;
    a0->nmaps++;
  }
  if (kind == BPF_MAP_TYPE_PERCPU_ARRAY) {
    if (cpu < 0) cpu = ps_ext_this_cpu(m, d);
    if (cpu < 0) cpu = 0;   /* ops.init runs on no CPU in particular */
    if (cpu >= m->ncpu) return NULL;
  } else {
    cpu = 0;
  }
  return ps_scx_area_(m, d, cpu)->bytes + a0->dir[k].off;
}

/* A file-scope variable that is not a plain scalar (an array, a struct, a
 * global of a type of the file's own: pysched/policy/scx_tunables.py):
 * the simulator's copy, a one-element array in the map area placed at its
 * first use and set there from the library's copy, which keeps the
 * initializer and is never written.  After an error (the area is full)
 * the op that goes on writes into a scratch copy of its thread. */
static inline void *ps_scx_var_(u64 *idp, const char *name, const void *init, size_t bytes) {
  static _Thread_local _Alignas(16) unsigned char scratch[PS_SCX_MAP_BYTES];
  ps_scx_area *a0 = ps_scx_area_(ps_scx_cur_.m, ps_scx_cur_.d, 0);
  u32 placed = a0->nmaps;
  unsigned char *at = ps_scx_map_base_(idp, name, BPF_MAP_TYPE_ARRAY, 1, 4, bytes, 0);
  if (!at) return scratch;
  if (a0->nmaps != placed) memcpy(at, init, bytes);
  return at;
}

/* a HASH map's slot of key, or of a free slot (free set) when none holds it */
static inline unsigned char *ps_scx_hash_slot_(unsigned char *base, u32 max, size_t ks,
                                               size_t vs, const void *key,
                                               unsigned char **free_slot) {
  size_t stride = 8 + PS_SCX_ALIGN8(ks) + PS_SCX_ALIGN8(vs);
  for (u32 i = 0; i < max; i++) {
    unsigned char *e = base + (size_t)i * stride;
    if (*(u64 *)e) {
      if (!memcmp(e + 8, key, ks)) return e;
    } else if (free_slot && !*free_slot) {
      *free_slot = e;
    }
  }
  return NULL;
}

static inline void *ps_scx_lookup_(u64 *idp, const char *name, int kind, u32 max, size_t ks,
                                   size_t vs, const void *key, int cpu) {
  unsigned char *base = ps_scx_map_base_(idp, name, kind, max, ks, vs, cpu);
  if (!base) return NULL;
  if (kind == BPF_MAP_TYPE_HASH) {
    unsigned char *e = ps_scx_hash_slot_(base, max, ks, vs, key, NULL);
    return e ? e + 8 + PS_SCX_ALIGN8(ks) : NULL;
  }
  u32 i;
  memcpy(&i, key, sizeof i);
  return i < max ? base + (size_t)i * PS_SCX_ALIGN8(vs) : NULL;
}

static inline long ps_scx_update_(u64 *idp, const char *name, int kind, u32 max, size_t ks,
                                  size_t vs, const void *key, const void *value, u64 flags) {
  if (flags > BPF_EXIST) return -EINVAL;
  unsigned char *base = ps_scx_map_base_(idp, name, kind, max, ks, vs, -1);
  if (!base) return -ENOMEM;
  if (kind == BPF_MAP_TYPE_HASH) {
    unsigned char *free_slot = NULL;
    unsigned char *e = ps_scx_hash_slot_(base, max, ks, vs, key, &free_slot);
    if (e && flags == BPF_NOEXIST) return -EEXIST;
    if (!e && flags == BPF_EXIST) return -ENOENT;
    if (!e) {
      if (!free_slot) return -E2BIG;
      e = free_slot;
      *(u64 *)e = 1;
      memcpy(e + 8, key, ks);
    }
    memcpy(e + 8 + PS_SCX_ALIGN8(ks), value, vs);
    return 0;
  }
  /* array_map_update_elem: every element exists */
  u32 i;
  memcpy(&i, key, sizeof i);
  if (i >= max) return -E2BIG;
  if (flags == BPF_NOEXIST) return -EEXIST;
  memcpy(base + (size_t)i * PS_SCX_ALIGN8(vs), value, vs);
  return 0;
}

static inline long ps_scx_delete_(u64 *idp, const char *name, int kind, u32 max, size_t ks,
                                  size_t vs, const void *key) {
  if (kind != BPF_MAP_TYPE_HASH) return -EINVAL;   /* array_map_delete_elem */
  unsigned char *base = ps_scx_map_base_(idp, name, kind, max, ks, vs, -1);
  if (!base) return -ENOMEM;
  unsigned char *e = ps_scx_hash_slot_(base, max, ks, vs, key, NULL);
  if (!e) return -ENOENT;
  memset(e, 0, 8 + PS_SCX_ALIGN8(ks) + PS_SCX_ALIGN8(vs));
  return 0;
}

/* a map's declared kind, checked, and its sizes */
#define PS_SCX_KIND(map) ((int)(sizeof(*(map)->type) / sizeof(int)))
#define PS_SCX_MAP_ARGS(map)                                                                 \
  &(map)->ps_id_, #map, PS_SCX_KIND(map), (u32)(sizeof(*(map)->max_entries) / sizeof(int)), \
      sizeof(*(map)->key), sizeof(*(map)->value)
#define PS_SCX_CHECK_KIND(map)                                                          \
  _Static_assert(PS_SCX_KIND(map) == BPF_MAP_TYPE_ARRAY ||                              \
                     PS_SCX_KIND(map) == BPF_MAP_TYPE_PERCPU_ARRAY ||                   \
                     PS_SCX_KIND(map) == BPF_MAP_TYPE_HASH,                             \
                 "pysched/scx.h supports maps of type BPF_MAP_TYPE_ARRAY, "             \
                 "BPF_MAP_TYPE_PERCPU_ARRAY and BPF_MAP_TYPE_HASH only");               \
  _Static_assert(PS_SCX_KIND(map) == BPF_MAP_TYPE_HASH || sizeof(*(map)->key) == 4,     \
                 "an array map's key is a u32")

#define bpf_map_lookup_elem(map, key) \
  ({                                  \
    PS_SCX_CHECK_KIND(map);           \
    ps_scx_lookup_(PS_SCX_MAP_ARGS(map), (key), -1); \
  })
#define bpf_map_lookup_percpu_elem(map, key, cpu)                                       \
  ({                                                                                    \
    PS_SCX_CHECK_KIND(map);                                                             \
    _Static_assert(PS_SCX_KIND(map) == BPF_MAP_TYPE_PERCPU_ARRAY,                       \
                   "bpf_map_lookup_percpu_elem takes a per-CPU map");                   \
    ps_scx_lookup_(PS_SCX_MAP_ARGS(map), (key), (int)(cpu));                            \
  })
#define bpf_map_update_elem(map, key, value, flags) \
  ({                                                \
    PS_SCX_CHECK_KIND(map);                         \
    ps_scx_update_(PS_SCX_MAP_ARGS(map), (key), (value), (flags)); \
  })
#define bpf_map_delete_elem(map, key) \
  ({                                  \
    PS_SCX_CHECK_KIND(map);           \
    ps_scx_delete_(PS_SCX_MAP_ARGS(map), (key)); \
  })

#endif

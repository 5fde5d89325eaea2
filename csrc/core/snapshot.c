/* Snapshots: a model and its state as one flat byte string (for pickle and
 * for shipping a branched run to another process).
 *
 * Layout: magic, format version, a hash of this build's struct layouts and
 * policy tables, the preset's name, the package version that wrote it
 * (from format 5 on); the model (parameters by name), the
 * programs and sources; the state; the record rings; last a checksum
 * (FNV-1a 64) of everything before it.  The structs are stored as this
 * build lays them out, so a snapshot is read back by a build with the same
 * layout hash only.  Loading verifies the checksum, then checks every
 * length, index, count, op and time before anything is used
 * (snapshot_check.c), so that no blob -- damaged or crafted -- can crash,
 * hang or silently change a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "snapshot_check.h"

#define MAGIC "PSCHED02"
#define FORMAT_VERSION 5
#define NAME_LEN PS_SNAPSHOT_NAME

/* ---- FNV-1a 64 ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}
#define FNV_BASIS 0xcbf29ce484222325ULL

static uint64_t fnv_i64(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }
static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

static uint64_t fields_hash(uint64_t h, const psFieldInfo *f, int n) {
  for (int i = 0; i < n; i++) {
    h = fnv_str(h, f[i].name);
    h = fnv_i64(fnv_i64(fnv_i64(h, f[i].type), (int64_t)f[i].offset), f[i].at);
  }
  return h;
}

/* What a snapshot's bytes mean in this build: struct sizes, the policy's
 * state tables and parameter names. */
static uint64_t layout_hash(const psPolicy *pol) {
  int64_t sizes[] = {sizeof(psModel), sizeof(psData), sizeof(psTask), sizeof(psCpu),
                     sizeof(psOp),    sizeof(psEvt),  sizeof(psChannel), sizeof(psSourceDef),
                     sizeof(psSourceState), (int64_t)pol->rq_size, (int64_t)pol->rq_per_cpu, PS_MAX_PARAMS,
                     PS_TASK_PRIV};
  uint64_t h = fnv(FNV_BASIS, sizes, sizeof sizes);
  h = fnv_str(h, pol->name);
  h = fields_hash(h, ps_task_fields, ps_ntask_fields);
  h = fields_hash(h, pol->task_fields, pol->ntask_fields);
  h = fields_hash(h, pol->rq_fields, pol->nrq_fields);
  for (int i = 0; i < pol->nparams; i++) h = fnv_str(h, pol->params[i].name);
  return h;
}

/* ---- writing ---- */

typedef struct {
  unsigned char *buf;
  size_t n, cap;
  int bad;
} writer;

static void put(writer *w, const void *p, size_t n) {
  if (w->bad || !n) return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n) cap *= 2;
    unsigned char *b = realloc(w->buf, cap);
    if (!b) {
      w->bad = 1;
      return;
    }
    w->buf = b;
    w->cap = cap;
  }
  memcpy(w->buf + w->n, p, n);
  w->n += n;
}

static void put_i64(writer *w, int64_t v) { put(w, &v, sizeof v); }

static void put_name(writer *w, const char *s) {
  char name[NAME_LEN] = {0};
  snprintf(name, sizeof name, "%s", s);
  put(w, name, sizeof name);
}

static void put_ring(writer *w, const psRing *r) {
  put_i64(w, r->n);
  put_i64(w, r->dropped);
  unsigned char *tmp = r->n ? malloc((size_t)r->n * r->elem) : NULL;
  if (r->n && !tmp) {
    w->bad = 1;
    return;
  }
  psu_ring_read(r, tmp);
  put(w, tmp, (size_t)r->n * r->elem);
  free(tmp);
}

int ps_snapshot_save(const psModel *m, const psData *d, unsigned char **out, size_t *len) {
  writer w = {0};
  put(&w, MAGIC, 8);
  put_i64(&w, FORMAT_VERSION);
  put_i64(&w, (int64_t)layout_hash(m->policy));
  put_name(&w, m->preset->name);
  put_name(&w, PS_VERSION);
  put(&w, m, sizeof *m);
  put_i64(&w, m->policy->nparams);
  for (int i = 0; i < m->policy->nparams; i++) {
    put_name(&w, m->policy->params[i].name);
    put_i64(&w, m->param[i]);
  }
  put(&w, m->ops, (size_t)m->nops * sizeof(psOp));
  put(&w, m->masks, (size_t)m->nmasks * sizeof(psCpuMask));
  put(&w, m->progs, (size_t)m->nprogs * sizeof(psProgram));
  put(&w, m->src, (size_t)m->nsrc * sizeof(psSourceDef));
  put(&w, d, sizeof *d);
  put(&w, d->cpu, (size_t)m->ncpu * sizeof(psCpu));
  put(&w, d->rq, (size_t)m->ncpu * m->rq_stride);
  put(&w, d->task, (size_t)d->ntask * sizeof(psTask));
  put(&w, d->chan, (size_t)d->nchan * sizeof(psChannel));
  put(&w, d->src, (size_t)d->nsrc * sizeof(psSourceState));
  int nomem = 0;
  psEvt *evs = psu_evq_sorted(&d->evq, &nomem);
  w.bad |= nomem;
  put(&w, evs, (size_t)d->evq.n * sizeof(psEvt));
  free(evs);
  put_ring(&w, &d->events);
  put_ring(&w, &d->latencies);
  put_ring(&w, &d->periodic);
  put_ring(&w, &d->series);
  put_ring(&w, &d->exited);
  if (!w.bad) put_i64(&w, (int64_t)fnv(FNV_BASIS, w.buf, w.n));
  if (w.bad) {
    free(w.buf);
    return -1;
  }
  *out = w.buf;
  *len = w.n;
  return 0;
}

/* ---- reading ---- */

typedef struct {
  const unsigned char *p;
  size_t left;
} reader;

static int get(reader *r, void *dst, size_t n) {
  if (n > r->left) return -1;
  if (!n) return 0;
  memcpy(dst, r->p, n);
  r->p += n;
  r->left -= n;
  return 0;
}

/* Allocate count*size bytes (at least one) and read them. */
static void *get_array(reader *r, int64_t count, size_t size, int64_t max) {
  /* by division: count * size may wrap for a crafted count */
  if (count < 0 || count > max || (size_t)count > r->left / size) return NULL;
  void *a = calloc(count ? (size_t)count : 1, size);
  if (a && get(r, a, (size_t)count * size)) {
    free(a);
    return NULL;
  }
  return a;
}

static int get_ring(reader *r, psRing *ring, size_t elem) {
  int64_t n, dropped;
  psu_ring_init(ring, elem);
  if (get(r, &n, sizeof n) || get(r, &dropped, sizeof dropped)) return -1;
  if (n < 0 || dropped < 0 || (size_t)n > r->left / elem) return -1;
  if (n) {
    ring->buf = get_array(r, n, elem, n);
    if (!ring->buf) return -1;
  }
  ring->n = ring->cap = n;
  ring->dropped = dropped;
  return 0;
}

/* The parameters by name, checked and applied as one set. */
static int get_params(reader *r, psModel *m, char *err, int errlen) {
  int64_t n;
  if (get(r, &n, sizeof n) || n != m->policy->nparams) BAD("the parameter list");
  char names[PS_MAX_PARAMS][NAME_LEN];
  const char *ptrs[PS_MAX_PARAMS];
  int64_t values[PS_MAX_PARAMS];
  int seen[PS_MAX_PARAMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (get(r, names[i], NAME_LEN) || get(r, &values[i], sizeof values[i])) BAD("parameters");
    names[i][NAME_LEN - 1] = 0;
    ptrs[i] = names[i];
    int k = ps_param_index(m, names[i]);
    if (k < 0 || seen[k]++) BAD("parameter %lld unknown or repeated", (long long)i);
  }
  char msg[PS_ERRLEN];
  if (ps_set_params(m, ptrs, values, (int)n, msg, sizeof msg)) BAD("%s", msg);
  return 1;
}

/* The header: magic, format version, layout hash, preset name and the
 * package version that wrote it (made_by, "" before format 5); 0, or -1
 * with err. */
static int get_header(reader *r, int64_t *version, int64_t *hash, char *name, char *made_by,
                      char *err, int errlen) {
  char magic[8];
  made_by[0] = 0;
  if (get(r, magic, 8) || memcmp(magic, MAGIC, 8) || get(r, version, sizeof *version) ||
      get(r, hash, sizeof *hash) || get(r, name, NAME_LEN) ||
      (*version >= 5 && get(r, made_by, NAME_LEN))) {
    snprintf(err, errlen, "not a pysched snapshot");
    return -1;
  }
  name[NAME_LEN - 1] = 0;
  made_by[NAME_LEN - 1] = 0;
  return 0;
}

int ps_snapshot_preset_name(const unsigned char *buf, size_t len, char *name, char *err,
                            int errlen) {
  reader r = {buf, len};
  int64_t version, hash;
  char made_by[NAME_LEN];
  return get_header(&r, &version, &hash, name, made_by, err, errlen);
}

/* Whether this build reads a snapshot of that header for preset pre; 0, or
 * -1 (or PS_SNAPSHOT_OTHER_LAYOUT) with err saying what made it and what
 * this build reads. */
static int readable(int64_t version, int64_t hash, const char *name, const char *made_by,
                    const psPreset *pre, char *err, int errlen) {
  char who[NAME_LEN + 32];
  if (made_by[0])
    snprintf(who, sizeof who, "pysched %s", made_by);
  else
    snprintf(who, sizeof who, "a pysched older than 0.2.0");
  if (version != FORMAT_VERSION) {
    snprintf(err, errlen, "the snapshot was made by %s (snapshot format %lld); this build, "
             "pysched %s, reads format %d", who, (long long)version, PS_VERSION, FORMAT_VERSION);
    return -1;
  }
  if (strcmp(name, pre->name)) {
    snprintf(err, errlen, "the snapshot is of preset '%s', not '%s'", name, pre->name);
    return -1;
  }
  if ((uint64_t)hash == layout_hash(pre->policy)) return 0;
  snprintf(err, errlen, "the snapshot was made by %s for a '%s' whose structs or policy tables "
           "differ from this build's (pysched %s, snapshot format %d)", who, name, PS_VERSION,
           FORMAT_VERSION);
  return strcmp(made_by, PS_VERSION) ? -1 : PS_SNAPSHOT_OTHER_LAYOUT;
}

int ps_snapshot_load(const unsigned char *buf, size_t len, const psPreset *pre, psModel *m,
                     psData *d, char *err, int errlen) {
  reader r = {buf, len};
  char name[NAME_LEN], made_by[NAME_LEN];
  int64_t version, hash, sum;
  char why[PS_ERRLEN] = "truncated";
  psEvt *ev = NULL;
  memset(m, 0, sizeof *m);
  memset(d, 0, sizeof *d);
  if (get_header(&r, &version, &hash, name, made_by, err, errlen)) return -1;
  int rc = readable(version, hash, name, made_by, pre, err, errlen);
  if (rc) return rc;
  if (len < 8 + sizeof sum) goto bad;
  memcpy(&sum, buf + len - sizeof sum, sizeof sum);
  if ((uint64_t)sum != fnv(FNV_BASIS, buf, len - sizeof sum)) {
    snprintf(why, sizeof why, "its checksum does not match");
    goto bad;
  }
  r.left -= sizeof sum;
  psModel mm;
  psData dd;
  if (get(&r, &mm, sizeof mm)) goto bad;
  /* only plain values are taken from the stored struct; pointers and the
   * policy come from this build */
  mm.policy = pre->policy;
  if (mm.ncpu < 1 || mm.ncpu > PS_MAX_CPUS) goto bad;
  mm.rq_stride = ps_rq_stride(mm.policy, mm.ncpu);
  mm.preset = pre;
  mm.ctx = NULL;
  mm.ops = NULL;
  mm.masks = NULL;
  mm.progs = NULL;
  mm.src = NULL;
  if (ps_hooks_resolve(pre->policy, &mm.hooks, why, sizeof why)) goto bad;
  ps_model_find_timer_params(&mm);
  *m = mm;
  if (!ps_snapshot_machine_ok(m, why, sizeof why) || !get_params(&r, m, why, sizeof why)) goto bad;
  m->ops = get_array(&r, mm.nops, sizeof(psOp), 1 << 26);
  m->masks = get_array(&r, mm.nmasks, sizeof(psCpuMask), mm.nops);
  m->progs = get_array(&r, mm.nprogs, sizeof(psProgram), 1 << 26);
  m->src = get_array(&r, mm.nsrc, sizeof(psSourceDef), 1 << 26);
  if (!m->ops || !m->masks || !m->progs || !m->src) goto bad;
  m->cap_ops = mm.nops ? mm.nops : 1;
  m->cap_masks = mm.nmasks ? mm.nmasks : 1;
  m->cap_progs = mm.nprogs ? mm.nprogs : 1;
  m->cap_src = mm.nsrc ? mm.nsrc : 1;
  if (!ps_snapshot_model_ok(m, why, sizeof why)) goto bad;
  if (get(&r, &dd, sizeof dd)) goto bad;
  if (dd.ntask < m->ncpu || dd.nchan != m->nchan || dd.nsrc != m->nsrc || dd.evq.n < 0) goto bad;
  d->now_ns = dd.now_ns;
  d->jiffies = dd.jiffies;
  d->ntask = d->cap_task = dd.ntask;
  d->nlive = dd.nlive;
  d->next_pid = dd.next_pid;
  d->free_slot = dd.free_slot;
  d->nchan = dd.nchan;
  d->nsrc = dd.nsrc;
  memcpy(d->warn, dd.warn, sizeof d->warn);
  d->nr_forks = dd.nr_forks;
  d->nr_exits = dd.nr_exits;
  /* the livelock count travels too: a twin fails where its original would */
  d->instant_ns = dd.instant_ns;
  d->instant_actions = dd.instant_actions;
  /* the timers armed so far: the next one's rank follows on (checked below) */
  d->timer_seq = dd.timer_seq;
  /* the behaviour watch goes on from where it was (checked below) */
  d->watch = dd.watch;
  /* what the fast paths did goes on counting; their deferred ticks are
   * none between runs */
  const psFastState *counts = ps_fast(&dd);
  ps_fast(d)->wide_scans = counts->wide_scans;
  ps_fast(d)->ticks_batched = counts->ticks_batched;
  ps_fast(d)->ticks_deferred = counts->ticks_deferred;
  ps_fast(d)->skips = counts->skips;
  /* the ticks are checked below; the bursts' ends are set again when the
   * next run starts (every CPU settles then) */
  memcpy(d->next_tick_ns, dd.next_tick_ns, sizeof d->next_tick_ns);
  memcpy(d->burst_end_ns, dd.burst_end_ns, sizeof d->burst_end_ns);
  d->cpu = get_array(&r, m->ncpu, sizeof(psCpu), PS_MAX_CPUS);
  d->rq = get_array(&r, m->ncpu, m->rq_stride, PS_MAX_CPUS);
  d->task = get_array(&r, dd.ntask, sizeof(psTask), 1 << 26);
  d->chan = get_array(&r, dd.nchan, sizeof(psChannel), 1 << 26);
  d->src = get_array(&r, dd.nsrc, sizeof(psSourceState), 1 << 26);
  psu_evq_init(&d->evq, m->tick_ns, !(m->fast_paths & PS_FAST_WHEEL));
  d->evq.nsorted = dd.evq.nsorted;
  d->evq.last_ns = dd.now_ns;
  ev = get_array(&r, dd.evq.n, sizeof(psEvt), 1 << 26);
  if (!d->cpu || !d->rq || !d->task || !d->chan || !d->src || !ev) goto bad;
  if (get_ring(&r, &d->events, sizeof(psEventRec)) ||
      get_ring(&r, &d->latencies, sizeof(psLatencyRec)) ||
      get_ring(&r, &d->periodic, sizeof(psPeriodicRec)) ||
      get_ring(&r, &d->series, sizeof(psSampleRec)) ||
      get_ring(&r, &d->exited, sizeof(psTask)) || d->exited.n > m->keep_exited || r.left)
    goto bad;
  if (!ps_snapshot_state_ok(m, d, ev, dd.evq.n, why, sizeof why) || !ps_snapshot_records_ok(m, d, why, sizeof why))
    goto bad;
  for (int64_t k = 0; k < dd.evq.n; k++)
    if (psu_evq_push(&d->evq, ev[k])) goto bad;
  free(ev);
  ev = NULL;
  if (ps_pids_rebuild(m, d)) {
    snprintf(why, sizeof why, "two tasks have one pid, or no memory for the pid table");
    goto bad;
  }
  if (ps_check(m, d, why, sizeof why)) goto bad;
  return 0;
bad:
  free(ev);
  ps_data_free(d);
  ps_model_free(m);
  snprintf(err, errlen, "the snapshot is damaged: %s", why);
  return -1;
}

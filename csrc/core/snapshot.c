/* Snapshots: a model and its state as one flat byte string (for pickle and
 * for shipping a branched run to another process).  Everything is stored as
 * the structs of this build, so a snapshot is read back by the same build
 * only; the header says which.  Loading checks every length and index before
 * it trusts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysched.h"

#define MAGIC "PSCHED01"

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
  int64_t sizes[5] = {sizeof(psModel), sizeof(psData), sizeof(psTask), (int64_t)m->policy->rq_size,
                      PS_MAX_PARAMS};
  put(&w, MAGIC, 8);
  put(&w, sizes, sizeof sizes);
  char name[64] = {0};
  snprintf(name, sizeof name, "%s", m->preset->name);
  put(&w, name, sizeof name);
  put(&w, m, sizeof *m);
  put(&w, m->ops, (size_t)m->nops * sizeof(psOp));
  put(&w, m->progs, (size_t)m->nprogs * sizeof(psProgram));
  put(&w, m->src, (size_t)m->nsrc * sizeof(psSourceDef));
  put(&w, d, sizeof *d);
  put(&w, d->cpu, (size_t)m->ncpu * sizeof(psCpu));
  put(&w, d->rq, (size_t)m->ncpu * m->policy->rq_size);
  put(&w, d->task, (size_t)d->ntask * sizeof(psTask));
  put(&w, d->chan, (size_t)d->nchan * sizeof(psChannel));
  put(&w, d->src, (size_t)d->nsrc * sizeof(psSourceState));
  put(&w, d->heap.e, (size_t)d->heap.n * sizeof(psEvt));
  put_ring(&w, &d->events);
  put_ring(&w, &d->latencies);
  put_ring(&w, &d->series);
  if (w.bad) {
    free(w.buf);
    return -1;
  }
  *out = w.buf;
  *len = w.n;
  return 0;
}

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
  if (count < 0 || count > max || (size_t)count * size > r->left) return NULL;
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
  if (n < 0 || (size_t)n * elem > r->left) return -1;
  if (n) {
    ring->buf = get_array(r, n, elem, n);
    if (!ring->buf) return -1;
  }
  ring->n = ring->cap = n;
  ring->dropped = dropped;
  return 0;
}

static int index_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }

/* Every stored index lies in range, so that walking the state is safe. */
static int indices_ok(const psModel *m, const psData *d) {
  for (int c = 0; c < m->ncpu; c++)
    if (d->cpu[c].curr < 0 || d->cpu[c].curr >= d->ntask || d->cpu[c].idle != c) return 0;
  for (int32_t i = 0; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if (!index_ok(t->wait_next, d->ntask) || t->ppid < 0 || t->ppid > d->ntask ||
        t->cpu < 0 || t->cpu >= m->ncpu || (t->on_rq != 0 && t->on_rq != 1) ||
        t->ps.loop_depth < 0 || t->ps.loop_depth > PS_LOOP_DEPTH || t->ps.prog < 0 ||
        (i >= m->ncpu && t->ps.prog >= m->nprogs) || t->ps.pc < 0 || t->ps.pc > m->nops)
      return 0;
  }
  for (int32_t k = 0; k < d->nchan; k++)
    if (!index_ok(d->chan[k].head, d->ntask) || !index_ok(d->chan[k].tail, d->ntask)) return 0;
  for (int64_t k = 0; k < d->heap.n; k++) {
    const psEvt *e = &d->heap.e[k];
    if (e->cls < PS_EV_TIMER || e->cls > PS_EV_SOURCE || e->key < 0 ||
        e->key >= (e->cls == PS_EV_SOURCE ? m->nsrc : d->ntask))
      return 0;
  }
  for (int32_t k = 0; k < m->nops; k++)
    if (m->ops[k].kind == PS_OP_LOOP || m->ops[k].kind == PS_OP_END)
      if (m->ops[k].arg < 0 || m->ops[k].arg >= m->nops || m->ops[k].arg2 < 0 ||
          (m->ops[k].kind == PS_OP_LOOP && m->ops[k].arg2 >= m->nops))
        return 0;
  return 1;
}

int ps_snapshot_load(const unsigned char *buf, size_t len, psModel *m, psData *d, char *err,
                     int errlen) {
  reader r = {buf, len};
  char magic[8], name[64];
  int64_t sizes[5];
  memset(m, 0, sizeof *m);
  memset(d, 0, sizeof *d);
  if (get(&r, magic, 8) || memcmp(magic, MAGIC, 8) || get(&r, sizes, sizeof sizes) ||
      get(&r, name, sizeof name)) {
    snprintf(err, errlen, "not a pysched snapshot");
    return -1;
  }
  name[63] = 0;
  const psPreset *pre = ps_preset_find(name);
  if (!pre || sizes[0] != (int64_t)sizeof(psModel) || sizes[1] != (int64_t)sizeof(psData) ||
      sizes[2] != (int64_t)sizeof(psTask) || sizes[3] != (int64_t)pre->policy->rq_size ||
      sizes[4] != PS_MAX_PARAMS) {
    snprintf(err, errlen, "the snapshot was made by another build of pysched");
    return -1;
  }
  psModel mm;
  psData dd;
  if (get(&r, &mm, sizeof mm)) goto bad;
  mm.policy = pre->policy;
  mm.preset = pre;
  if (ps_hooks_resolve(pre->policy, &mm.hooks, err, errlen)) return -1;
  mm.ops = NULL;
  mm.progs = NULL;
  mm.src = NULL;
  if (mm.ncpu < 1 || mm.ncpu > PS_MAX_CPUS || mm.nseries < 0 || mm.nseries > PS_MAX_SERIES_FIELDS)
    goto bad;
  *m = mm;
  m->ops = get_array(&r, mm.nops, sizeof(psOp), 1 << 26);
  m->progs = get_array(&r, mm.nprogs, sizeof(psProgram), 1 << 26);
  m->src = get_array(&r, mm.nsrc, sizeof(psSourceDef), 1 << 26);
  if (!m->ops || !m->progs || !m->src) goto bad;
  m->cap_ops = mm.nops ? mm.nops : 1;
  m->cap_progs = mm.nprogs ? mm.nprogs : 1;
  m->cap_src = mm.nsrc ? mm.nsrc : 1;
  for (int32_t k = 0; k < m->nprogs; k++)
    if (m->progs[k].first < 0 || m->progs[k].n < 0 || m->progs[k].first + m->progs[k].n > m->nops)
      goto bad;
  for (int32_t k = 0; k < m->nsrc; k++)
    if (m->src[k].chan < 0 || m->src[k].chan >= m->nchan) goto bad;
  for (int32_t k = 0; k < m->nseries; k++)
    if (m->series[k] < 0 || m->series[k] >= ps_nfields(m)) goto bad;
  char msg[PS_ERRLEN];
  if (m->hooks.configure(m, msg, sizeof msg)) goto bad;
  if (get(&r, &dd, sizeof dd)) goto bad;
  if (dd.ntask < m->ncpu || dd.nchan != m->nchan || dd.nsrc != m->nsrc || dd.heap.n < 0) goto bad;
  d->now_ns = dd.now_ns;
  d->jiffies = dd.jiffies;
  d->ntask = d->cap_task = dd.ntask;
  d->nlive = dd.nlive;
  d->nchan = dd.nchan;
  d->nsrc = dd.nsrc;
  memcpy(d->warn, dd.warn, sizeof d->warn);
  d->nr_forks = dd.nr_forks;
  d->nr_exits = dd.nr_exits;
  d->cpu = get_array(&r, m->ncpu, sizeof(psCpu), PS_MAX_CPUS);
  d->rq = get_array(&r, m->ncpu, m->policy->rq_size, PS_MAX_CPUS);
  d->task = get_array(&r, dd.ntask, sizeof(psTask), 1 << 26);
  d->chan = get_array(&r, dd.nchan, sizeof(psChannel), 1 << 26);
  d->src = get_array(&r, dd.nsrc, sizeof(psSourceState), 1 << 26);
  d->heap.e = get_array(&r, dd.heap.n, sizeof(psEvt), 1 << 26);
  if (!d->cpu || !d->rq || !d->task || !d->chan || !d->src || !d->heap.e) goto bad;
  d->heap.n = dd.heap.n;
  d->heap.cap = dd.heap.n ? dd.heap.n : 1;
  if (get_ring(&r, &d->events, sizeof(psEventRec)) ||
      get_ring(&r, &d->latencies, sizeof(psLatencyRec)) ||
      get_ring(&r, &d->series, sizeof(psSampleRec)) || r.left)
    goto bad;
  if (!indices_ok(m, d) || ps_check(m, d, msg, sizeof msg)) goto bad;
  return 0;
bad:
  ps_data_free(d);
  ps_model_free(m);
  snprintf(err, errlen, "the snapshot is damaged");
  return -1;
}

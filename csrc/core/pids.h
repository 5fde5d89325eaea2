/* The live tasks' pids -> their slots, as the kernel finds a task by pid
 * (find_task_by_pid, kernel/pid.c's pid hash): O(1) however slots are
 * reused.  Slots are reused as tasks are reaped (engine.c, ps_new_task),
 * so a pid's slot cannot be computed once forks and exits have mixed
 * them; without this table an exit looking up its parent, or Python
 * naming a pid, scanned every slot.  Open addressing with linear probing,
 * at most half full; the engine's alone (psFastState.pids). */
#ifndef PS_PIDS_H
#define PS_PIDS_H
#include <stdint.h>

typedef struct psPidEntry {
  int32_t pid;   /* 0: empty */
  int32_t slot;
} psPidEntry;

typedef struct psPids {
  psPidEntry *e;  /* 2^bits entries, or NULL when none was ever needed */
  int32_t bits;
  int32_t used;
} psPids;

#pragma GCC visibility push(hidden)
/* pid (>= 1, not present) now lives in slot; 0, or -1 when memory ran out
 * (the table is as it was). */
int psu_pids_insert(psPids *h, int32_t pid, int32_t slot);
/* pid leaves (it was present). */
void psu_pids_remove(psPids *h, int32_t pid);
/* The slot of pid, or -1. */
int32_t psu_pids_find(const psPids *h, int32_t pid);
/* A copy of src into dst (dst's own entries); 0 or -1 (no memory). */
int psu_pids_copy(psPids *dst, const psPids *src);
void psu_pids_free(psPids *h);
#pragma GCC visibility pop

#endif

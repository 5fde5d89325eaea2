/* The domain checks of a loaded snapshot (snapshot_check.c), for
 * snapshot.c.  Each returns 1 when what it checks is within its domain,
 * else 0 with the reason in err. */
#ifndef PS_SNAPSHOT_CHECK_H
#define PS_SNAPSHOT_CHECK_H
#include "pysched.h"
#include "events.h"

/* err gets the reason; the check returns 0 */
#define BAD(...)                            \
  do {                                      \
    snprintf(err, errlen, __VA_ARGS__);     \
    return 0;                               \
  } while (0)

/* the engine's own: a policy library never sees them */
#pragma GCC visibility push(hidden)

/* the machine, before the policy derives anything from it */
int ps_snapshot_machine_ok(const psModel *m, char *err, int errlen);
/* the recording options, programs and sources */
int ps_snapshot_model_ok(const psModel *m, char *err, int errlen);
/* the tasks, CPUs, channels, counts and the nev queued events ev */
int ps_snapshot_state_ok(const psModel *m, const psData *d, const psEvt *ev, int64_t nev,
                         char *err, int errlen);
/* the records in the rings */
int ps_snapshot_records_ok(const psModel *m, const psData *d, char *err, int errlen);

#pragma GCC visibility pop

#endif

/* Seeded pseudo-random streams: splitmix64 seeds xoshiro256**.
 * Every task and every source owns one stream derived from the run seed and
 * its own id, so adding a task never perturbs another task's draws. */
#ifndef PS_RNG_H
#define PS_RNG_H
#include <stdint.h>

typedef struct psRng {
  uint64_t s[4];
} psRng;

/* Seed a stream from the run seed and a stream id (pid, source id ...). */
void psu_rng_seed(psRng *r, uint64_t seed, uint64_t stream);

/* Next 64 random bits (xoshiro256**).  Inline, as the uniform draw: a
 * program's duration draws are in the engine's innermost loop. */
static inline uint64_t psu_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t psu_rng_next(psRng *r) {
  uint64_t *s = r->s;
  uint64_t result = psu_rng_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = psu_rng_rotl(s[3], 45);
  return result;
}

/* Uniform double in [0, 1). */
static inline double psu_rng_uniform(psRng *r) {
  return (double)(psu_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Exponential with the given mean (mean >= 0). */
double psu_rng_exponential(psRng *r, double mean);

/* Normal with the given mean and standard deviation (Box-Muller, one draw
 * pair per call so that the stream position depends only on the call count). */
double psu_rng_normal(psRng *r, double mean, double sd);

#endif

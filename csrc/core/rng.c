#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void psu_rng_seed(psRng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

double psu_rng_exponential(psRng *r, double mean) {
  /* 1 - u lies in (0, 1], so the log is finite */
  return -mean * log(1.0 - psu_rng_uniform(r));
}

double psu_rng_normal(psRng *r, double mean, double sd) {
  double u1 = 1.0 - psu_rng_uniform(r);
  double u2 = psu_rng_uniform(r);
  return mean + sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

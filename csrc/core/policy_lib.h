/* A policy library: scheduler policies compiled outside the package into a
 * shared library that pysched loads at run time (pysched.build_policy).
 * Such a file includes this one header -- the policy interface (policy.h)
 * and the engine's helpers (engine_internal.h) come with it -- and ends
 * with one line naming its policies:
 *
 *     #include <pysched/policy_lib.h>
 *     ...
 *     PS_POLICY_LIBRARY(&my_policy);
 *
 * These headers are the very ones pysched is built from, installed with
 * the package (pysched.include_dir()). */
#ifndef PS_POLICY_LIB_H
#define PS_POLICY_LIB_H
#include "engine_internal.h"

/* The ABI of these headers: what a compiled library assumes about the
 * engine.  Bump it with any change to the layout of psTask, psModel,
 * psData, psCpu, psPolicy, psHooks, psPreset, psParamInfo, psFieldInfo,
 * psFormula or psPolicyLibrary, to a hook's signature or contract, or to
 * the functions and inline helpers of engine_internal.h, or to the sched_ext
 * class's interface (ext_ops.h: its ops table, kfuncs and task offsets,
 * which the C dialect's scx.h builds on; 6 added it; 7: psTask's lag
 * fields, psModel.uncharged_ns and psWatch's breaks, psHooks.watch,
 * ps_fast_skipped, the exit info's fields, ps_ext_strict and the DSQ
 * walks; 8: up to 1,024 CPUs -- psTask.cpus_allowed, psData.cpus_due and
 * psExtOps.set_cpumask / scx_bpf_pick_idle_cpu's mask a psCpuMask
 * (cpumask.h), psSyscall.cpus, ps_spawn's mask by pointer,
 * psPolicy.rq_per_cpu and psModel.rq_stride, the runqueues' spacing).  pysched refuses a library built for
 * another ABI, and the struct sizes below catch a layout change made
 * without a bump. */
#define PS_ABI_VERSION 8

/* The structs whose sizes a library records (PS_ABI_SIZES, same order). */
enum {
  PS_ABI_TASK, PS_ABI_MODEL, PS_ABI_DATA, PS_ABI_CPU, PS_ABI_POLICY, PS_ABI_HOOKS,
  PS_ABI_PRESET, PS_ABI_PARAM, PS_ABI_FIELD, PS_ABI_FORMULA, PS_ABI_NSIZES
};
#define PS_ABI_SIZES                                                                      \
  {sizeof(psTask), sizeof(psModel), sizeof(psData), sizeof(psCpu), sizeof(psPolicy),       \
   sizeof(psHooks), sizeof(psPreset), sizeof(psParamInfo), sizeof(psFieldInfo),            \
   sizeof(psFormula)}
#define PS_ABI_NAMES                                                                      \
  {"psTask", "psModel", "psData", "psCpu", "psPolicy", "psHooks", "psPreset", "psParamInfo", \
   "psFieldInfo", "psFormula"}

/* What a library exports under the name pysched_policy_library.  `abi`
 * comes first and stays there in every ABI, so that any library's number
 * can be read. */
typedef struct psPolicyLibrary {
  int32_t abi;
  int32_t npolicies;
  const psPolicy *const *policies;
  uint64_t sizes[PS_ABI_NSIZES];
} psPolicyLibrary;

#define PS_POLICY_LIBRARY_SYMBOL "pysched_policy_library"

/* The library's entry point: its policies, the ABI it was compiled for and
 * the sizes it saw.  The symbol is exported even under -fvisibility=hidden
 * (pysched.build_policy hides everything else). */
#define PS_POLICY_LIBRARY(...)                                                        \
  static const psPolicy *const ps_library_policies_[] = {__VA_ARGS__};                \
  __attribute__((visibility("default"))) extern const psPolicyLibrary                 \
      pysched_policy_library;                                                         \
  const psPolicyLibrary pysched_policy_library = {                                    \
      PS_ABI_VERSION, PS_NELEM(ps_library_policies_), ps_library_policies_, PS_ABI_SIZES}

/* A loaded library, before any of it is used: its ABI number and sizes
 * match this build's, and each policy's tables are well formed (names
 * short enough for a snapshot and unique, offsets inside their areas,
 * formulas' argument lists, presets naming their policy and its
 * parameters, the mandatory hooks).  0, or -1 with a message naming
 * `origin` (the library's source) and what is wrong. */
int ps_policy_library_check(const psPolicyLibrary *lib, const char *origin, char *err, int errlen);

/* A policy's tables, as ps_policy_library_check checks them. */
int ps_policy_check(const psPolicy *pol, char *err, int errlen);

#endif

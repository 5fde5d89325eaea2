/* The presets: a policy and its parameter overrides.  A new policy is one
 * line here. */
#include <string.h>

#include "policy_houston.h"
#include "policy_o1.h"

/* Fact sheet §1: the version table, row by row. */
static const psOverride o1_bk4[] = {
    {"max_timeslice", 200},        {"child_penalty", 50},
    {"max_sleep_avg", 10000},      {"starvation_limit", 10000},
    {"sleep_credit_rt", 1},        {"wakeup_prio_if_changed", 1},
    {"waker_bonus", 1},            {"sync_wakeup_credit", 0},
    {"pull_equal_prio_preempt", 1},{"child_placement", 1},
    {"tick_decay_rt", 1},          {"fork_penalize_rt", 1},
    {"setscheduler_activate", 0},  {"starvation_limit_guard", 1},
    {NULL, 0},
};

/* 2.5.65 = bk4 plus Ingo's C4 (the sleep_time - 1 credit) */
static const psOverride o1_65[] = {{"sleep_credit_minus_one", 1}, {NULL, 0}};

static const psPreset presets[] = {
    {"linux-2.5.64", &ps_policy_o1, {NULL}, "vanilla 2.5.64 O(1) scheduler"},
    {"linux-2.5.64-bk4", &ps_policy_o1, {o1_bk4},
     "2.5.64-bk4: Ingo's interactivity changes and Linus's waker bonus (back-boost)"},
    {"linux-2.5.65", &ps_policy_o1, {o1_bk4, o1_65}, "2.5.65: bk4 plus the sleep_time - 1 credit fix (C4)"},
    {"houston-2003", &ps_policy_houston, {NULL},
     "Jim Houston's self-tuning scheduler (10 Mar 2003), on 2.5.64-bk4"},
};

int ps_npresets(void) { return (int)(sizeof(presets) / sizeof(presets[0])); }
const psPreset *ps_preset(int i) { return &presets[i]; }
const psPreset *ps_preset_find(const char *name) {
  for (int i = 0; i < ps_npresets(); i++)
    if (!strcmp(presets[i].name, name)) return &presets[i];
  return NULL;
}

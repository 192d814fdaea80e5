/* The policy table: adding a policy = one file in policies/ plus one line here. */
#include "cache.h"

#include <strings.h>

extern const sim_policy_ops sim_policy_lru, sim_policy_fifo, sim_policy_clock, sim_policy_gclock,
    sim_policy_nbq_clock, sim_policy_baglru, sim_policy_gdwheel, sim_policy_mcslru,
    sim_policy_clockpro, sim_policy_arc, sim_policy_s3fifo, sim_policy_sieve, sim_policy_twoq,
    sim_policy_lfu, sim_policy_gdsf, sim_policy_opt, sim_policy_lirs, sim_policy_wtinylfu, sim_policy_lhd, sim_policy_mlclock,
    sim_policy_extstore;

static const sim_policy_ops *const policies[] = {
    &sim_policy_lru, &sim_policy_fifo, &sim_policy_clock, &sim_policy_gclock,
    &sim_policy_nbq_clock, &sim_policy_baglru, &sim_policy_gdwheel, &sim_policy_mcslru,
    &sim_policy_clockpro, &sim_policy_arc, &sim_policy_s3fifo, &sim_policy_sieve, &sim_policy_twoq,
    &sim_policy_lfu, &sim_policy_gdsf, &sim_policy_opt, &sim_policy_lirs, &sim_policy_wtinylfu, &sim_policy_lhd, &sim_policy_mlclock,
    &sim_policy_extstore,
};
#define NPOL (sizeof policies / sizeof policies[0])

static const struct { const char *alias, *name; } aliases[] = {
    {"nbq", "nbq-clock"}, {"nbqclock", "nbq-clock"}, {"bag-lru", "baglru"}, {"bag", "baglru"},
    {"gd-wheel", "gdwheel"}, {"memcached", "mcslru"}, {"mc-slru", "mcslru"},
    {"clock-pro", "clockpro"}, {"s3-fifo", "s3fifo"}, {"2q", "twoq"}, {"belady", "opt"},
    {"min", "opt"}, {"ml-clock", "mlclock"}, {"w-tinylfu", "wtinylfu"}, {"tinylfu", "wtinylfu"},
};

const sim_policy_ops *sim_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].alias) == 0)
            name = aliases[i].name;
    for (size_t i = 0; i < NPOL; i++)
        if (strcasecmp(name, policies[i]->name) == 0)
            return policies[i];
    return NULL;
}

const char *const *sim_policy_names(void)
{
    static const char *names[NPOL + 1];
    for (size_t i = 0; i < NPOL; i++)
        names[i] = policies[i]->name;
    names[NPOL] = NULL;
    return names;
}

const char *sim_policy_describe(const char *name)
{
    const sim_policy_ops *p = sim_policy_find(name);
    return p ? p->describe : NULL;
}

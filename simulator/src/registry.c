/* The policy table: adding a policy = one file in policies/ plus one line here. */
#include "cache.h"

#include <strings.h>

extern const hc_policy_ops hc_policy_lru, hc_policy_fifo, hc_policy_clock, hc_policy_gclock,
    hc_policy_nbq_clock, hc_policy_baglru, hc_policy_gdwheel, hc_policy_mcslru,
    hc_policy_clockpro, hc_policy_arc, hc_policy_s3fifo, hc_policy_sieve, hc_policy_twoq,
    hc_policy_lfu, hc_policy_gdsf, hc_policy_opt, hc_policy_lirs, hc_policy_wtinylfu, hc_policy_lhd, hc_policy_mlclock;

static const hc_policy_ops *const policies[] = {
    &hc_policy_lru, &hc_policy_fifo, &hc_policy_clock, &hc_policy_gclock,
    &hc_policy_nbq_clock, &hc_policy_baglru, &hc_policy_gdwheel, &hc_policy_mcslru,
    &hc_policy_clockpro, &hc_policy_arc, &hc_policy_s3fifo, &hc_policy_sieve, &hc_policy_twoq,
    &hc_policy_lfu, &hc_policy_gdsf, &hc_policy_opt, &hc_policy_lirs, &hc_policy_wtinylfu, &hc_policy_lhd, &hc_policy_mlclock,
};
#define NPOL (sizeof policies / sizeof policies[0])

static const struct { const char *alias, *name; } aliases[] = {
    {"nbq", "nbq-clock"}, {"nbqclock", "nbq-clock"}, {"bag-lru", "baglru"}, {"bag", "baglru"},
    {"gd-wheel", "gdwheel"}, {"memcached", "mcslru"}, {"mc-slru", "mcslru"},
    {"clock-pro", "clockpro"}, {"s3-fifo", "s3fifo"}, {"2q", "twoq"}, {"belady", "opt"},
    {"min", "opt"}, {"ml-clock", "mlclock"}, {"w-tinylfu", "wtinylfu"}, {"tinylfu", "wtinylfu"},
};

const hc_policy_ops *hc_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].alias) == 0)
            name = aliases[i].name;
    for (size_t i = 0; i < NPOL; i++)
        if (strcasecmp(name, policies[i]->name) == 0)
            return policies[i];
    return NULL;
}

const char *const *hc_policy_names(void)
{
    static const char *names[NPOL + 1];
    for (size_t i = 0; i < NPOL; i++)
        names[i] = policies[i]->name;
    names[NPOL] = NULL;
    return names;
}

const char *hc_policy_describe(const char *name)
{
    const hc_policy_ops *p = hc_policy_find(name);
    return p ? p->describe : NULL;
}

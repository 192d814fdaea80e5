#include "workload.h"
#include "trmix.h"

#include <math.h>
#include <stdlib.h>


void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = tr_splitmix_next(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sim_rng_next(sim_rng *r)
{
    /* xoshiro256** */
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double sim_rng_unit(sim_rng *r) { return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53; }

int sim_zipf_init(sim_zipf *z, size_t n, double alpha)
{
    z->n = n;
    z->cdf = malloc(n * sizeof *z->cdf);
    if (!z->cdf)
        return -1;
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        s += pow((double)(i + 1), -alpha);
        z->cdf[i] = s;
    }
    for (size_t i = 0; i < n; i++)
        z->cdf[i] /= s;
    return 0;
}

size_t sim_zipf_draw(const sim_zipf *z, sim_rng *r)
{
    double u = sim_rng_unit(r);
    size_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void sim_zipf_free(sim_zipf *z) { free(z->cdf); }

uint64_t sim_key_of(uint64_t rank)
{
    uint64_t x = rank * 0x9E3779B97F4A7C15ull + 12345;
    return tr_splitmix_next(&x);
}

uint64_t *sim_wl_zipf(size_t n, size_t nkeys, double alpha, uint64_t seed)
{
    sim_zipf z;
    sim_rng r;
    uint64_t *k = malloc(n * sizeof *k);
    if (!k || sim_zipf_init(&z, nkeys, alpha) < 0) {
        free(k);
        return NULL;
    }
    sim_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        k[i] = sim_key_of(sim_zipf_draw(&z, &r));
    sim_zipf_free(&z);
    return k;
}

int sim_wl_gdwheel1(size_t n, size_t nkeys, double alpha, uint64_t seed, uint64_t **keys,
                   double **costs)
{
    sim_zipf z;
    sim_rng r;
    double *kc = malloc(nkeys * sizeof *kc);
    *keys = malloc(n * sizeof **keys);
    *costs = malloc(n * sizeof **costs);
    if (!kc || !*keys || !*costs || sim_zipf_init(&z, nkeys, alpha) < 0) {
        free(kc);
        free(*keys);
        free(*costs);
        return -1;
    }
    sim_rng_seed(&r, seed);
    /* the cost group is independent of popularity (the paper draws it per key) */
    for (size_t i = 0; i < nkeys; i++) {
        double u = sim_rng_unit(&r);
        if (u < 0.80)
            kc[i] = 10 + (double)(sim_rng_next(&r) % 21);
        else if (u < 0.95)
            kc[i] = 120 + (double)(sim_rng_next(&r) % 61);
        else
            kc[i] = 350 + (double)(sim_rng_next(&r) % 101);
    }
    for (size_t i = 0; i < n; i++) {
        size_t rank = sim_zipf_draw(&z, &r);
        (*keys)[i] = sim_key_of(rank);
        (*costs)[i] = kc[rank];
    }
    sim_zipf_free(&z);
    free(kc);
    return 0;
}

int sim_wl_gdwheel1_ycsb(size_t n, size_t nkeys, double alpha, uint64_t seed, uint64_t **keys,
                        double **costs, uint8_t **ops, size_t *total)
{
    uint64_t *gk;
    double *gc;
    if (sim_wl_gdwheel1(n, nkeys, alpha, seed, &gk, &gc) < 0)
        return -1;
    size_t N = nkeys + n;
    *keys = malloc(N * sizeof **keys);
    *costs = malloc(N * sizeof **costs);
    *ops = malloc(N);
    size_t *perm = malloc(nkeys * sizeof *perm);
    double *kc = malloc(nkeys * sizeof *kc);
    if (!*keys || !*costs || !*ops || !perm || !kc)
        return -1;
    /* recover each key's cost by re-drawing exactly as sim_wl_gdwheel1 did */
    sim_rng r;
    sim_rng_seed(&r, seed);
    for (size_t i = 0; i < nkeys; i++) {
        double u = sim_rng_unit(&r);
        if (u < 0.80)
            kc[i] = 10 + (double)(sim_rng_next(&r) % 21);
        else if (u < 0.95)
            kc[i] = 120 + (double)(sim_rng_next(&r) % 61);
        else
            kc[i] = 350 + (double)(sim_rng_next(&r) % 101);
    }
    sim_rng_seed(&r, seed ^ 0xabcdef);
    for (size_t i = 0; i < nkeys; i++)
        perm[i] = i;
    for (size_t i = nkeys; i > 1; i--) {
        size_t j = sim_rng_next(&r) % i, t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < nkeys; i++) {
        (*keys)[i] = sim_key_of(perm[i]);
        (*costs)[i] = kc[perm[i]];
        (*ops)[i] = 1; /* SIM_SET */
    }
    for (size_t i = 0; i < n; i++) {
        (*keys)[nkeys + i] = gk[i];
        (*costs)[nkeys + i] = gc[i];
        (*ops)[nkeys + i] = 0; /* SIM_GET */
    }
    free(gk);
    free(gc);
    free(perm);
    free(kc);
    *total = N;
    return 0;
}

int sim_wl_gdwheel_costs(int workload, size_t nkeys, uint64_t seed, double *kc)
{
    /* {probability, lo, hi} groups from Table I */
    static const double W[5][3][3] = {
        {{0.80, 10, 30}, {0.15, 120, 180}, {0.05, 350, 450}},
        {{0.20, 10, 30}, {0.75, 120, 180}, {0.05, 350, 450}},
        {{0.50, 10, 30}, {0.25, 120, 180}, {0.25, 350, 450}},
        {{1.00, 10, 10}, {0, 0, 0}, {0, 0, 0}},
        {{1.00, 20, 400}, {0, 0, 0}, {0, 0, 0}},
    };
    if (workload < 1 || workload > 5)
        return -1;
    const double (*g)[3] = W[workload - 1];
    sim_rng r;
    sim_rng_seed(&r, seed ^ 0xc057);
    for (size_t i = 0; i < nkeys; i++) {
        double u = sim_rng_unit(&r), acc = 0;
        int k = 0;
        for (; k < 2; k++) {
            acc += g[k][0];
            if (u < acc)
                break;
        }
        uint64_t span = (uint64_t)(g[k][2] - g[k][1]) + 1;
        kc[i] = g[k][1] + (double)(sim_rng_next(&r) % span);
    }
    return 0;
}

int sim_wl_gdwheel_ycsb(int workload, size_t n, size_t nkeys, double alpha, uint64_t seed,
                       uint64_t **keys, double **costs, uint8_t **ops, size_t *total)
{
    sim_zipf z;
    sim_rng r;
    size_t N = nkeys + n;
    double *kc = malloc(nkeys * sizeof *kc);
    size_t *perm = malloc(nkeys * sizeof *perm);
    *keys = malloc(N * sizeof **keys);
    *costs = malloc(N * sizeof **costs);
    *ops = malloc(N);
    if (!kc || !perm || !*keys || !*costs || !*ops || sim_wl_gdwheel_costs(workload, nkeys, seed, kc) < 0 ||
        sim_zipf_init(&z, nkeys, alpha) < 0)
        return -1;
    sim_rng_seed(&r, seed);
    for (size_t i = 0; i < nkeys; i++)
        perm[i] = i;
    for (size_t i = nkeys; i > 1; i--) {
        size_t j = sim_rng_next(&r) % i, t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < nkeys; i++) {
        (*keys)[i] = sim_key_of(perm[i]);
        (*costs)[i] = kc[perm[i]];
        (*ops)[i] = 1; /* SIM_SET: warm-up load */
    }
    for (size_t i = 0; i < n; i++) {
        size_t rank = sim_zipf_draw(&z, &r);
        (*keys)[nkeys + i] = sim_key_of(rank);
        (*costs)[nkeys + i] = kc[rank];
        (*ops)[nkeys + i] = 0; /* SIM_GET */
    }
    sim_zipf_free(&z);
    free(kc);
    free(perm);
    *total = N;
    return 0;
}

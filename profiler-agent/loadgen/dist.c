#include "dist.h"

#include <math.h>
#include <stdlib.h>

void lg_rng_seed(lg_rng *r, uint64_t seed)
{
    r->s[0] = tr_mix64(seed + 0x9e3779b97f4a7c15ULL);
    r->s[1] = tr_mix64(seed + 2 * 0x9e3779b97f4a7c15ULL) | 1;
}

uint64_t lg_rng_next(lg_rng *r) /* xorshift128+ */
{
    uint64_t a = r->s[0], b = r->s[1];
    r->s[0] = b;
    a ^= a << 23;
    r->s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
    return r->s[1] + b;
}

double lg_rng_unit(lg_rng *r) { return (double)(lg_rng_next(r) >> 11) * 0x1.0p-53; }

int lg_zipf_init(lg_zipf *z, uint64_t n, double alpha)
{
    z->n = n;
    z->cdf = malloc(n * sizeof *z->cdf);
    if (!z->cdf)
        return -1;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        sum += pow((double)(i + 1), -alpha);
        z->cdf[i] = sum;
    }
    for (uint64_t i = 0; i < n; i++)
        z->cdf[i] /= sum;
    return 0;
}

uint64_t lg_zipf_sample(const lg_zipf *z, lg_rng *r)
{
    double u = lg_rng_unit(r);
    uint64_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void lg_zipf_free(lg_zipf *z) { free(z->cdf); }

static double unit_of(uint64_t id, uint64_t salt)
{
    return ((double)(tr_mix64(id ^ salt) >> 11) + 0.5) * 0x1.0p-53;
}

uint32_t lg_etc_key_size(uint64_t id)
{
    const double mu = 30.7984, sigma = 8.20449, xi = 0.078688;
    double u = unit_of(id, 0x6b6579);
    double x = mu + sigma * (pow(-log(u), -xi) - 1.0) / xi; /* GEV inverse CDF */
    if (x < 8)
        x = 8;
    if (x > 240)
        x = 240;
    return (uint32_t)x;
}

uint32_t lg_etc_value_size(uint64_t id, uint32_t max)
{
    const double sigma = 214.476, xi = 0.348238;
    double u = unit_of(id, 0x76616c);
    double x = sigma * (pow(1.0 - u, -xi) - 1.0) / xi; /* GPD inverse CDF, theta 0 */
    if (x < 1)
        x = 1;
    if (x > max)
        x = max;
    return (uint32_t)x;
}

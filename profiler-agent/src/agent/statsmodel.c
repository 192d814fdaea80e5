/* Che approximation with Zipf popularity, fitted to memcached's `stats` (see statsmodel.h). */
#include "statsmodel.h"

#include <math.h>
#include <string.h>

/* Ranks are summed in geometric groups: 512 groups per evaluation whatever U is (U may be
 * 10^9); the group's popularity is the mean over its ranks (integral of x^-alpha). */
#define GROUPS 512

static double zipf_integral(double lo, double hi, double alpha)
{
    if (fabs(alpha - 1.0) < 1e-9)
        return log(hi) - log(lo);
    return (pow(hi, 1.0 - alpha) - pow(lo, 1.0 - alpha)) / (1.0 - alpha);
}

void sm_che(double alpha, double keys, double t, double *occupancy, double *hit)
{
    double norm = zipf_integral(0.5, keys + 0.5, alpha);
    double occ = 0, h = 0;
    double lo = 0.5;
    double ratio = pow((keys + 0.5) / 0.5, 1.0 / GROUPS);
    for (int g = 0; g < GROUPS; g++) {
        double hi = g == GROUPS - 1 ? keys + 0.5 : lo * ratio;
        double n = hi - lo;                                   /* ranks in the group */
        double mass = zipf_integral(lo, hi, alpha) / norm; /* their total popularity */
        if (n > 0 && mass > 0) {
            double p = mass / n;
            double in = -expm1(-p * t);                       /* 1 - exp(-p t) */
            occ += n * in;
            h += mass * in;
        }
        lo = hi;
    }
    *occupancy = occ;
    *hit = h;
}

/* Characteristic time at which the cache holds `items` (occupancy grows with t). */
static double t_for_items(double alpha, double keys, double items)
{
    double lo = 1e-3, hi = 1e18;
    for (int i = 0; i < 200 && hi / lo > 1 + 1e-9; i++) {
        double mid = sqrt(lo * hi), o, h;
        sm_che(alpha, keys, mid, &o, &h);
        if (o < items)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* Key universe at which a cache of characteristic time t holds `items`: more keys spread the
 * same requests thinner, so occupancy at fixed t grows with U. */
static double keys_for(double alpha, double t, double items)
{
    double lo = items * (1 + 1e-6), hi = 1e12;
    double o, h;
    sm_che(alpha, hi, t, &o, &h);
    if (o < items)
        return -1;
    for (int i = 0; i < 200 && hi / lo > 1 + 1e-7; i++) {
        double mid = sqrt(lo * hi);
        sm_che(alpha, mid, t, &o, &h);
        if (o < items)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

void sm_fit_curve(double items, double hit_ratio, double reads_per_s, double age_s,
                  int evicting, double span, sm_fit *out)
{
    memset(out, 0, sizeof *out);
    out->current_items = items;
    out->hit_ratio = hit_ratio;
    if (!evicting) {
        out->why = "not_evicting";
        return;
    }
    if (!(reads_per_s > 0) || items < 1 || !(hit_ratio > 0 && hit_ratio < 1)) {
        out->why = "no_reads";
        return;
    }
    if (!(age_s > 0)) {
        out->why = "no_age";
        return;
    }
    double t = reads_per_s * age_s;
    out->t_requests = t;
    /* At fixed C and t, the fitted universe U shrinks towards C as alpha falls, and the hit
     * ratio rises (fewer keys compete for the same room); past alpha ~1 no universe fills
     * the cache at this t. Bisect alpha over [0.01, 3] on that decreasing branch. */
    double alo = 0.01, ahi = 3.0, keys = -1;
    double o, h;
    for (int i = 0; i < 60; i++) {
        double a = 0.5 * (alo + ahi);
        double u = keys_for(a, t, items);
        if (u < 0) { /* no universe fills the cache at this t: less skew */
            ahi = a;
            continue;
        }
        sm_che(a, u, t, &o, &h);
        if (h < hit_ratio)
            ahi = a;
        else
            alo = a;
        keys = u;
    }
    out->alpha = 0.5 * (alo + ahi);
    if (keys < 0 || (keys = keys_for(out->alpha, t, items)) < 0) {
        out->why = "no_fit";
        return;
    }
    sm_che(out->alpha, keys, t, &o, &h);
    if (fabs(h - hit_ratio) > 0.01) { /* the fit ran into a bound of alpha */
        out->why = "no_fit";
        return;
    }
    out->keys = keys;
    double best = 0;
    for (int k = 0; k < SM_POINTS; k++) {
        double c = (k + 1) * span * items / SM_POINTS;
        double hk = 1.0;
        if (c < keys) {
            double tk = t_for_items(out->alpha, keys, c);
            sm_che(out->alpha, keys, tk, &o, &hk);
        }
        if (hk < best) /* bisection noise: an LRU curve never falls */
            hk = best;
        best = hk;
        out->size_items[k] = c;
        out->hit[k] = hk;
    }
    out->ok = 1;
    out->why = "fitted";
}

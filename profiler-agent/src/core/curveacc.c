#include "curveacc.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>

int curveacc_init(curveacc *a, uint32_t G, double xmax)
{
    if (G < 1 || !(xmax > 0)) return -1;
    a->G = G;
    a->xmax = xmax;
    a->w = xmax / G;
    a->inv_w = G / xmax;
    a->A = calloc((size_t)G + 1, sizeof(double));
    a->F = calloc((size_t)G + 1, sizeof(double));
    if (!a->A || !a->F) { curveacc_free(a); return -1; }
    return 0;
}

void curveacc_free(curveacc *a)
{
    free(a->A); free(a->F);
    a->A = a->F = NULL;
}

void curveacc_clear(curveacc *a)
{
    memset(a->A, 0, ((size_t)a->G + 1) * sizeof(double));
    memset(a->F, 0, ((size_t)a->G + 1) * sizeof(double));
}

/* Grid index of the first grid point >= s (G+1 when beyond the grid). */
static inline uint32_t first_at_or_after(const curveacc *a, double s)
{
    double x = s * a->inv_w - 1e-9;          /* tolerate rounding when s sits on a point */
    if (!(x > 0)) return 0;
    if (x > a->G) return a->G + 1;
    /* ceil without the libm call (x is in (0, G] here, so the cast cannot overflow) */
    uint32_t c = (uint32_t)x;
    return c + ((double)c < x);
}

static inline void add_ramp(curveacc *a, double s, double v)
{
    uint32_t c = first_at_or_after(a, s);
    if (c > a->G) return;
    a->A[c] += v;
    double off = c * a->w - s;
    off = off > 0 ? off : 0;            /* branch-free (maxsd): adding v*0 changes nothing */
    a->F[c] += v * off;
}

void curveacc_add_uniform(curveacc *a, double s, double e, double weight)
{
    if (s < 0) s = 0;
    if (e - s < 1e-9) {
        uint32_t c = first_at_or_after(a, s);
        if (c <= a->G) a->F[c] += weight;
        return;
    }
    double v = weight / (e - s);
    add_ramp(a, s, v);
    add_ramp(a, e, -v);
}

void curveacc_eval(const curveacc *a, double *H)
{
    double S1 = 0, h = 0;
    for (uint32_t j = 0; j <= a->G; j++) {
        h += a->w * S1 + a->F[j];
        S1 += a->A[j];
        H[j] = h;
    }
}

double curveacc_at(const curveacc *a, const double *H, double x)
{
    if (x <= 0) return H[0];
    if (x >= a->xmax) return H[a->G];
    double fj = x * a->inv_w;
    uint32_t j = (uint32_t)fj;
    if (j >= a->G) return H[a->G];
    double t = fj - j;
    return H[j] + t * (H[j + 1] - H[j]);
}

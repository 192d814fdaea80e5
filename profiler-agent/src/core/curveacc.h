/*
 * Curve accumulator: MIMIR's DELTA array (Alg. 1-2) generalised to a fixed grid.
 *
 * MIMIR adds a uniform unit of hit mass over a stack-distance range [start, end) with two
 * writes into DELTA and integrates once for the histogram. We keep the grid at a fixed number of
 * cells G over [0, xmax] (xmax = k*N in items) instead of one cell per item, so memory does not
 * grow with N, yet the cumulative hit count at every grid point stays exact: a uniform range is
 * the difference of two ramps v*(x-s)+ and each ramp is two O(1) writes (slope into A at the
 * first grid point at or after s, and the fractional head start into F). Integrating twice
 * (curveacc_eval) gives H(x_j) = hits with stack distance <= x_j at every grid point x_j.
 */
#ifndef HC_CURVEACC_H
#define HC_CURVEACC_H
#include <stdint.h>

typedef struct curveacc {
    uint32_t G;        /* cells; grid points x_j = j*w, j = 0..G */
    double xmax, w, inv_w;
    double *A;         /* slope changes (G+1) */
    double *F;         /* steps / fractional offsets (G+1) */
} curveacc;

int curveacc_init(curveacc *a, uint32_t G, double xmax);
void curveacc_free(curveacc *a);
void curveacc_clear(curveacc *a);
/* Add `weight` hits spread uniformly over stack distances (s, e]; e <= s puts it all at s. */
void curveacc_add_uniform(curveacc *a, double s, double e, double weight);
/* H[0..G]: cumulative hits at each grid point. */
void curveacc_eval(const curveacc *a, double *H);
/* Cumulative hits at arbitrary x given H from curveacc_eval (linear inside a cell). */
double curveacc_at(const curveacc *a, const double *H, double x);
#endif

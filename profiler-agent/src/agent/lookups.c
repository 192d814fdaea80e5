#include "lookups.h"

#include <math.h>
#include <string.h>

static uint64_t delta(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

static double share(double other, double reads)
{
    return other > 0 && other + reads > 0 ? other / (other + reads) : 0;
}

/* memcached's incrs and decrs (arith) the stream did not tell apart. The told ones (told, of the
 * stream's window) are scaled by how much of memcached's window the stream holds (its found
 * lookups, told and fed, against memcached's found lookups `found_mc`): a stream lagging its
 * counters under load tells apart fewer than memcached counted, and the shortfall is no lookup
 * left among the reads. */
static uint64_t untold(uint64_t arith, uint64_t told, uint64_t fed, double found_mc)
{
    if (told == 0)
        return arith;
    double seen = (double)(told + fed);
    double scaled = found_mc > 0 && seen > 0 ? (double)told * found_mc / seen : (double)told;
    return (double)arith > scaled ? (uint64_t)llround((double)arith - scaled) : 0;
}

void ag_lookups_window(ag_lookups *lk, const mc_stats *s0, const mc_stats *s1, int enabled,
                       const ag_window_counts *win)
{
    memset(lk, 0, sizeof *lk);
    lk->enabled = enabled;
    lk->told_deletes = win->told_deletes;
    lk->told_counters = win->told_counters;
    lk->reads_found = delta(s0->get_hits, s1->get_hits);
    lk->reads_missed = delta(s0->get_misses, s1->get_misses);
    /* A told-apart delete's lookup already left the stream; an unsuccessful one printed no
     * `deleted` line and is still there (delete_misses), as is a binary delete's. */
    uint64_t dh = delta(s0->delete_hits, s1->delete_hits);
    dh = dh > win->told_deletes ? dh - win->told_deletes : 0;
    /* so did the counter lookups told apart (ag_counter_rule) */
    uint64_t ih = delta(s0->incr_hits, s1->incr_hits) + delta(s0->decr_hits, s1->decr_hits);
    uint64_t th = delta(s0->touch_hits, s1->touch_hits);
    ih = untold(ih, win->told_counters, win->hits,
                (double)(lk->reads_found + th + ih + dh));
    lk->other_found = th + ih + dh;
    lk->other_missed =
        delta(s0->touch_misses, s1->touch_misses) + delta(s0->incr_misses, s1->incr_misses) +
        delta(s0->decr_misses, s1->decr_misses) + delta(s0->delete_misses, s1->delete_misses);
    if (!enabled)
        return;
    lk->found_share_all = share((double)lk->other_found, (double)lk->reads_found);
    lk->miss_share = share((double)lk->other_missed, (double)lk->reads_missed);
    double adds = 0;
    for (int c = 1; c < AG_FEED_CLASSES && c < MC_MAX_CLASSES; c++)
        adds += (double)win->add_refills_cls[c];
    double others = lk->miss_share * (double)win->misses; /* the stream's share of them */
    if (adds > 0 && others > 0) {
        double take = others < adds ? others : adds;
        lk->miss_by_class = 1;
        for (int c = 1; c < AG_FEED_CLASSES && c < MC_MAX_CLASSES; c++)
            lk->add_removed[c] = (double)win->add_refills_cls[c] * take / adds;
        lk->miss_share_rest =
            (double)win->misses > take ? (others - take) / ((double)win->misses - take) : 0;
    }
    for (int c = 1; c < MC_MAX_CLASSES; c++) {
        const mc_class_stats *a = &s0->cls[c], *b = &s1->cls[c];
        if (!b->present)
            continue;
        uint64_t del = delta(a->delete_hits, b->delete_hits);
        uint64_t told = c < AG_FEED_CLASSES ? win->told_deletes_cls[c] : 0;
        del = del > told ? del - told : 0;
        uint64_t arith = delta(a->incr_hits, b->incr_hits) + delta(a->decr_hits, b->decr_hits);
        uint64_t touch = delta(a->touch_hits, b->touch_hits);
        uint64_t gets = delta(a->get_hits, b->get_hits);
        if (c < AG_FEED_CLASSES)
            arith = untold(arith, win->told_counters_cls[c], win->hits_cls[c],
                           (double)(gets + touch + arith + del));
        double other = (double)(touch + arith + del);
        lk->found_share[c] = share(other, (double)delta(a->get_hits, b->get_hits));
    }
}

#define AG_COUNTER_DECAY 0.95 /* per window: a half-life of ~14 windows */

int ag_lookups_judge_counters(ag_counter_rule *r, const mc_stats *s0, const mc_stats *s1,
                              int enabled, const ag_window_counts *win)
{
    int refuted = 0;
    for (int c = 1; c < AG_FEED_CLASSES && c < MC_MAX_CLASSES; c++) {
        const mc_class_stats *a = &s0->cls[c], *b = &s1->cls[c];
        uint64_t arith = b->present ? delta(a->incr_hits, b->incr_hits) +
                                          delta(a->decr_hits, b->decr_hits)
                                    : 0;
        uint64_t seen = win->counter_found_cls[c];
        r->seen[c] = AG_COUNTER_DECAY * r->seen[c] + (double)seen;
        r->arith[c] = AG_COUNTER_DECAY * r->arith[c] + (double)arith;
        /* 5 % and one window's worth for the edges */
        double allow = r->arith[c] / 20 + fmax((double)arith, r->last_arith[c]) + 8;
        r->last_arith[c] = (double)arith;
        if (r->seen[c] > r->arith[c] + allow && !r->refuted[c]) {
            r->refuted[c] = 1;
            refuted++;
        }
        r->engaged[c] = enabled && !r->refuted[c] && arith > 0 && seen > 0;
    }
    return refuted;
}

double ag_lookups_reads(const ag_lookups *lk, uint64_t found, uint64_t missed)
{
    if (!lk->enabled)
        return (double)(found + missed);
    return (double)found * (1 - lk->found_share_all) + (double)missed * (1 - lk->miss_share);
}

double ag_lookups_hit_ratio(const ag_lookups *lk, uint64_t found, uint64_t missed)
{
    double reads = ag_lookups_reads(lk, found, missed);
    if (reads <= 0)
        return -1;
    double hits = lk->enabled ? (double)found * (1 - lk->found_share_all) : (double)found;
    return hits / reads;
}

double ag_lookups_correct_curve(const ag_lookups *lk, int clsid, hc_curve *cv, double hit_at_n,
                                double *error_pp)
{
    *error_pp = 0;
    if (!lk->enabled || cv->reads == 0 || cv->npoints == 0 || hit_at_n < 0)
        return hit_at_n;
    int in = clsid > 0 && clsid < MC_MAX_CLASSES;
    double f = in ? lk->found_share[clsid] : 0;
    double m = lk->miss_share;
    if (f <= 0 && m <= 0)
        return hit_at_n;
    double r = (double)cv->reads, n = (double)cv->capacity_items;
    double h_n = hit_at_n * r;                     /* hits at N, in lookups */
    double h_max = cv->hit_ratio[cv->npoints - 1] * r;
    double ghost = h_max > h_n ? h_max - h_n : 0;  /* the ghost's hits out to k*N */
    double missed = r - h_n > 0 ? r - h_n : 0;
    double cold = missed - ghost > 0 ? missed - ghost : 0;
    double rf = f * h_n, rm = m * missed;
    if (lk->miss_by_class) {
        double a = in ? lk->add_removed[clsid] : 0;
        a = a < missed ? a : missed;
        rm = a + lk->miss_share_rest * (missed - a);
    }
    /* the other commands' misses come out of the cold misses first (see lookups.h) */
    double from_ghost = rm > cold ? rm - cold : 0;
    double gscale = ghost > 0 ? 1 - from_ghost / ghost : 1;
    double r2 = r - rf - rm;
    if (r2 < 1) {
        /* nothing but other commands' lookups: no reads to draw a curve of */
        for (uint32_t i = 0; i < cv->npoints; i++)
            cv->hit_ratio[i] = 0;
        cv->reads = 0;
        return -1;
    }
    double worst = 0;
    for (uint32_t i = 0; i < cv->npoints; i++) {
        double h = cv->hit_ratio[i] * r, h2;
        if (cv->size_items[i] <= n) {
            h2 = h * (1 - f);
            /* the other commands' rf hits could lie anywhere in [0, h_n]: at this size at
             * least rf - (h_n - h), at most min(rf, h) of them */
            double lo = rf - (h_n - h) > 0 ? rf - (h_n - h) : 0, hi = rf < h ? rf : h;
            double d = fmax(fabs(h * f - lo), fabs(hi - h * f));
            if (d > worst)
                worst = d;
        } else {
            double g = h > h_n ? h - h_n : 0;
            h2 = h_n * (1 - f) + g * gscale;
        }
        cv->hit_ratio[i] = h2 / r2 > 1 ? 1 : h2 / r2;
    }
    /* above N: the misses taken as cold could have been ghost hits, min(rm, ghost) at most */
    double above = fmin(rm - from_ghost, ghost - from_ghost);
    if (above > worst)
        worst = above;
    *error_pp = 100 * worst / r2;
    cv->reads = (uint64_t)llround(r2);
    cv->hits_observed = (uint64_t)llround((double)cv->hits_observed * (1 - f));
    return h_n * (1 - f) / r2;
}

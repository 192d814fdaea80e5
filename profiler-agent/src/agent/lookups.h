/*
 * Which of the window's item_get lines were reads, as memcached counts them.
 *
 * memcached logs one `item_get` per hash lookup (do_item_get), whatever the command: get,
 * gets, multi-key get and mg are reads (get_hits / get_misses), but touch, gat/gats and mg
 * with T count as touch_hits / touch_misses, incr/decr/ma as incr_* / decr_*, delete/md as
 * delete_*, and their lookups print exactly like a read's (logger.c, items.c of 1.5.16 ...
 * 1.6.45). The stream tells only some apart: store lookups pair with their item_store (the
 * normaliser drops them), and on memcached >= 1.6.20 a successful text or meta delete/md is
 * followed by a `deleted` line (paired away too; the binary protocol's delete prints none).
 * The rest cannot be told apart line by line; counters are told apart by key where memcached's
 * counters bear it out (feed.h, ag_counter_rule: their lookups never reach the profile).
 *
 * memcached's own counters say how many there were: per slab class for found lookups
 * (`stats slabs` N:get_hits against N:touch_hits + N:incr_hits + N:decr_hits +
 * N:delete_hits), for the whole cache for missing ones (misses carry no class). This module
 * turns those into shares and corrects the agent's counts and curves with them:
 *  - the agent's hit ratio: each found lookup a read with probability 1 - found_share, each
 *    missing one with 1 - miss_share (exact when the stream is complete or loses lines of
 *    every command alike);
 *  - a class's curve: below N its hits scale by 1 - found_share of the class (the other
 *    commands' hits assumed to fall at the reads' stack distances); its missing lookups lose
 *    their share (misses refilled by an add first, see add_removed), taken from the cold misses
 *    first (a counter's first incr, a delete of a key never stored: misses at every size), from
 *    the ghost's hits above N only past them.
 * `error` bounds what those assumptions can get wrong, per class and for the window.
 * All of it is off with `lookup_correction = off` (the raw counts, for comparison).
 */
#ifndef AG_LOOKUPS_H
#define AG_LOOKUPS_H

#include <stdint.h>

#include "../core/profile.h"
#include "feed.h"
#include "stats.h"

typedef struct ag_lookups {
    int enabled;
    uint64_t told_deletes;     /* successful deletes the stream told apart (`deleted` lines) */
    uint64_t told_counters;    /* counter lookups told apart by key (ag_counter_rule) */
    /* memcached's counts for the window */
    uint64_t reads_found, reads_missed;       /* get_hits, get_misses */
    uint64_t other_found, other_missed;       /* lookups of other commands still in the stream */
    double found_share[MC_MAX_CLASSES];       /* of a class's found lookups, not reads */
    double found_share_all;                   /* ... over all classes */
    double miss_share;                        /* of missing lookups, not reads */
    /* memcached counts other commands' misses for the whole cache only. Those refilled by an
     * `add` (a counter created after its first incr missed) are taken as theirs first, in the
     * class the add stored into; the rest is spread over every class's misses */
    int miss_by_class;                        /* the window saw add refills */
    double add_removed[MC_MAX_CLASSES];       /* a class's misses taken as others' (events) */
    double miss_share_rest;                   /* ...and the share of its other misses */
} ag_lookups;

/* From this share of missing lookups that were other commands' (a window's miss_share), a
 * miss's ghost hit waits for its refill SET (hc_profile_set_refill_rule). */
#define AG_REFILL_RULE_SHARE 0.01

/* The window's shares from two polls and the feed's counts (the deletes it told apart). */
void ag_lookups_window(ag_lookups *lk, const mc_stats *s0, const mc_stats *s1, int enabled,
                       const ag_window_counts *win);

/* The counter rule for the next window (feed.h, ag_counter_rule), from this window's found
 * lookups of add-created keys against memcached's incr/decr hits per class; off when the
 * correction is. Returns how many classes this window refuted. */
int ag_lookups_judge_counters(ag_counter_rule *r, const mc_stats *s0, const mc_stats *s1,
                              int enabled, const ag_window_counts *win);

/* The agent's read hit ratio from its found / missing lookups (-1 if none). */
double ag_lookups_hit_ratio(const ag_lookups *lk, uint64_t found, uint64_t missed);
/* Reads among the agent's lookups (the self-check's reads_seen). */
double ag_lookups_reads(const ag_lookups *lk, uint64_t found, uint64_t missed);

/* Corrects a class's curve in place (hit ratios and reads); *error_pp gets the bound of the
 * correction's assumptions at any size, in percentage points (0 when nothing was removed).
 * Returns the corrected hit ratio at N (hit_at_n: the profile's, before). */
double ag_lookups_correct_curve(const ag_lookups *lk, int clsid, hc_curve *cv, double hit_at_n,
                                double *error_pp);

#endif

#include "ghost.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>

int ghost_init(ghost *g, uint32_t F, double capacity, double fpp, int keep_coverage, int exact)
{
    if (F < 2) return -1;
    if (!(fpp > 0 && fpp < 1)) fpp = 0.01;
    g->F = F;
    g->order = calloc(F, sizeof(uint32_t));
    if (!g->order) return -1;
    for (uint32_t i = 0; i < F; i++) g->order[i] = i;
    g->rotations = 0;
    g->merges = 0;
    g->flushed = 0;
    g->lost_mark = -1;
    g->exact = exact != 0;
    g->covered = g->exact;
    g->covering = 0;
    g->uncovered = 0;
    g->keep_coverage = keep_coverage;
    g->capacity = capacity;
    g->cap_f = capacity / (F - 1);
    if (g->cap_f < 1) g->cap_f = 1;
    g->cells = NULL;
    g->count = calloc(F, sizeof(double));
    g->filters = calloc(F, sizeof(cbf));
    g->born = calloc(F, sizeof(uint64_t));
    g->lost = calloc(F, sizeof(double));
    if (!g->count || !g->filters || !g->born || !g->lost) { ghost_free(g); return -1; }
    /* A miss probes every filter, so each filter gets fpp/F: the chance that one lookup of an
     * absent key says "yes" stays near fpp whatever F is. That matters twice: a false "yes"
     * adds a phantom hit, and removing the phantom decrements another key's counters (a later
     * false negative). Classic optimal sizing plus 20% cells because blocking raises the rate;
     * with keep_coverage filters get headroom for one merge (2x). */
    double pf = fpp / F;
    double bpk = -log(pf) / (M_LN2 * M_LN2) * 1.2;
    uint32_t probes = (uint32_t)lround(-log(pf) / M_LN2);
    g->slack = keep_coverage ? 2.0 : 1.0;
    g->sized_cap_f = g->cap_f;
    uint64_t nb;
    uint32_t l;
    cbf_geometry((uint64_t)ceil(g->cap_f * g->slack), bpk, probes, &nb, &l);
    size_t bytes = (size_t)nb * F * CBF_BLOCK_BYTES;
    g->cells = aligned_alloc(CBF_BLOCK_BYTES, bytes);
    if (!g->cells) { ghost_free(g); return -1; }
    memset(g->cells, 0, bytes);
    for (uint32_t i = 0; i < F; i++)
        cbf_view(&g->filters[i], g->cells + (size_t)i * CBF_BLOCK_BYTES, nb, l, F * CBF_BLOCK_BYTES);
    return 0;
}

void ghost_free(ghost *g)
{
    free(g->cells);
    free(g->filters);
    g->cells = NULL;
    free(g->count);
    free(g->order);
    free(g->born);
    free(g->lost);
    g->born = NULL;
    g->lost = NULL;
    g->order = NULL;
    g->filters = NULL;
    g->count = NULL;
}

void ghost_rescale(ghost *g, double capacity, double ratio)
{
    g->capacity = capacity;
    g->cap_f = capacity / (g->F - 1);
    if (g->cap_f < 1) g->cap_f = 1;
    for (uint32_t i = 0; i < g->F; i++) {
        g->count[i] *= ratio;
        g->lost[i] *= ratio;
    }
    g->flushed *= ratio;
}

int ghost_check_covered(ghost *g)
{
    if (g->covered) return 1;
    double c = 0;
    for (uint32_t i = 0; i < g->F; i++)
        if ((int64_t)g->born[i] > g->lost_mark) c += g->count[i];
    g->covering = c;
    if (c >= g->capacity) {
        /* (k-1)*N entries newer than the loss: the keys missing from before it are past k*N */
        for (uint32_t i = 0; i < g->F; i++)
            if ((int64_t)g->born[i] <= g->lost_mark) g->lost[i] = 0;
        g->covered = 1;
        g->lost_mark = -1;
    }
    return g->covered;
}

static void uncover(ghost *g)
{
    if (g->covered) g->uncovered++;
    g->covered = 0;
}

void ghost_lost(ghost *g)
{
    g->exact = 0;
    uncover(g);
    g->lost_mark = (int64_t)g->born[g->order[0]];
}

double ghost_lost_in_span(const ghost *g)
{
    double s = 0;
    for (uint32_t i = 0; i < g->F; i++) s += g->lost[i];
    return s;
}

void ghost_note_lost(ghost *g, double keys, double tolerance)
{
    if (!(keys > 0)) return;
    g->lost[g->order[0]] += keys;
    if (ghost_lost_in_span(g) > tolerance * g->capacity) ghost_lost(g);
}

/* Alg. 12: the oldest filter is flushed and becomes the newest. */
static void rotate(ghost *g)
{
    uint32_t F = g->F;
    /* the entries peak just before a rotation: the moment to see them reach (k-1)*N */
    ghost_check_covered(g);
    if (g->keep_coverage && F > 2) {
        double newer = 0;
        for (uint32_t r = 0; r + 1 < F; r++) newer += g->count[ghost_phys(g, r)];
        if (newer < g->capacity) {
            /* Coverage is short: free a filter by merging the adjacent (older) pair with the
             * fewest live keys, if the merged filter stays within its sized load. */
            uint32_t best = 0;
            double bestc = 0;
            for (uint32_t r = 1; r + 1 < F; r++) {
                double c = g->count[g->order[r]] + g->count[g->order[r + 1]];
                if (!best || c < bestc) { best = r; bestc = c; }
            }
            if (best && bestc <= g->cap_f * g->slack) {
                uint32_t a = g->order[best], b = g->order[best + 1];   /* b is older */
                cbf_merge(&g->filters[b], &g->filters[a]);
                g->count[b] += g->count[a];
                g->count[a] = 0;
                g->lost[b] += g->lost[a];
                g->lost[a] = 0;
                cbf_flush(&g->filters[a]);
                for (uint32_t r = best; r > 0; r--) g->order[r] = g->order[r - 1];
                g->order[0] = a;
                g->merges++;
                g->rotations++;
                /* b keeps its (older) birth: a merged filter counts only if both did */
                g->born[a] = g->rotations;
                return;
            }
        }
    }
    /* Alg. 12: flush the oldest, it becomes the newest. Its keys are older than every entry
     * left, so each lies beyond N + the entries left: past k*N if those cover (k-1)*N (then
     * flushing loses nothing the curve can see, the keep-coverage rotation's case); otherwise
     * (MIMIR's flush, or no pair to merge) they may lie inside the span. */
    uint32_t last = g->order[F - 1];
    double left = 0;
    for (uint32_t r = 0; r + 1 < F; r++) left += g->count[g->order[r]];
    if (g->count[last] > 0) {
        g->exact = 0;
        if (left < g->capacity) uncover(g);
    }
    g->flushed += g->count[last];
    g->lost[last] = 0;    /* past k*N now, or the ghost is no longer covered anyway */
    cbf_flush(&g->filters[last]);
    g->count[last] = 0;
    for (uint32_t r = F - 1; r > 0; r--) g->order[r] = g->order[r - 1];
    g->order[0] = last;
    g->rotations++;
    g->born[last] = g->rotations;
}

int ghost_resize(ghost *g, double capacity)
{
    double cap_f = capacity / (g->F - 1);
    if (cap_f < 1) cap_f = 1;
    if (cap_f > g->sized_cap_f * GHOST_RESIZE_MAX) return -1;
    /* a larger span: keys known to lie beyond the old k*N may lie inside the new one (unless
     * none is missing); coverage is earned again against the new capacity */
    if (capacity > g->capacity && !g->exact) uncover(g);
    g->capacity = capacity;
    g->cap_f = cap_f;
    return 0;
}

void ghost_evict(ghost *g, uint64_t h)
{
    if (g->count[g->order[0]] >= g->cap_f) rotate(g);
    g->count[g->order[0]] += 1;
    cbf_pos pos;
    cbf_position(&g->filters[0], h, &pos);
    cbf_insert_at(&g->filters[g->order[0]], &pos);
}

void ghost_prefetch(const ghost *g, uint64_t h)
{
    cbf_pos pos;
    cbf_position(&g->filters[0], h, &pos);
    const uint8_t *row = g->cells + pos.off;
    for (uint32_t r = 0; r < g->F; r++) __builtin_prefetch(row + (size_t)r * CBF_BLOCK_BYTES);
}

int ghost_lookup(ghost *g, uint64_t h)
{
    cbf_pos pos;
    cbf_position(&g->filters[0], h, &pos);     /* all filters share one geometry */
    /* the key's F blocks are adjacent (interleaved layout): ask for all the lines before
     * testing any, so the memory fetches overlap instead of queueing one after another */
    const uint8_t *row = g->cells + pos.off;
    uint32_t l = g->filters[0].probes;
    for (uint32_t r = 0; r < g->F; r++) __builtin_prefetch(row + (size_t)r * CBF_BLOCK_BYTES);
    for (uint32_t r = 0; r < g->F; r++) {
        uint32_t p = ghost_phys(g, r);
        /* membership first: it rejects almost every filter, the count check is then rare */
        if (cbf_block_contains(row + (size_t)p * CBF_BLOCK_BYTES, &pos, l) && g->count[p] > 0) {
            cbf_remove_at(&g->filters[p], &pos);
            g->count[p] = g->count[p] >= 1 ? g->count[p] - 1 : 0;
            return (int)r;
        }
    }
    return -1;
}

void ghost_rank_range(const ghost *g, uint32_t rank, double *start, double *end)
{
    double s = 0;
    for (uint32_t r = 0; r < rank; r++) s += g->count[ghost_phys(g, r)];
    *start = s;
    *end = s + g->count[ghost_phys(g, rank)];
}

double ghost_rank_fpp(const ghost *g, uint32_t rank)
{
    uint32_t p = ghost_phys(g, rank);
    return cbf_fpp(&g->filters[p], g->count[p]);
}

double ghost_entries(const ghost *g)
{
    double s = 0;
    for (uint32_t i = 0; i < g->F; i++) s += g->count[i];
    return s;
}

size_t ghost_bytes(const ghost *g)
{
    size_t b = g->F * (sizeof(double) + sizeof(cbf));
    for (uint32_t i = 0; i < g->F; i++) b += cbf_bytes(&g->filters[i]);
    return b;
}

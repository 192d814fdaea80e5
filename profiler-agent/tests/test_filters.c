/* Unit tests of the fast paths added for speed: the SWAR saturating merge (against a counter-by-
 * counter reference), filters with fewer probes than the 3-probe fast test, keys sharing a
 * block, counter saturation, the ghost's interleaved filters (no bleed between filters, full
 * ghost, rank order) and ROUNDER's group sums (against a direct sum of the buckets). */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "core/cbf.h"
#include "core/ghost.h"
#include "core/rounder.h"
#include "../ref/workload.h"

static unsigned nib(const uint8_t *b, unsigned q) { return (b[q >> 1] >> ((q & 1) * 4)) & 0xF; }

static void test_merge_reference(void)
{
    cbf a, b, ref;
    CHECK(cbf_init(&a, 300, 10, 7) == 0 && cbf_init(&b, 300, 10, 7) == 0 && cbf_init(&ref, 300, 10, 7) == 0, "init");
    uint64_t rs = 77;
    size_t n = cbf_bytes(&a);
    for (size_t i = 0; i < n; i++) {
        /* all 256 x 256 nibble pairs show up, including 15 + 15 and 0 + 0 */
        a.cells[i] = (uint8_t)refwl_rand(&rs);
        b.cells[i] = (uint8_t)refwl_rand(&rs);
    }
    for (size_t q = 0; q < 2 * n; q++) {
        unsigned s = nib(a.cells, (unsigned)q) + nib(b.cells, (unsigned)q);
        unsigned v = s > 15 ? 15 : s;
        ref.cells[q >> 1] = (uint8_t)((ref.cells[q >> 1] & ~(0xF << ((q & 1) * 4))) | (v << ((q & 1) * 4)));
    }
    uint8_t *bcopy = malloc(n);
    memcpy(bcopy, b.cells, n);
    cbf_merge(&a, &b);
    CHECK(memcmp(a.cells, ref.cells, n) == 0, "SWAR merge = nibble-wise min(a + b, 15)");
    CHECK(memcmp(b.cells, bcopy, n) == 0, "merge leaves the source alone");
    free(bcopy);
    cbf_free(&a); cbf_free(&b); cbf_free(&ref);
}

static void test_few_probes(void)
{
    for (uint32_t l = 1; l <= 3; l++) {
        cbf f;
        cbf_init(&f, 500, 12, l);
        CHECK(f.probes == l, "probes %u", l);
        for (uint64_t i = 0; i < 500; i++) cbf_insert(&f, refwl_keyhash(i));
        int fn = 0, fp = 0;
        for (uint64_t i = 0; i < 500; i++) fn += !cbf_contains(&f, refwl_keyhash(i));
        for (uint64_t i = 500; i < 20500; i++) fp += cbf_contains(&f, refwl_keyhash(i));
        CHECK(fn == 0, "l=%u: no false negatives (%d)", l, fn);
        double rate = fp / 20000.0, model = cbf_fpp(&f, 500);
        CHECK(rate < 2 * model + 0.01, "l=%u: fp rate %.4f vs model %.4f", l, rate, model);
        for (uint64_t i = 0; i < 500; i++) cbf_remove(&f, refwl_keyhash(i));
        int nz = 0;
        for (size_t i = 0; i < cbf_bytes(&f); i++) nz += f.cells[i] != 0;
        CHECK(nz == 0, "l=%u: removing every key empties the filter (%d bytes left)", l, nz);
        cbf_free(&f);
    }
    /* more probes than supported are clamped */
    cbf f;
    cbf_init(&f, 10, 10, 30);
    CHECK(f.probes == CBF_MAX_PROBES, "probes clamped to %u", f.probes);
    cbf_free(&f);
}

static void test_block_collisions(void)
{
    /* one block for everything: every key collides, counters are shared and many saturate */
    cbf f;
    cbf_init(&f, 1, 1, 9);
    CHECK(f.nblocks == 1, "one block");
    for (uint64_t i = 0; i < 60; i++) cbf_insert(&f, refwl_keyhash(i));
    int fn = 0;
    for (uint64_t i = 0; i < 60; i++) fn += !cbf_contains(&f, refwl_keyhash(i));
    CHECK(fn == 0, "crowded block: no false negatives (%d)", fn);
    for (uint64_t i = 0; i < 59; i++) cbf_remove(&f, refwl_keyhash(i));
    CHECK(cbf_contains(&f, refwl_keyhash(59)), "removing 59 colliding keys keeps the 60th");
    int bad = 0;
    for (unsigned q = 0; q < CBF_BLOCK_CELLS; q++) bad += nib(f.cells, q) > 15;
    CHECK(bad == 0, "counters stay in 0..15");
    /* a key's probes may repeat a counter: insert/remove must still cancel exactly */
    cbf_flush(&f);
    int dup_keys = 0;
    for (uint64_t k = 0; k < 2000; k++) {
        cbf_pos p;
        uint64_t h = refwl_keyhash(k + 1000000);
        cbf_position(&f, h, &p);
        int dup = 0;
        for (int i = 0; i < 9; i++)
            for (int j = i + 1; j < 9; j++) dup |= ((p.bits >> (7 * i)) & 127) == ((p.bits >> (7 * j)) & 127);
        if (!dup) continue;
        dup_keys++;
        cbf_insert(&f, h);
        CHECK(cbf_contains(&f, h), "key with a repeated probe found");
        cbf_remove(&f, h);
        int nz = 0;
        for (size_t i = 0; i < cbf_bytes(&f); i++) nz += f.cells[i] != 0;
        CHECK(nz == 0, "key with a repeated probe removed cleanly");
        if (dup_keys >= 5) break;
    }
    CHECK(dup_keys >= 5, "found keys with repeated probes (%d)", dup_keys);
    /* saturation: 15 stays 15 under removals */
    cbf_flush(&f);
    for (int i = 0; i < 20; i++) cbf_insert(&f, 99);
    cbf_pos p;
    cbf_position(&f, 99, &p);
    CHECK(nib(f.cells + p.off, p.bits & 127) == 15, "counter saturates at 15");
    for (int i = 0; i < 20; i++) cbf_remove(&f, 99);
    CHECK(nib(f.cells + p.off, p.bits & 127) == 15 && cbf_contains(&f, 99), "saturated counter sticks");
    cbf_free(&f);
}

static int filter_empty(const cbf *f)
{
    for (uint64_t b = 0; b < f->nblocks; b++)
        for (int i = 0; i < CBF_BLOCK_BYTES; i++)
            if (f->cells[b * f->stride + i]) return 0;
    return 1;
}

static void test_ghost_interleaved(void)
{
    ghost g;
    CHECK(ghost_init(&g, 9, 4000, 0.01, 1, 0) == 0, "init F=9");
    CHECK(g.filters[0].stride == 9 * CBF_BLOCK_BYTES && g.filters[1].cells == g.filters[0].cells + CBF_BLOCK_BYTES,
          "filters interleaved block by block");
    /* 400 evictions go to the newest filter only: the other 8 stay all zero */
    for (uint64_t i = 0; i < 400; i++) ghost_evict(&g, refwl_keyhash(i));
    int others = 0;
    for (uint32_t f = 0; f < 9; f++) if (f != g.order[0]) others += !filter_empty(&g.filters[f]);
    CHECK(others == 0, "no bleed into neighbouring filters (%d non-empty)", others);
    for (uint64_t i = 0; i < 400; i++) ghost_lookup(&g, refwl_keyhash(i));
    CHECK(filter_empty(&g.filters[g.order[0]]), "every key found and removed: filter empty again");
    /* full ghost: 10x the capacity streamed through; the newest (k-1)N keys are all found,
     * in rank order, and entries stay bounded */
    for (uint64_t i = 1000; i < 41000; i++) ghost_evict(&g, refwl_keyhash(i));
    double n = ghost_entries(&g);
    CHECK(n >= 4000 && n <= 4000 * (1 + 2.0 / 8) + 1, "full ghost bounded: %.0f entries", n);
    int missing = 0, order_bad = 0, last = 0;
    for (uint64_t i = 41000; i-- > 37000; ) {
        int r = ghost_lookup(&g, refwl_keyhash(i));
        if (r < 0) missing++;
        else { if (r < last) order_bad++; last = r; }
    }
    CHECK(missing == 0, "newest (k-1)N keys all found (%d missing)", missing);
    CHECK(order_bad < 40, "ranks grow with age (%d out of order: false positives only)", order_bad);
    /* absent keys: the whole-ghost false-positive rate stays near the target */
    int fp = 0;
    for (uint64_t i = 0; i < 20000; i++) fp += ghost_lookup(&g, refwl_keyhash(5000000 + i)) >= 0;
    CHECK(fp / 20000.0 < 0.03, "absent keys: %.4f false hits (target 0.01)", fp / 20000.0);
    ghost_free(&g);
    /* the same key evicted many times: counters saturate, the key is still found */
    ghost_init(&g, 3, 100, 0.01, 0, 0);
    for (int i = 0; i < 40; i++) ghost_evict(&g, 12345);
    CHECK(ghost_lookup(&g, 12345) == 0, "repeatedly evicted key found in the newest filter");
    ghost_free(&g);
}

static void test_rounder_groups(void)
{
    rounder r;
    rounder_init(&r, 128, 5000, 1);
    uint32_t acts[6000];
    int n = 0, bad = 0;
    uint64_t rs = 3;
    for (int step = 0; step < 200000; step++) {
        uint64_t u = refwl_rand(&rs);
        if (n < 6000 && (n < 5000 || u % 3 == 0)) { acts[n++] = rounder_set(&r); continue; }
        int i = (int)((u >> 8) % (uint64_t)n);
        if (u % 3 == 1) { double s, e; rounder_hit(&r, &acts[i], 1, &s, &e); }
        else { rounder_remove(&r, acts[i]); acts[i] = acts[--n]; }
        if (step % 997 == 0) {
            int64_t tot = 0;
            for (uint32_t g = 0; g <= (r.B >> ROUNDER_GROUP_SHIFT); g++) {
                int64_t s = 0;
                for (uint32_t j = g << ROUNDER_GROUP_SHIFT; j < ((g + 1) << ROUNDER_GROUP_SHIFT) && j < r.nb; j++) s += r.buckets[j];
                if (s != r.gsum[g]) bad++;
                tot += s;
            }
            if (tot != r.total || r.total != n) bad++;
        }
    }
    CHECK(bad == 0, "group sums = bucket sums, total = items (%d mismatches, %llu agings)", bad, (unsigned long long)r.agings);
    CHECK(r.agings > 100 && r.nb == r.B, "aging exercised (%llu, nb %u)", (unsigned long long)r.agings, r.nb);
    rounder_free(&r);
}

int main(void)
{
    test_merge_reference();
    test_few_probes();
    test_block_collisions();
    test_ghost_interleaved();
    test_rounder_groups();
    return TEST_DONE();
}

/*
 * Transparent huge pages for the large tables of the C components (the agent's key, class,
 * TTL and prefix tables, its ghosts and the normaliser's piles). They are read at random, one
 * or two lines per event, and span tens of MiB: with 4 KiB pages nearly every access also
 * missed the TLB. Debian and most distributions ship THP in "madvise" mode, so memory gets
 * 2 MiB pages only where asked. Not the agent's ring: its reader writes fresh ring memory at
 * line rate, and a huge page fault there (zeroing 2 MiB, compaction when memory is
 * fragmented) stalled the reader: 0.11-0.13 us a line without, 0.14-0.29 with.
 * Only the 2 MiB-aligned interior of the block is advised (malloc's large blocks are fresh
 * mmaps, page- but not huge-aligned); a block under 4 MiB gains nothing and is left alone.
 * A hint: where THP is off or unknown the memory is ordinary and nothing changes.
 */
#ifndef TRHUGE_H
#define TRHUGE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define TR_HUGE_PAGE ((uintptr_t)2 << 20)

static inline void tr_huge_hint(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + TR_HUGE_PAGE - 1) & ~(TR_HUGE_PAGE - 1);
    uintptr_t e = ((uintptr_t)p + len) & ~(TR_HUGE_PAGE - 1);
    if (p && e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}
#endif

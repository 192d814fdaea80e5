/*
 * memcached's flash tier (extstore) as the agent sees it: the stream's `extwrite` lines and the
 * header items they leave in RAM, and the snapshot's `extstore` object (docs/agent-protocol.md,
 * "Extstore").
 *
 * What memcached does (storage.c, storage_write): its storage thread takes an item from the COLD
 * tail of a class C (values of at least ext_item_size bytes, older than ext_item_age), copies it
 * into a flash write buffer and replaces it in RAM with a header item: the key, the item's
 * metadata and where the value sits on flash (item_hdr: page id, page version, offset), in the
 * smallest class H that holds sizeof(item) + key + 1 + 12 (+ 8 with CAS, + 4 with client flags)
 * bytes: 96 B chunks for short keys. It logs `type=extwrite key=.. clsid=C` on `watch evictions`.
 * The key is still cached: the line is neither an eviction (memcached's evictions do not count
 * it) nor a store. A later get finds the header (`item_get status=found clsid=H size=<value>`:
 * memcached overloads the header's nbytes with the value's), counts a get_hit in H and reads the
 * value from flash (get_extstore); a flash read that finds the page gone or the crc wrong is a
 * miss for the client (miss_from_extstore) although get_hits counted it. A header evicted from
 * H (`type=eviction clsid=H`) takes the key out of the cache: that is a real eviction, from the
 * header's class. One in ext_recache_rate flash hits of an active item writes it back to RAM,
 * whole, in C, with no line.
 *
 * For the per-class RAM profiles an extwrite is neither an eviction nor a set: the key stays in
 * C's LRU until its first flash hit, which moves it to H (moving it to the head of H's LRU at the
 * flush, where memcached links the header, over-read the curve at today's size: extstore.c);
 * header hits and header evictions are then H's own. A header takes one H chunk of RAM, which is
 * what the curves' byte axis counts; the `extstore` object says how many of a class's items are
 * headers, so no surface reads them as whole items.
 *
 * Order: extwrite lines do not pass through the normaliser's gid reordering; they wait here
 * (by gid) until the normaliser has released the events before them, so a hit of the item in C
 * logged just before the flush does not move the key back.
 */
#ifndef AG_EXTSTORE_H
#define AG_EXTSTORE_H

#include <jansson.h>
#include <stdint.h>

#include "../core/profile.h"
#include "stats.h"
#include "watchline.h"

#define AG_EXT_PENDING 65536   /* extwrite lines waiting for their gid's turn */
#define AG_EXT_CLASSES 64

typedef struct ag_ext_entry {  /* a key whose value is on flash (direct-mapped, by key hash) */
    uint32_t tag;              /* 0 = empty */
    uint32_t gid32;            /* the extwrite's gid (low 32 bits): older lines predate it */
    uint8_t cls;               /* C: the class the whole item was in */
    uint8_t hdr;               /* H: the class its header is in (0 not known) */
    uint16_t keylen;
} ag_ext_entry;

typedef struct ag_ext_pending {
    uint64_t gid, key;
    int64_t arrival_us;        /* when the reader got it (monotonic) */
    int16_t cls;
    uint16_t keylen;
} ag_ext_pending;

typedef struct ag_ext {
    ag_ext_entry *tab;         /* allocated at the first extwrite (no cost without extstore) */
    uint64_t mask;
    ag_ext_pending *pend;
    uint32_t phead, ptail;     /* FIFO, gid order as the stream delivers them */
    /* H per key length, learned from found lookups of flushed keys (the formula in the header
     * comment misses client flags and -C); 0 = not learned */
    uint8_t hdr_by_len[WL_MAX_KEY + 1];
    /* headers the stream put in each class and has not seen leave (extwrite in; eviction,
     * delete, store, recache or expiry out); capped by memcached's items per class */
    int64_t headers[AG_EXT_CLASSES];
    /* this window */
    uint64_t win_extwrites, win_flash_hits_seen, win_header_evictions, win_hdr_guess_wrong;
    uint64_t win_hdr_other;    /* flushed keys found whole in neither their class nor H */
    uint64_t extwrites_total, pending_overflow, untracked; /* cumulative */
} ag_ext;

void ag_ext_init(ag_ext *x);
void ag_ext_free(ag_ext *x);
/* A new memcached instance: nothing known about its flash tier. */
void ag_ext_clear(ag_ext *x);
/* An extwrite line off the ring; applied by ag_ext_release once its gid's turn comes. */
void ag_ext_line(ag_ext *x, hc_profile *prof, const mc_stats *s, const wl_line *l, int64_t arrival_us);
/* Apply the extwrites older than gid (UINT64_MAX: all of them), and those that arrived before
 * arrived_before_us: the normaliser has released every line that came with them (its reorder
 * time), which matters when no event follows (memcached's storage thread flushes on while no
 * client asks). */
void ag_ext_release(ag_ext *x, hc_profile *prof, const mc_stats *s, uint64_t gid,
                    int64_t arrived_before_us);
/* Every normalised event before the profile sees it: header hits, header evictions, stores
 * over a flushed key. */
void ag_ext_event(ag_ext *x, int op, uint64_t key, int clsid, uint64_t gid);
/* The snapshot's `extstore` object (NULL when memcached runs no flash tier). */
json_t *ag_ext_json(const ag_ext *x, const mc_stats *s0, const mc_stats *s1);
void ag_ext_window_reset(ag_ext *x);

#endif

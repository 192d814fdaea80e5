/*
 * watchline: parse memcached 1.6 `watch fetchers mutations evictions` lines and normalise
 * them into HIT / MISS / SET / DELETE / EVICT events. Used by the "watchlog" trace format and
 * by the live agent on the socket stream (same code, so offline replays of a captured stream
 * and the live profile agree).
 *
 * Facts this code relies on (memcached 1.6.18, see research_memcached_watch.md):
 *  - every line is `ts=SEC.USEC gid=N type=...`; USEC is printed with %d (not zero-padded);
 *  - keys are URI-encoded (%XX), binary-safe, at most 250 bytes decoded;
 *  - set/add/replace/cas/append/prepend log an internal item_get before their item_store on
 *    the same connection (cfd); a too_large/no_memory store is followed by an internal
 *    item_get that unlinks the old value (and its cfd/clsid fields are garbage);
 *  - expired/flushed reads are misses that also remove the item;
 *  - lines arrive out of gid order (grouped per worker, lag up to ~1 s);
 *  - `skipped=N` lines (no ts, no gid) count lines the watcher lost.
 * Other versions (research_versions_users_scale.md §1.2): 1.5.x has no cfd= and no size=
 * (stores are paired with their internal lookup by key instead of by connection, and sizes
 * come from the class); >= 1.6.20 `type=deleted` lines; newer `type=` values and trailing
 * fields are tolerated (unknown types are counted, never fatal); free text after a
 * non-item line's last field (connerr msg=, proxy_req req=) is ignored.
 */
#ifndef WATCHLINE_H
#define WATCHLINE_H

#include <stddef.h>
#include <stdint.h>

#include "tracereader.h"

#define WL_MAX_KEY 250

enum wl_type {
    WL_OTHER = 0,   /* a well-formed line of another type (conn_new, lru_crawler, OK, ...) */
    WL_GET,         /* type=item_get */
    WL_STORE,       /* type=item_store */
    WL_EVICTION,    /* type=eviction */
    WL_SKIPPED,     /* skipped=N */
    WL_DELETED,     /* type=deleted (`watch deletions`, memcached >= 1.6.20) */
    WL_UNKNOWN,     /* a type= this parser does not know (a newer memcached): counted, ignored */
    WL_EXTWRITE     /* type=extwrite (`watch evictions`, memcached built with extstore): the item's
                       value was written to flash and a header replaced it in RAM, in a small
                       class; key and clsid (the item's class) are parsed. Not an eviction: the
                       key is still cached. The normaliser drops it like WL_OTHER. */
};

/* wl_line.fields: which optional fields the line carried (feature probing: 1.5.x lines have
 * neither cfd= nor size=; <= 1.6.17 print ts= as a 32-bit int, so nothing to tell there). */
#define WLF_CFD 1u
#define WLF_SIZE 2u

enum wl_status {
    WS_NONE = 0,
    WS_FOUND, WS_NOT_FOUND, WS_EXPIRED, WS_FLUSHED,                 /* item_get */
    WS_STORED, WS_NOT_STORED, WS_EXISTS, WS_TOO_LARGE, WS_NO_MEMORY, /* item_store */
    WS_UNKNOWN
};

typedef struct wl_line {
    uint8_t type;       /* enum wl_type */
    uint8_t status;     /* enum wl_status */
    uint8_t fetched;    /* eviction: fetch=yes */
    uint8_t has_gid;
    uint8_t fields;     /* WLF_* */
    int16_t clsid;      /* -1 unknown, or clsid > 255 (garbage on failure lines) */
    uint16_t keylen;    /* decoded key length */
    int32_t cfd;        /* -1 unknown */
    uint32_t size;      /* value length memcached reported (not the footprint) */
    int32_t ttl;        /* seconds remaining, -1 none/unknown (item_store ttl=0 -> -1) */
    int32_t la;         /* eviction: seconds since last bump, -1 unknown */
    char cmd[8];        /* item_store cmd (set, add, ...), NUL-terminated, "" if none */
    int64_t ts_us;      /* microseconds since epoch, 0 if none */
    uint64_t gid;
    uint64_t key;       /* tr_hash_key of the decoded key */
    uint64_t skipped;   /* WL_SKIPPED: N */
} wl_line;

/*
 * Parse one line (without its newline). keybuf, if non-NULL, receives the decoded key
 * (WL_MAX_KEY bytes). Returns 0 on success, -1 if the line is malformed (the caller counts it).
 */
int wl_parse(const char *line, size_t len, wl_line *out, unsigned char *keybuf);

/* Decode a URI-encoded key (%XX, uppercase or lowercase hex). Returns decoded length, or -1
 * for a bad escape or a key longer than cap. */
int wl_uridecode(const char *s, size_t len, unsigned char *out, size_t cap);

/* Parse memcached's `SEC.USEC` (USEC not zero-padded) into microseconds; 0 ok, -1 bad. */
int wl_parse_ts(const char *s, size_t len, int64_t *ts_us);

/* ---- normaliser ---------------------------------------------------------------------- */

typedef struct wn_event {
    tr_request req;     /* op: TR_HIT, TR_MISS, TR_SET, TR_DELETE, TR_EVICT */
    uint64_t gid;
    int32_t cfd;        /* -1 for evictions */
    uint8_t cause;      /* enum wn_cause: why a DELETE/MISS was produced */
    uint8_t nosize;     /* the line carried no size= (1.5.x): req.size is 0, not measured */
    uint8_t add;        /* TR_SET from `cmd=add` (a counter's creation after its first incr
                           misses, in the usual client code; a get's refill is a set) */
} wn_event;

enum wn_cause {
    WN_PLAIN = 0,
    WN_EXPIRED,        /* DELETE+MISS from status=expired */
    WN_FLUSHED,        /* DELETE+MISS from status=flushed */
    WN_FAILED_STORE,   /* DELETE from the unlink after a too_large/no_memory store */
    WN_DELETED         /* DELETE from a type=deleted line (watch deletions) */
};

typedef struct wn_config {
    uint32_t reorder_lines;   /* hold at most this many lines for gid reordering (0: 65536) */
    int64_t reorder_us;       /* live: release a line this long after it arrived (0: off) */
    uint32_t pair_gids;       /* an item_get unresolved after this many gids is a real read
                                 (0: 65536) */
    uint32_t pair_gids_nocfd; /* the same for lines without cfd= (1.5.x), paired by key: a
                                 store logs its lookup just before itself on the same worker,
                                 so only other workers' lines fall between (0: 4096) */
} wn_config;

typedef struct wn_stats {
    uint64_t lines;           /* lines pushed (parsed ok) */
    uint64_t other_lines;     /* well-formed lines of other types (unknown ones included) */
    uint64_t unknown_lines;   /* lines with a type= this parser does not know */
    uint64_t nocfd_lines;     /* item lines without cfd= (paired by key) */
    uint64_t stream_skipped;  /* sum of skipped=N */
    uint64_t internal_gets;   /* item_gets dropped as part of a store */
    uint64_t failed_stores;   /* stores with a status other than stored */
    uint64_t late_lines;      /* arrived after a higher gid had been released (emitted as is) */
    uint64_t out_of_order;    /* arrived with a gid lower than one seen before */
    uint64_t hits, misses, sets, deletes, evictions; /* events emitted */
} wn_stats;

typedef struct wn_norm wn_norm;

wn_norm *wn_new(const wn_config *cfg);  /* cfg may be NULL for defaults */
void wn_free(wn_norm *n);
/* Feed one parsed line; now_us is its arrival time (any monotonic clock; 0 offline). */
int wn_push(wn_norm *n, const wl_line *line, int64_t now_us);
/* Next normalised event that is ready at now_us; 1 = *out set, 0 = none ready yet. */
int wn_pop(wn_norm *n, int64_t now_us, wn_event *out);
/* End of stream (or reconnect): everything held becomes ready to pop. */
void wn_flush(wn_norm *n);
/* Forget everything (new memcached instance). Stats are kept. */
void wn_reset(wn_norm *n);
const wn_stats *wn_get_stats(const wn_norm *n);

#endif

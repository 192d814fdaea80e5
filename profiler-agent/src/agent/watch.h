/* The watch connection: one thread that only reads, parses and enqueues lines. */
#ifndef AG_WATCH_H
#define AG_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "keys.h"
#include "ring.h"

/* What probing found (feature detection by asking, memcached's version is a second signal). */
enum ag_watch_mode {
    AG_WATCH_UNKNOWN = 0,
    AG_WATCH_DELETIONS,     /* `watch fetchers mutations evictions deletions` accepted (>= 1.6.20) */
    AG_WATCH_NO_DELETIONS,  /* only without deletions (older memcached answers ERROR to it) */
    AG_WATCH_REFUSED        /* every form refused (ElastiCache Serverless, -W): stats only */
};

typedef struct ag_watch {
    pthread_t th;
    const char *addr;
    ag_ring *ring;
    ag_keys *keys;        /* prefix ids and clear hot-key names (NULL: off) */
    volatile int stop;
    _Atomic uint64_t lines, bytes, malformed, connects;
    _Atomic uint64_t injected;  /* --drop-lines drops (in ring->dropped too): not an overload */
    /* The sum of the stream's skipped=N lines, added as they are read: they are memcached's
     * count of what it could not send us, not events, and never go through the ring, where a
     * full ring (an agent behind after a stall, just when memcached skips) would lose them. */
    _Atomic uint64_t skipped;
    _Atomic int connected;
    _Atomic int mode;           /* enum ag_watch_mode */
    _Atomic unsigned fields;    /* WLF_* seen on item lines of the current stream */
    _Atomic uint64_t item_lines_seen;
    /* fault injection (`--drop-lines`, tests): this share of lines is dropped at the reader in
     * runs of AG_DROP_RUN, as memcached's worker buffers lose bursts, and counted as the agent's
     * own drops (loss) */
    double drop_rate;
    uint64_t drop_rng;
    uint32_t drop_left;
} ag_watch;
#define AG_DROP_RUN 256

const char *ag_watch_mode_name(int mode);

int ag_watch_start(ag_watch *w, const char *addr, ag_ring *ring, ag_keys *keys, double drop_rate);
void ag_watch_stop(ag_watch *w);

#endif

/* The watch connection: one thread that only reads, parses and enqueues lines. */
#ifndef AG_WATCH_H
#define AG_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ring.h"

typedef struct ag_watch {
    pthread_t th;
    const char *addr;
    ag_ring *ring;
    volatile int stop;
    _Atomic uint64_t lines, bytes, malformed, connects;
    _Atomic int connected;
} ag_watch;

int ag_watch_start(ag_watch *w, const char *addr, ag_ring *ring);
void ag_watch_stop(ag_watch *w);

#endif

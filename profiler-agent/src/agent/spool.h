/*
 * On-disk upload queue. Every snapshot and trace chunk is written here (gzip JSON, atomic
 * rename) before any attempt to send it, so a crash or a down backend loses nothing. Files
 * are named `<seq>-<kind>-<id>.json.gz`; seq comes from a persisted counter and orders the
 * queue. The queue is bounded in bytes and files: past the bound the OLDEST entries are
 * deleted and counted (recent data is worth more to a capacity planner than old data).
 * Entries the backend refuses as invalid (4xx) move to rejected/ and are counted.
 */
#ifndef AG_SPOOL_H
#define AG_SPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ag_spool {
    char dir[512];
    uint64_t max_bytes;
    uint32_t max_files;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* signalled on put */
    uint64_t next_seq;
    uint64_t dropped, dropped_bytes, rejected, sent, put;
    char inflight[256];       /* file being uploaded (never evicted under the uploader) */
} ag_spool;

int ag_spool_open(ag_spool *s, const char *dir, uint64_t max_bytes, uint32_t max_files);
void ag_spool_close(ag_spool *s);
/* Reserve the next sequence number (also used as the trace chunk seq). */
uint64_t ag_spool_next_seq(ag_spool *s);
/* Store an entry. kind: "snapshot" or "trace". Returns 0 or -1 (disk error). */
int ag_spool_put(ag_spool *s, uint64_t seq, const char *kind, const char *id, const void *data,
                 size_t len);
/* Oldest entry name (file name only) -> 1, none -> 0. Marks it in flight. */
int ag_spool_oldest(ag_spool *s, char *name, size_t cap);
void ag_spool_done(ag_spool *s, const char *name);     /* sent: delete */
void ag_spool_reject(ag_spool *s, const char *name);   /* refused: move to rejected/ */
void ag_spool_release(ag_spool *s);                    /* nothing in flight any more */
/* Entries and bytes queued now. */
uint64_t ag_spool_pending(ag_spool *s, uint64_t *bytes);

#endif

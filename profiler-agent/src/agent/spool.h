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
    /* Two locks so the main thread never waits on the disk: `mu` guards only counters in
     * memory (and cv); `io` serialises the directory's listing, unlinks and renames between
     * the writer thread and the uploader. Order: io before mu. */
    pthread_mutex_t mu;
    pthread_mutex_t io;
    pthread_cond_t cv;        /* signalled on put */
    uint64_t next_seq;
    uint64_t dropped, dropped_bytes, rejected, sent, put;
    uint64_t pending, pending_bytes; /* entries on disk now, counted, not listed */
    char inflight[256];       /* file being uploaded (never evicted under the uploader; io) */
    uint64_t inflight_bytes;
} ag_spool;

int ag_spool_open(ag_spool *s, const char *dir, uint64_t max_bytes, uint32_t max_files);
void ag_spool_close(ag_spool *s);
/* Reserve the next sequence number (also used as the trace chunk seq). In memory only: the
 * counter file is written by ag_spool_put. */
uint64_t ag_spool_next_seq(ag_spool *s);
/* Store an entry. kind: "snapshot" or "trace". Returns 0 or -1 (disk error, counted as
 * dropped). The three steps the writer thread takes (it counts under its own queue lock, so a
 * snapshot sees an entry as queued or as spooled, never both or neither):
 *   ag_spool_write   the file, fsync'ed, holding no lock
 *   ag_spool_count   the counters (pending, or dropped when the write failed)
 *   ag_spool_settle  the counter file, the bound, wake the uploader (after a successful write) */
int ag_spool_put(ag_spool *s, uint64_t seq, const char *kind, const char *id, const void *data,
                 size_t len);
int ag_spool_write(ag_spool *s, uint64_t seq, const char *kind, const char *id, const void *data,
                   size_t len);
void ag_spool_count(ag_spool *s, int rc, size_t len);
void ag_spool_settle(ag_spool *s);
/* Oldest entry name (file name only) -> 1, none -> 0. Marks it in flight. */
int ag_spool_oldest(ag_spool *s, char *name, size_t cap);
void ag_spool_done(ag_spool *s, const char *name);     /* sent: delete */
void ag_spool_reject(ag_spool *s, const char *name);   /* refused: move to rejected/ */
void ag_spool_release(ag_spool *s);                    /* nothing in flight any more */
/* Entries and bytes on disk now, by listing the directory (the uploader's final count). */
uint64_t ag_spool_pending(ag_spool *s, uint64_t *bytes);
/* The counters in memory, for the main thread (never waits on the disk). */
void ag_spool_counts(ag_spool *s, uint64_t *pending, uint64_t *pending_bytes, uint64_t *dropped,
                     uint64_t *rejected, uint64_t *sent);

#endif

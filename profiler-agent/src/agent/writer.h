/*
 * The disk writer thread: every durable write of a window (the `--snapshot-dir` files and the
 * spool entries, each fsync'ed) happens here, never on the main thread. On a busy disk one
 * fsync held the main thread 80 s (gdb: the spool's write in finish_close), so no window
 * closed and the watch ring overflowed; now the main thread only hands over the document.
 *
 * One thread and one FIFO queue: documents reach the disk in the order the windows closed
 * (spool sequence numbers are taken on the main thread, in that order, and the uploader sends
 * by them), each exactly once. The queue is bounded (AG_WRITER_MAX_DOCS documents and
 * AG_WRITER_MAX_BYTES of text); past the bound the main thread waits for room (logged): losing
 * a window is worse than a late one, and the bound is ~32 windows, half an hour at the default
 * interval, of a disk that finishes no fsync at all. Gzip for the spool runs here too.
 */
#ifndef AG_WRITER_H
#define AG_WRITER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "spool.h"

#define AG_WRITER_MAX_DOCS 64
#define AG_WRITER_MAX_BYTES (256u << 20)

/* One JSON document to store: as a file (path non-empty) and/or as a spool entry (spool_kind
 * non-empty). The writer owns `text` (malloc'ed) once it is queued. */
typedef struct ag_wdoc {
    struct ag_wdoc *next;
    char *text;
    size_t len;
    char path[1024];          /* --snapshot-dir file, fsync'ed, replaced by rename */
    char spool_kind[16];      /* "snapshot" / "trace", or "" for no spool entry */
    char spool_id[40];
    uint64_t spool_seq;
    const char *what;         /* "snapshot" / "trace", for the log */
} ag_wdoc;

typedef struct ag_writer {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t more;      /* a document was queued, or stop */
    pthread_cond_t room;      /* a document left the queue */
    ag_wdoc *head, *tail;
    size_t docs, bytes;       /* queued, not yet written */
    size_t spool_docs;        /* of which spool entries (reported as pending by snapshots) */
    int stop, started;
    ag_spool *spool;          /* NULL: no spool */
    uint64_t written, files_written, failed, waits;
} ag_writer;

int ag_writer_start(ag_writer *w, ag_spool *spool);
/* Queue a document (takes ownership of d and d->text). Waits only while the queue is full. */
void ag_writer_put(ag_writer *w, ag_wdoc *d);
/* The spool's counters (ag_spool_counts), with the entries still queued here counted as
 * pending: each entry is counted once, queued or on disk, however far the writer has got. */
void ag_writer_spool_counts(ag_writer *w, ag_spool *s, uint64_t *pending, uint64_t *pending_bytes,
                            uint64_t *dropped, uint64_t *rejected, uint64_t *sent);
/* Write everything queued, then stop the thread. */
void ag_writer_stop(ag_writer *w);

#endif

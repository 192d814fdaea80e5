/* The disk writer thread (see writer.h for why it exists and how it bounds its queue). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "writer.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The slow part, with nothing locked: the file, and the spool entry's file. Returns the
 * spool write's result (1: no spool entry) and its size in *spooled. */
static int store(ag_writer *w, ag_wdoc *d, size_t *spooled)
{
    int ok = 1, rc = 1;
    *spooled = 0;
    if (d->path[0]) {
        if (ag_write_atomic(d->path, d->text, d->len) < 0) {
            ag_log(AG_LOG_ERROR, d->what[0] == 't' ? "trace_write_failed" : "snapshot_write_failed",
                   "file=%s error=\"%s\"", d->path, strerror(errno));
            ok = 0;
        } else {
            w->files_written++;
        }
    }
    if (d->spool_kind[0] && w->spool) {
        unsigned char *gz;
        size_t gl;
        if (ag_gzip(d->text, d->len, &gz, &gl) == 0) {
            rc = ag_spool_write(w->spool, d->spool_seq, d->spool_kind, d->spool_id, gz, gl);
            *spooled = gl;
            free(gz);
        } else {
            ag_log(AG_LOG_ERROR, "spool_gzip_failed", "id=%s", d->spool_id);
            rc = -1;
        }
        if (rc < 0)
            ok = 0;
    }
    if (ok)
        w->written++;
    else
        w->failed++;
    return rc;
}

static void *writer_main(void *arg)
{
    ag_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->more, &w->mu);
        ag_wdoc *d = w->head;
        if (!d)
            break; /* stop, and the queue is empty */
        pthread_mutex_unlock(&w->mu);
        size_t spooled;
        int rc = store(w, d, &spooled);
        pthread_mutex_lock(&w->mu);
        /* Leaves the queue as the spool counts it, under this lock: a snapshot counting the
         * pending entries (ag_writer_spool_counts) sees it in exactly one of the two. */
        if (rc != 1)
            ag_spool_count(w->spool, rc, spooled);
        w->head = d->next;
        if (!w->head)
            w->tail = NULL;
        w->docs--;
        w->bytes -= d->len;
        if (d->spool_kind[0])
            w->spool_docs--;
        pthread_cond_broadcast(&w->room);
        pthread_mutex_unlock(&w->mu);
        if (rc == 0)
            ag_spool_settle(w->spool);
        free(d->text);
        free(d);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int ag_writer_start(ag_writer *w, ag_spool *spool)
{
    memset(w, 0, sizeof *w);
    w->spool = spool;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->more, NULL);
    pthread_cond_init(&w->room, NULL);
    if (pthread_create(&w->th, NULL, writer_main, w) != 0)
        return -1;
    w->started = 1;
    return 0;
}

void ag_writer_put(ag_writer *w, ag_wdoc *d)
{
    d->next = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->docs >= AG_WRITER_MAX_DOCS || w->bytes + d->len > AG_WRITER_MAX_BYTES) {
        w->waits++;
        ag_log(AG_LOG_WARN, "writer_queue_full",
               "docs=%zu bytes=%zu waits=%" PRIu64 " action=waiting_for_disk", w->docs, w->bytes,
               w->waits);
        /* An empty queue always takes the document, however large. */
        while (w->docs > 0 &&
               (w->docs >= AG_WRITER_MAX_DOCS || w->bytes + d->len > AG_WRITER_MAX_BYTES))
            pthread_cond_wait(&w->room, &w->mu);
    }
    if (w->tail)
        w->tail->next = d;
    else
        w->head = d;
    w->tail = d;
    w->docs++;
    w->bytes += d->len;
    if (d->spool_kind[0])
        w->spool_docs++;
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->mu);
}

void ag_writer_spool_counts(ag_writer *w, ag_spool *s, uint64_t *pending, uint64_t *pending_bytes,
                            uint64_t *dropped, uint64_t *rejected, uint64_t *sent)
{
    pthread_mutex_lock(&w->mu);
    ag_spool_counts(s, pending, pending_bytes, dropped, rejected, sent);
    *pending += w->spool_docs;
    pthread_mutex_unlock(&w->mu);
}

void ag_writer_stop(ag_writer *w)
{
    if (!w->started)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->more);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    w->started = 0;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->more);
    pthread_cond_destroy(&w->room);
}

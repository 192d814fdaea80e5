#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spool.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ent {
    char name[256];
    uint64_t seq;
    uint64_t bytes;
} ent;

static int is_entry(const char *n, uint64_t *seq)
{
    size_t l = strlen(n);
    if (l < 8 || strcmp(n + l - 8, ".json.gz") != 0)
        return 0;
    char *end;
    unsigned long long v = strtoull(n, &end, 10);
    if (end == n || *end != '-')
        return 0;
    *seq = v;
    return 1;
}

static int cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* All entries sorted by seq (caller frees). */
static ent *list(ag_spool *s, size_t *n)
{
    *n = 0;
    DIR *d = opendir(s->dir);
    if (!d)
        return NULL;
    size_t cap = 64;
    ent *v = malloc(cap * sizeof *v);
    struct dirent *de;
    while (v && (de = readdir(d))) {
        uint64_t seq;
        if (!is_entry(de->d_name, &seq) || strlen(de->d_name) >= sizeof v->name)
            continue;
        if (*n == cap) {
            ent *nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv)
                break;
            v = nv;
        }
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", s->dir, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0)
            continue;
        snprintf(v[*n].name, sizeof v[*n].name, "%s", de->d_name);
        v[*n].seq = seq;
        v[*n].bytes = (uint64_t)st.st_size;
        (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, cmp_ent);
    return v;
}

/* Written by the writer thread after each entry (the main thread only counts in memory), not
 * fsync'ed: a crash that loses the file costs nothing, ag_spool_open takes the larger of it and
 * the newest entry's seq + 1, so entries still in the spool keep their order, and an empty
 * spool has nothing to order against. */
static void save_seq(ag_spool *s)
{
    char p[1024], buf[32];
    snprintf(p, sizeof p, "%s/next_seq", s->dir);
    pthread_mutex_lock(&s->mu);
    uint64_t next = s->next_seq;
    pthread_mutex_unlock(&s->mu);
    int n = snprintf(buf, sizeof buf, "%" PRIu64 "\n", next);
    if (ag_write_replace(p, buf, (size_t)n, 0) < 0)
        ag_log(AG_LOG_WARN, "spool_seq_write_failed", "error=\"%s\"", strerror(errno));
}

int ag_spool_open(ag_spool *s, const char *dir, uint64_t max_bytes, uint32_t max_files)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->max_bytes = max_bytes;
    s->max_files = max_files;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->io, NULL);
    pthread_cond_init(&s->cv, NULL);
    char rej[1024];
    snprintf(rej, sizeof rej, "%s/rejected", dir);
    if (ag_mkdirs(dir, 0750) < 0 || ag_mkdirs(rej, 0750) < 0) {
        ag_log(AG_LOG_ERROR, "spool_dir_failed", "dir=%s error=\"%s\"", dir, strerror(errno));
        return -1;
    }
    /* The counter survives restarts; entries left by a previous run are sent first. */
    char p[1024];
    snprintf(p, sizeof p, "%s/next_seq", dir);
    FILE *f = fopen(p, "r");
    if (f) {
        unsigned long long v;
        if (fscanf(f, "%llu", &v) == 1)
            s->next_seq = v;
        fclose(f);
    }
    size_t n;
    ent *v = list(s, &n);
    for (size_t i = 0; i < n; i++) {
        if (v[i].seq >= s->next_seq)
            s->next_seq = v[i].seq + 1;
        s->pending_bytes += v[i].bytes;
    }
    s->pending = n;
    if (n)
        ag_log(AG_LOG_INFO, "spool_resumed", "dir=%s entries=%zu", dir, n);
    free(v);
    return 0;
}

void ag_spool_close(ag_spool *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->io);
    pthread_cond_destroy(&s->cv);
}

uint64_t ag_spool_next_seq(ag_spool *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t q = s->next_seq++;
    pthread_mutex_unlock(&s->mu);
    return q;
}

void ag_spool_counts(ag_spool *s, uint64_t *pending, uint64_t *pending_bytes, uint64_t *dropped,
                     uint64_t *rejected, uint64_t *sent)
{
    pthread_mutex_lock(&s->mu);
    *pending = s->pending;
    *pending_bytes = s->pending_bytes;
    *dropped = s->dropped;
    *rejected = s->rejected;
    *sent = s->sent;
    pthread_mutex_unlock(&s->mu);
}

static void enforce_bound(ag_spool *s)
{
    size_t n;
    ent *v = list(s, &n);
    if (!v)
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].bytes;
    size_t files = n;
    for (size_t i = 0; i < n && (total > s->max_bytes || files > s->max_files); i++) {
        if (strcmp(v[i].name, s->inflight) == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", s->dir, v[i].name);
        if (unlink(p) == 0) {
            pthread_mutex_lock(&s->mu);
            s->dropped++;
            s->dropped_bytes += v[i].bytes;
            s->pending--;
            s->pending_bytes -= v[i].bytes;
            pthread_mutex_unlock(&s->mu);
            total -= v[i].bytes;
            files--;
            ag_log(AG_LOG_WARN, "spool_full_dropped", "file=%s dropped_total=%" PRIu64,
                   v[i].name, s->dropped);
        }
    }
    free(v);
}

/* The disk is full: delete the oldest entry not being uploaded (the newest window is worth more
 * to a capacity planner than the oldest, as in enforce_bound) and count it as dropped.
 * 1 when one was deleted, 0 when none is left to delete. */
static int drop_oldest_for_space(ag_spool *s, int why)
{
    pthread_mutex_lock(&s->io);
    size_t n;
    ent *v = list(s, &n);
    int done = 0;
    for (size_t i = 0; v && i < n && !done; i++) {
        if (strcmp(v[i].name, s->inflight) == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", s->dir, v[i].name);
        if (unlink(p) != 0)
            continue;
        pthread_mutex_lock(&s->mu);
        s->dropped++;
        s->dropped_bytes += v[i].bytes;
        s->pending--;
        s->pending_bytes -= v[i].bytes;
        uint64_t total = s->dropped;
        pthread_mutex_unlock(&s->mu);
        ag_log(AG_LOG_WARN, "spool_disk_full_dropped_oldest",
               "file=%s bytes=%" PRIu64 " error=\"%s\" dropped_total=%" PRIu64, v[i].name,
               v[i].bytes, strerror(why), total);
        done = 1;
    }
    free(v);
    pthread_mutex_unlock(&s->io);
    return done;
}

int ag_spool_write(ag_spool *s, uint64_t seq, const char *kind, const char *id, const void *data,
                   size_t len)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%016" PRIu64 "-%s-%s.json.gz", s->dir, seq, kind, id);
    /* The write and its fsync hold no lock: the uploader keeps sending meanwhile, and the main
     * thread's counters never wait on the disk. The entry appears by rename, whole. On a full
     * disk (or quota) the oldest entries make room for the new one, one at a time; only when
     * none is left to delete is the new entry itself lost. */
    int rc;
    while ((rc = ag_write_atomic(p, data, len)) < 0 && (errno == ENOSPC || errno == EDQUOT)) {
        if (!drop_oldest_for_space(s, errno)) {
            errno = ENOSPC;
            break;
        }
    }
    if (rc < 0)
        ag_log(AG_LOG_ERROR, "spool_write_failed", "file=%s error=\"%s\"", p, strerror(errno));
    return rc;
}

void ag_spool_count(ag_spool *s, int rc, size_t len)
{
    pthread_mutex_lock(&s->mu);
    if (rc == 0) {
        s->put++;
        s->pending++;
        s->pending_bytes += len;
    } else {
        s->dropped++;
    }
    pthread_mutex_unlock(&s->mu);
}

void ag_spool_settle(ag_spool *s)
{
    save_seq(s);
    pthread_mutex_lock(&s->io);
    enforce_bound(s);
    pthread_mutex_unlock(&s->io);
    pthread_mutex_lock(&s->mu);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int ag_spool_put(ag_spool *s, uint64_t seq, const char *kind, const char *id, const void *data,
                 size_t len)
{
    int rc = ag_spool_write(s, seq, kind, id, data, len);
    ag_spool_count(s, rc, len);
    if (rc == 0)
        ag_spool_settle(s);
    return rc;
}

int ag_spool_oldest(ag_spool *s, char *name, size_t cap)
{
    pthread_mutex_lock(&s->io);
    size_t n;
    ent *v = list(s, &n);
    int found = v && n > 0;
    if (found) {
        snprintf(name, cap, "%s", v[0].name);
        snprintf(s->inflight, sizeof s->inflight, "%s", v[0].name);
        s->inflight_bytes = v[0].bytes;
    }
    free(v);
    pthread_mutex_unlock(&s->io);
    return found;
}

void ag_spool_release(ag_spool *s)
{
    pthread_mutex_lock(&s->io);
    s->inflight[0] = 0;
    pthread_mutex_unlock(&s->io);
}

void ag_spool_done(ag_spool *s, const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", s->dir, name);
    pthread_mutex_lock(&s->io);
    unlink(p);
    s->inflight[0] = 0;
    pthread_mutex_unlock(&s->io);
    pthread_mutex_lock(&s->mu);
    s->sent++;
    s->pending--;
    s->pending_bytes -= s->inflight_bytes;
    pthread_mutex_unlock(&s->mu);
}

void ag_spool_reject(ag_spool *s, const char *name)
{
    char p[1024], q[1024];
    snprintf(p, sizeof p, "%s/%s", s->dir, name);
    snprintf(q, sizeof q, "%s/rejected/%s", s->dir, name);
    pthread_mutex_lock(&s->io);
    if (rename(p, q) != 0)
        unlink(p);
    s->inflight[0] = 0;
    pthread_mutex_unlock(&s->io);
    pthread_mutex_lock(&s->mu);
    s->rejected++;
    s->pending--;
    s->pending_bytes -= s->inflight_bytes;
    pthread_mutex_unlock(&s->mu);
}

uint64_t ag_spool_pending(ag_spool *s, uint64_t *bytes)
{
    pthread_mutex_lock(&s->io);
    size_t n;
    ent *v = list(s, &n);
    uint64_t b = 0;
    for (size_t i = 0; v && i < n; i++)
        b += v[i].bytes;
    free(v);
    pthread_mutex_unlock(&s->io);
    if (bytes)
        *bytes = b;
    return n;
}

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stats.h"
#include "log.h"
#include "mcconn.h"
#include "util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t u64(const char *v)
{
    return strtoull(v, NULL, 10);
}

static void class_field(mc_stats *s, int cls, const char *f, const char *v)
{
    if (cls <= 0 || cls >= MC_MAX_CLASSES)
        return;
    mc_class_stats *c = &s->cls[cls];
    c->present = 1;
    if (!strcmp(f, "chunk_size")) c->chunk_size = (uint32_t)u64(v);
    else if (!strcmp(f, "total_pages")) c->total_pages = u64(v);
    else if (!strcmp(f, "total_chunks")) c->total_chunks = u64(v);
    else if (!strcmp(f, "used_chunks")) c->used_chunks = u64(v);
    else if (!strcmp(f, "number")) c->items = u64(v);
    else if (!strcmp(f, "evicted")) c->evicted = u64(v);
    else if (!strcmp(f, "mem_requested")) c->mem_requested = u64(v);
    else if (!strcmp(f, "age")) c->age = u64(v);
    else if (!strcmp(f, "get_hits")) c->get_hits = u64(v);
    else if (!strcmp(f, "delete_hits")) c->delete_hits = u64(v);
    else if (!strcmp(f, "incr_hits")) c->incr_hits = u64(v);
    else if (!strcmp(f, "decr_hits")) c->decr_hits = u64(v);
    else if (!strcmp(f, "touch_hits")) c->touch_hits = u64(v);
}

void mc_stats_apply(mc_stats *s, const char *group, const char *name, const char *value)
{
    if (!strcmp(group, "settings")) {
        if (s->nsettings < MC_MAX_SETTINGS) {
            snprintf(s->set_name[s->nsettings], sizeof s->set_name[0], "%s", name);
            snprintf(s->set_value[s->nsettings], sizeof s->set_value[0], "%s", value);
            s->nsettings++;
        }
        return;
    }
    if (!strcmp(group, "items")) { /* items:12:number */
        int cls;
        char f[64];
        if (sscanf(name, "items:%d:%63s", &cls, f) == 2)
            class_field(s, cls, f, value);
        return;
    }
    if (!strcmp(group, "slabs")) { /* 12:chunk_size; the rest (total_malloced) below */
        int cls;
        char f[64];
        if (sscanf(name, "%d:%63s", &cls, f) == 2) {
            class_field(s, cls, f, value);
            return;
        }
    }
    static const struct { const char *n; size_t off; } tab[] = {
#define F(x) {#x, offsetof(mc_stats, x)}
        F(pid), F(uptime), F(time), F(cmd_get), F(get_hits), F(get_misses), F(get_expired),
        F(get_flushed), F(cmd_set), F(cmd_touch), F(evictions), F(bytes), F(curr_items),
        F(limit_maxbytes), F(total_items), F(delete_hits), F(delete_misses), F(incr_hits),
        F(incr_misses), F(decr_hits), F(decr_misses), F(touch_hits), F(touch_misses),
        F(cas_hits), F(cas_misses), F(cas_badval), F(cmd_flush), F(reclaimed), F(expired_unfetched),
        F(evicted_unfetched), F(slabs_moved), F(log_worker_dropped), F(log_worker_written),
        F(log_watcher_skipped), F(log_watcher_sent), F(total_malloced), F(hash_bytes),
        F(curr_connections),
#undef F
    };
    if (!strcmp(name, "version")) {
        snprintf(s->version, sizeof s->version, "%s", value);
        return;
    }
    if (!strcmp(name, "log_watcher_skipped"))
        s->has_watcher_skipped = 1;
    if (mc_ext_stats_apply(&s->ext, name, value))
        return;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(tab[i].n, name)) {
            *(uint64_t *)((char *)s + tab[i].off) = u64(value);
            return;
        }
}

int ag_memory_full(uint64_t total_malloced, uint64_t limit_maxbytes)
{
    return total_malloced + 2 * 1048576 > limit_maxbytes;
}

static int run_cmd(int fd, mc_lines *lr, const char *cmd, const char *group, mc_stats *s)
{
    char req[64];
    int n = snprintf(req, sizeof req, "%s\r\n", cmd);
    if (mc_send_all(fd, req, (size_t)n) < 0)
        return -1;
    for (;;) {
        char *line;
        size_t len;
        if (mc_lines_next(lr, &line, &len) != 1)
            return -1;
        if (!strcmp(line, "END"))
            return 0;
        if (strncmp(line, "STAT ", 5) != 0)
            return -1; /* ERROR, CLIENT_ERROR ... */
        char *name = line + 5;
        char *sp = strchr(name, ' ');
        if (!sp)
            continue;
        *sp = 0;
        mc_stats_apply(s, group, name, sp + 1);
    }
}

int mc_stats_poll(int fd, mc_stats *out)
{
    mc_lines *lr = malloc(sizeof *lr);
    if (!lr)
        return -1;
    mc_lines_init(lr, fd);
    memset(out, 0, sizeof *out);
    out->wall_us = ag_wall_us();
    out->mono_us = ag_mono_us();
    int rc = run_cmd(fd, lr, "stats", "", out) < 0 ||
             run_cmd(fd, lr, "stats items", "items", out) < 0 ||
             run_cmd(fd, lr, "stats slabs", "slabs", out) < 0 ||
             run_cmd(fd, lr, "stats settings", "settings", out) < 0;
    free(lr);
    if (rc)
        return -1;
    /* Start time and pid identify an instance across reconnects (a restart changes both). */
    snprintf(out->instance_id, sizeof out->instance_id, "%llu-%llu",
             (unsigned long long)(out->time - out->uptime), (unsigned long long)out->pid);
    out->ok = 1;
    return 0;
}

static void *poller_main(void *arg)
{
    ag_poller *p = arg;
    int fd = -1;
    int64_t next = 0;
    mc_stats *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    while (!p->stop) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && !p->want_now && ag_mono_us() < next) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 50 * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        }
        p->want_now = 0;
        pthread_mutex_unlock(&p->mu);
        if (p->stop)
            break;
        next = ag_mono_us() + (int64_t)(p->interval_s * 1e6);
        int ok = 0;
        if (fd < 0) {
            char err[128];
            fd = mc_connect(p->addr, 2000, err, sizeof err);
            if (fd < 0 && p->connected) {
                ag_log(AG_LOG_WARN, "stats_connect_failed", "addr=%s error=\"%s\"", p->addr, err);
            }
        }
        if (fd >= 0) {
            if (mc_stats_poll(fd, s) == 0) {
                ok = 1;
            } else {
                close(fd);
                fd = -1;
            }
        }
        pthread_mutex_lock(&p->mu);
        p->gen++;
        if (ok) {
            p->last = *s;
            p->ok_gen = p->gen;
        } else {
            p->failures++;
            /* Retry soon while memcached is away, so a restart is noticed quickly. */
            if (next > ag_mono_us() + 1000000)
                next = ag_mono_us() + 1000000;
        }
        p->connected = ok;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    if (fd >= 0)
        close(fd);
    free(s);
    return NULL;
}

int ag_poller_start(ag_poller *p, const char *addr, double interval_s)
{
    memset(p, 0, sizeof *p);
    p->addr = addr;
    p->interval_s = interval_s;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return pthread_create(&p->th, NULL, poller_main, p) == 0 ? 0 : -1;
}

void ag_poller_stop(ag_poller *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

int ag_poller_poll_now(ag_poller *p, int timeout_ms, mc_stats *out)
{
    int64_t deadline = ag_mono_us() + (int64_t)timeout_ms * 1000;
    pthread_mutex_lock(&p->mu);
    uint64_t want = p->gen + 1;
    p->want_now = 1;
    pthread_cond_broadcast(&p->cv);
    while (p->gen < want && ag_mono_us() < deadline && !p->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    int fresh = p->ok_gen >= want;
    if (p->ok_gen)
        *out = p->last;
    else
        out->ok = 0;
    pthread_mutex_unlock(&p->mu);
    return fresh;
}

uint64_t ag_poller_latest(ag_poller *p, mc_stats *out)
{
    pthread_mutex_lock(&p->mu);
    uint64_t g = p->ok_gen;
    if (g)
        *out = p->last;
    pthread_mutex_unlock(&p->mu);
    return g;
}

void ag_poller_request(ag_poller *p)
{
    pthread_mutex_lock(&p->mu);
    p->want_now = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

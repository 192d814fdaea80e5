/*
 * Reader of `watch fetchers mutations evictions`. This thread does nothing but recv, split,
 * parse and push into the SPSC ring: memcached's logger drops lines for a watcher whose
 * socket buffer is full (skipped=N), so the reader must never wait on the profiler, the
 * network uploads or a lock. Parsing here (not in the consumer) keeps ring items compact and
 * spreads the CPU over two threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "watch.h"
#include "log.h"
#include "mcconn.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RBUF (1 << 20)
#define AG_WATCH_REFUSED_RETRY_S 600

static void push_marker(ag_watch *w, int type)
{
    ag_item it;
    memset(&it, 0, sizeof it);
    it.line.type = (uint8_t)type;
    it.arrival_us = ag_mono_us();
    /* Markers must not be lost: wait for room (the stream is not flowing at this point). */
    while (ag_ring_push(w->ring, &it) < 0 && !w->stop) {
        atomic_fetch_sub(&w->ring->dropped, 1); /* not a lost event */
        ag_sleep_us(1000, &w->stop);
    }
}

const char *ag_watch_mode_name(int mode)
{
    switch (mode) {
    case AG_WATCH_DELETIONS: return "deletions";
    case AG_WATCH_NO_DELETIONS: return "no_deletions";
    case AG_WATCH_REFUSED: return "refused";
    default: return "unknown";
    }
}

/* The watch commands, best first. memcached < 1.6.20 answers ERROR to the whole command if it
 * names `deletions`, and then takes the next command on the same connection, so probing costs
 * no extra connection (reconnecting watchers is what the <= 1.6.44 use-after-free needs). */
static const char *const watch_cmds[] = {
    "watch fetchers mutations evictions deletions\r\n",
    "watch fetchers mutations evictions\r\n",
};

/* Read whatever is already queued before closing: memcached frees a watcher that disconnects
 * with a full buffer unsafely on <= 1.6.44, so the agent leaves only after the stream has
 * gone quiet (at most ~1 s; a stream that never pauses is closed anyway). */
static void drain_before_close(int fd, char *buf)
{
    struct timeval tv = {0, 50000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int lowat = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
    int64_t end = ag_mono_us() + 1000000;
    while (ag_mono_us() < end) {
        ssize_t n = recv(fd, buf, RBUF, 0);
        if (n <= 0)
            break;
    }
}

/* Returns when the connection ends. */
/* --drop-lines: a run starts after a line with probability p, so the long-run share of dropped
 * lines is run*p / (1 + run*p) = drop_rate. */
static int drop_this(ag_watch *w)
{
    if (w->drop_left > 0) {
        w->drop_left--;
        return 1;
    }
    w->drop_rng ^= w->drop_rng << 13, w->drop_rng ^= w->drop_rng >> 7, w->drop_rng ^= w->drop_rng << 17;
    double u = (double)(w->drop_rng >> 11) / 9007199254740992.0;
    double p = w->drop_rate / ((1 - w->drop_rate) * AG_DROP_RUN);
    if (u < p)
        w->drop_left = AG_DROP_RUN;
    return 0;
}

static void read_stream(ag_watch *w, int fd, char *buf)
{
    size_t start = 0, end = 0;
    int saw_ok = 0;
    size_t attempt = 0;
    unsigned char key[WL_MAX_KEY + 1];
    for (;;) {
        if (w->stop)
            return;
        if (start > 0 && start == end)
            start = end = 0;
        if (end == RBUF) {
            if (start == 0) {
                /* A 1 MiB line: not memcached's; drop it. */
                atomic_fetch_add(&w->malformed, 1);
                start = end = 0;
            } else {
                memmove(buf, buf + start, end - start);
                end -= start;
                start = 0;
            }
        }
        ssize_t n = recv(fd, buf + end, RBUF - end, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue; /* receive timeout: just re-check stop */
        if (n <= 0)
            return;
        int64_t now = ag_mono_us();
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
        end += (size_t)n;
        /* This chunk's lines go to the ring and its counters are published together after
         * it: made per line, the three locked read-modify-writes (lines, fields, item lines),
         * the ring's head store and the read of the consumer's tail cost tens of cycles a
         * line on a thread that has ~300 cycles for one. */
        ag_ring_writer rw;
        ag_ring_writer_start(w->ring, &rw);
        uint64_t nlines = 0, nitems = 0, nskipped = 0;
        unsigned fields = 0;
        for (;;) {
            char *s = buf + start;
            char *nl = memchr(s, '\n', end - start);
            if (!nl)
                break;
            size_t len = (size_t)(nl - s);
            start += len + 1;
            if (len > 0 && s[len - 1] == '\r')
                len--;
            if (!saw_ok) {
                if (len == 2 && memcmp(s, "OK", 2) == 0) {
                    saw_ok = 1;
                    int mode = attempt == 0 ? AG_WATCH_DELETIONS : AG_WATCH_NO_DELETIONS;
                    atomic_store(&w->mode, mode);
                    atomic_store(&w->fields, 0);
                    atomic_store(&w->item_lines_seen, 0);
                    atomic_store(&w->connected, 1);
                    atomic_fetch_add(&w->connects, 1);
                    ag_log(AG_LOG_INFO, "watch_connected", "addr=%s mode=%s", w->addr,
                           ag_watch_mode_name(mode));
                    ag_ring_publish(w->ring, &rw); /* nothing before the marker, in order */
                    push_marker(w, AG_MARK_STREAM_START);
                    ag_ring_writer_start(w->ring, &rw);
                    continue;
                }
                if (attempt + 1 < sizeof watch_cmds / sizeof watch_cmds[0] && 
                    ((len >= 5 && memcmp(s, "ERROR", 5) == 0) ||
                     (len >= 12 && memcmp(s, "CLIENT_ERROR", 12) == 0))) {
                    attempt++;
                    if (mc_send_all(fd, watch_cmds[attempt], strlen(watch_cmds[attempt])) < 0)
                        return;
                    continue;
                }
                /* Said once per agent life: the agent keeps running on `stats` alone. */
                if (atomic_load(&w->mode) != AG_WATCH_REFUSED)
                    ag_log(AG_LOG_WARN, "watch_refused",
                           "addr=%s reply=\"%.*s\" mode=stats_only retry_s=%d", w->addr,
                           (int)(len > 200 ? 200 : len), s, AG_WATCH_REFUSED_RETRY_S);
                atomic_store(&w->mode, AG_WATCH_REFUSED);
                return;
            }
            if (len == 0)
                continue;
            /* parsed where the consumer will read it; a full ring still parses (into a
             * scratch item) so the line is counted and its prefix registered */
            ag_item scratch, *it = ag_ring_claim(w->ring, &rw);
            int full = !it;
            if (full)
                it = &scratch;
            if (wl_parse(s, len, &it->line, w->keys ? key : NULL) < 0) {
                atomic_fetch_add_explicit(&w->malformed, 1, memory_order_relaxed);
                continue;
            }
            if (it->line.type == WL_SKIPPED) { /* a count, not an event (watch.h) */
                nskipped += it->line.skipped;
                nlines++;
                continue;
            }
            it->pfx = w->keys && it->line.keylen ? ag_keys_line(w->keys, it->line.key, key,
                                                                it->line.keylen)
                                                 : 0;
            it->arrival_us = now;
            nlines++;
            if (w->drop_rate > 0 && drop_this(w)) {
                ag_ring_drop(w->ring); /* once, full ring or not */
                atomic_fetch_add_explicit(&w->injected, 1, memory_order_relaxed);
                continue;
            }
            fields |= it->line.fields;
            if (it->line.type == WL_GET || it->line.type == WL_STORE)
                nitems++;
            if (full)
                ag_ring_drop(w->ring); /* the agent's own loss, reported with memcached's */
            else
                ag_ring_commit(&rw);
        }
        ag_ring_publish(w->ring, &rw);
        atomic_fetch_add_explicit(&w->lines, nlines, memory_order_relaxed);
        if (nskipped)
            atomic_fetch_add_explicit(&w->skipped, nskipped, memory_order_relaxed);
        if (fields)
            atomic_fetch_or_explicit(&w->fields, fields, memory_order_relaxed);
        if (nitems)
            atomic_fetch_add_explicit(&w->item_lines_seen, nitems, memory_order_relaxed);
    }
}

static void *watch_main(void *arg)
{
    ag_watch *w = arg;
    char *buf = malloc(RBUF);
    if (!buf)
        return NULL;
    int64_t backoff = 200000;
    int logged_down = 0;
    while (!w->stop) {
        char err[160];
        int fd = mc_connect(w->addr, 2000, err, sizeof err);
        if (fd < 0) {
            if (!logged_down)
                ag_log(AG_LOG_WARN, "watch_connect_failed", "addr=%s error=\"%s\" retry_ms=%lld",
                       w->addr, err, (long long)(backoff / 1000));
            logged_down = 1;
            ag_sleep_us(backoff, &w->stop);
            backoff = backoff * 2 > 10000000 ? 10000000 : backoff * 2;
            continue;
        }
        /* Short receive timeout so stop is noticed; the logger thread writes whenever it has
         * lines, so an idle timeout here is normal. */
        struct timeval tv = {0, 200000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        int rcv = 4 << 20;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
        /* Wake up per 64 KiB rather than per logger write (~10x fewer context switches under
         * load); the 200 ms receive timeout still returns whatever has arrived. The socket
         * buffer stays far from full, so memcached never sees a slow watcher. */
        int lowat = 64 * 1024;
        setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat);
        if (mc_send_all(fd, watch_cmds[0], strlen(watch_cmds[0])) == 0) {
            int64_t t0 = ag_mono_us();
            read_stream(w, fd, buf);
            if (w->stop)
                drain_before_close(fd, buf);
            if (atomic_load(&w->connected)) {
                atomic_store(&w->connected, 0);
                push_marker(w, AG_MARK_STREAM_END);
                if (!w->stop)
                    ag_log(AG_LOG_WARN, "watch_disconnected", "addr=%s", w->addr);
                logged_down = 0;
                if (ag_mono_us() - t0 > 5000000)
                    backoff = 200000;
            }
        }
        close(fd);
        if (!w->stop && atomic_load(&w->mode) == AG_WATCH_REFUSED) {
            /* Refused: ask again rarely (a site may enable it), never in a loop. */
            ag_sleep_us((int64_t)AG_WATCH_REFUSED_RETRY_S * 1000000, &w->stop);
            continue;
        }
        if (!w->stop) {
            ag_sleep_us(backoff, &w->stop);
            backoff = backoff * 2 > 10000000 ? 10000000 : backoff * 2;
        }
    }
    free(buf);
    return NULL;
}

int ag_watch_start(ag_watch *w, const char *addr, ag_ring *ring, ag_keys *keys, double drop_rate)
{
    memset(w, 0, sizeof *w);
    w->drop_rate = drop_rate;
    w->drop_rng = 0x9e3779b97f4a7c15ULL;
    w->addr = addr;
    w->ring = ring;
    w->keys = keys;
    return pthread_create(&w->th, NULL, watch_main, w) == 0 ? 0 : -1;
}

void ag_watch_stop(ag_watch *w)
{
    w->stop = 1;
    pthread_join(w->th, NULL);
}

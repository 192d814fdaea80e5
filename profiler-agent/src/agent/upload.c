/*
 * Delivery semantics: at-least-once from here, exactly-once at the backend. Each entry
 * carries its id in the body (snapshot_id / chunk_id) and in an Idempotency-Key header; the
 * backend answers 200 "duplicate" to a repeat, which we treat as success. Order: the oldest
 * entry is retried until it is accepted or refused, so the backend sees entries in sequence.
 *   2xx                    -> delete
 *   408, 429, 5xx, network -> retry the same entry with exponential backoff
 *   401, 403               -> retry too (a key problem is configuration, the data is fine);
 *                             the key file is re-read before each attempt
 *   other 4xx              -> move to rejected/ and count (retrying cannot help)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "upload.h"
#include "log.h"
#include "util.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rbuf {
    char data[512];
    size_t len;
} rbuf;

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    rbuf *b = ud;
    size_t n = sz * nm;
    size_t room = sizeof b->data - 1 - b->len;
    size_t c = n < room ? n : room;
    memcpy(b->data + b->len, p, c);
    b->len += c;
    b->data[b->len] = 0;
    return n;
}

static int read_key(const char *path, char *out, size_t cap)
{
    unsigned char *d;
    size_t n;
    if (ag_read_file(path, &d, &n) < 0)
        return -1;
    size_t a = 0;
    while (a < n && (d[a] == ' ' || d[a] == '\n' || d[a] == '\r' || d[a] == '\t'))
        a++;
    size_t b = a;
    while (b < n && d[b] > ' ' && d[b] < 0x7f)
        b++;
    int rc = -1;
    if (b > a && b - a < cap) {
        memcpy(out, d + a, b - a);
        out[b - a] = 0;
        rc = 0;
    }
    free(d);
    return rc;
}

/* Returns HTTP status, or 0 on a transport error. */
static long post(ag_uploader *u, const char *path, const char *id, const unsigned char *body,
                 size_t len, rbuf *resp)
{
    char key[512];
    if (read_key(u->key_file, key, sizeof key) < 0) {
        ag_log(AG_LOG_ERROR, "agent_key_unreadable", "file=%s", u->key_file);
        return 0;
    }
    CURL *c = curl_easy_init();
    if (!c)
        return 0;
    char url[1024], auth[600], idem[200];
    size_t bl = strlen(u->base_url);
    snprintf(url, sizeof url, "%.*s%s", (int)(bl && u->base_url[bl - 1] == '/' ? bl - 1 : bl),
             u->base_url, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
    snprintf(idem, sizeof idem, "Idempotency-Key: %s", id);
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Content-Encoding: gzip");
    h = curl_slist_append(h, auth);
    h = curl_slist_append(h, idem);
    h = curl_slist_append(h, "User-Agent: hitcurve-agent/0.1.0");
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    long tmo = (long)(u->timeout_s * 1000);
    if (u->draining) { /* on shutdown, never wait past the drain deadline */
        long left = (long)((u->drain_deadline_us - ag_mono_us()) / 1000);
        if (left < tmo)
            tmo = left > 100 ? left : 100;
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, tmo);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
    if (u->ca_file[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, u->ca_file);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    else
        snprintf(resp->data, sizeof resp->data, "%s", curl_easy_strerror(rc));
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    memset(key, 0, sizeof key);
    return status;
}

/* "<seq>-<kind>-<id>.json.gz" */
static int parse_name(const char *name, char *kind, size_t kcap, char *id, size_t icap)
{
    const char *a = strchr(name, '-');
    if (!a)
        return -1;
    const char *b = strchr(a + 1, '-');
    const char *e = strstr(name, ".json.gz");
    if (!b || !e || e < b)
        return -1;
    snprintf(kind, kcap, "%.*s", (int)(b - a - 1), a + 1);
    snprintf(id, icap, "%.*s", (int)(e - b - 1), b + 1);
    return 0;
}

static int should_leave(ag_uploader *u)
{
    if (u->stop)
        return 1;
    return u->draining && ag_mono_us() >= u->drain_deadline_us;
}

static void *upload_main(void *arg)
{
    ag_uploader *u = arg;
    double backoff = 0.5;
    while (!should_leave(u)) {
        char name[256];
        if (!ag_spool_oldest(u->spool, name, sizeof name)) {
            if (u->draining)
                break; /* queue empty: drained */
            pthread_mutex_lock(&u->spool->mu);
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&u->spool->cv, &u->spool->mu, &ts);
            pthread_mutex_unlock(&u->spool->mu);
            continue;
        }
        char kind[32], id[128], path[1024];
        if (parse_name(name, kind, sizeof kind, id, sizeof id) < 0) {
            ag_spool_reject(u->spool, name);
            continue;
        }
        const char *endpoint = strcmp(kind, "trace") == 0 ? "/api/v1/agent/traces"
                                                          : "/api/v1/agent/snapshots";
        snprintf(path, sizeof path, "%s/%s", u->spool->dir, name);
        unsigned char *body;
        size_t len;
        if (ag_read_file(path, &body, &len) < 0) {
            ag_spool_release(u->spool); /* evicted meanwhile */
            continue;
        }
        rbuf resp = {{0}, 0};
        u->attempts++;
        long st = post(u, endpoint, id, body, len, &resp);
        free(body);
        u->last_status = (int)st;
        if (st >= 200 && st < 300) {
            ag_spool_done(u->spool, name);
            ag_log(AG_LOG_DEBUG, "upload_ok", "file=%s status=%ld", name, st);
            backoff = 0.5;
            continue;
        }
        if (st >= 400 && st < 500 && st != 408 && st != 429 && st != 401 && st != 403) {
            ag_spool_reject(u->spool, name);
            ag_log(AG_LOG_ERROR, "upload_rejected", "file=%s status=%ld detail=\"%.200s\"", name,
                   st, resp.data);
            continue;
        }
        u->failures++;
        ag_spool_release(u->spool);
        ag_log(AG_LOG_WARN, "upload_retry", "file=%s status=%ld error=\"%.200s\" retry_s=%.1f",
               name, st, st ? "" : resp.data, backoff);
        int64_t wait = (int64_t)(backoff * 1e6);
        if (u->draining) {
            int64_t left = u->drain_deadline_us - ag_mono_us();
            if (wait > left)
                wait = left;
        }
        if (wait > 0) /* a long backoff is cut short by SIGTERM's drain (then bounded by it) */
            ag_sleep_us(wait, u->draining ? &u->stop : &u->wake);
        backoff = backoff * 2 > u->backoff_max_s ? u->backoff_max_s : backoff * 2;
    }
    return NULL;
}

int ag_uploader_start(ag_uploader *u, ag_spool *s, const char *base_url, const char *key_file,
                      const char *ca_file, double timeout_s, double backoff_max_s)
{
    memset(u, 0, sizeof *u);
    u->spool = s;
    snprintf(u->base_url, sizeof u->base_url, "%s", base_url);
    snprintf(u->key_file, sizeof u->key_file, "%s", key_file);
    snprintf(u->ca_file, sizeof u->ca_file, "%s", ca_file);
    u->timeout_s = timeout_s;
    u->backoff_max_s = backoff_max_s;
    return pthread_create(&u->th, NULL, upload_main, u) == 0 ? 0 : -1;
}

uint64_t ag_uploader_drain_and_stop(ag_uploader *u, double timeout_s)
{
    u->drain_deadline_us = ag_mono_us() + (int64_t)(timeout_s * 1e6);
    u->draining = 1;
    u->wake = 1;
    pthread_mutex_lock(&u->spool->mu);
    pthread_cond_broadcast(&u->spool->cv);
    pthread_mutex_unlock(&u->spool->mu);
    pthread_join(u->th, NULL);
    return ag_spool_pending(u->spool, NULL);
}

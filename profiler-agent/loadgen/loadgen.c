/*
 * hc-loadgen: memcached load generator for Hitcurve's demo and benchmarks.
 *
 * Each request reads a key (text `get`); on a miss the client "recomputes" the value
 * (optional delay per key class) and stores it (`set`), like a look-aside cache user.
 * Key popularity: zipf (alpha), uniform, scan (zipf plus sequential scans over a disjoint key
 * range) or etc (Facebook ETC: zipf popularity with the paper's key and value size fits).
 * Fixed seed: one connection gives a fully deterministic request sequence; with --conns C each
 * connection has its own seeded stream. --pipeline D sends D requests per write (then the
 * sets for the misses of that batch), else request/response.
 * Prints one JSON line of totals at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dist.h"

enum { D_ZIPF, D_UNIFORM, D_SCAN, D_ETC };

typedef struct opts {
    char host[256], port[16];
    int dist;
    double alpha;
    uint64_t keys;
    uint64_t requests;       /* per connection */
    double duration_s;
    uint64_t seed;
    int pipeline;
    int conns;
    uint32_t value_size;
    uint32_t max_value;
    int ttl;
    double scan_frac;
    uint64_t scan_len;
    uint64_t scan_start; /* where the (first connection's) scan starts: a later phase continues one */
    double update_frac;
    double delete_frac;      /* share of requests that are deletes (look-aside invalidation) */
    double incr_frac;        /* share that are incr of a counter key, created by add on NOT_FOUND */
    uint32_t min_value;      /* zipf/uniform/scan: value bytes per key uniform in
                                [min_value, value_size] (0: all value_size) */
    uint32_t recompute_us[16];
    int n_recompute;
    int quiet;
    int print_keys;          /* no server: print the key ids connection 0 would read */
} opts;

typedef struct stats {
    uint64_t gets, hits, misses, sets, updates, deletes, incrs, errors;
} stats;

typedef struct worker {
    const opts *o;
    const lg_zipf *z;
    int idx;
    stats st;
    uint64_t scan_end; /* the scan position after the last request */
    pthread_t th;
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int connect_to(const opts *o)
{
    struct addrinfo h, *res;
    memset(&h, 0, sizeof h);
    h.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(o->host, o->port, &h, &res) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* ---- buffered reader ---- */
typedef struct rd {
    int fd;
    char buf[1 << 20];
    size_t a, b;
} rd;

static int rd_fill(rd *r)
{
    if (r->a > 0) {
        memmove(r->buf, r->buf + r->a, r->b - r->a);
        r->b -= r->a;
        r->a = 0;
    }
    if (r->b == sizeof r->buf)
        return -1;
    ssize_t n;
    do
        n = recv(r->fd, r->buf + r->b, sizeof r->buf - r->b, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return -1;
    r->b += (size_t)n;
    return 0;
}

/* Next line (without CRLF), NUL-terminated in place. */
static char *rd_line(rd *r)
{
    for (;;) {
        char *s = r->buf + r->a;
        char *nl = memchr(s, '\n', r->b - r->a);
        if (nl) {
            *nl = 0;
            if (nl > s && nl[-1] == '\r')
                nl[-1] = 0;
            r->a = (size_t)(nl - r->buf) + 1;
            return s;
        }
        if (rd_fill(r) < 0)
            return NULL;
    }
}

static int rd_skip(rd *r, size_t n)
{
    while (r->b - r->a < n)
        if (rd_fill(r) < 0)
            return -1;
    r->a += n;
    return 0;
}

/* 1 hit, 0 miss, -1 error */
static int read_get(rd *r)
{
    char *l = rd_line(r);
    if (!l)
        return -1;
    if (!strcmp(l, "END"))
        return 0;
    if (strncmp(l, "VALUE ", 6) != 0)
        return -1;
    char *sp = strrchr(l, ' ');
    size_t bytes = strtoul(sp + 1, NULL, 10);
    if (rd_skip(r, bytes + 2) < 0)
        return -1;
    l = rd_line(r);
    return l && !strcmp(l, "END") ? 1 : -1;
}

/* STORED / NOT_STORED, or memcached out of memory for the item's class (no free chunk and no
 * page to take yet, e.g. while the slab mover is still freeing one after a size-mix shift): a
 * store memcached refused, on a connection that stays good, as a client sees NOT_STORED. */
static int read_stored(rd *r)
{
    char *l = rd_line(r);
    return l && (!strcmp(l, "STORED") || !strcmp(l, "NOT_STORED") ||
                 !strncmp(l, "SERVER_ERROR out of memory", 26))
               ? 0
               : -1;
}

/* delete: DELETED / NOT_FOUND; incr: the new value / NOT_FOUND. 1 found, 0 not found, -1 error */
static int read_found(rd *r)
{
    char *l = rd_line(r);
    if (!l || !strncmp(l, "ERROR", 5) || !strncmp(l, "CLIENT_ERROR", 12) ||
        !strncmp(l, "SERVER_ERROR", 12))
        return -1;
    return strcmp(l, "NOT_FOUND") != 0;
}

/* ---- requests ---- */
enum { OP_GET, OP_UPDATE, OP_DELETE, OP_INCR };

typedef struct req {
    uint64_t id;
    int op;
} req;

/* One draw per request when any non-get share is set (only update_frac: the draw of before,
 * so seeded workloads without deletes or incrs are the same streams as ever). */
static int next_op(const opts *o, lg_rng *r)
{
    if (o->update_frac <= 0 && o->delete_frac <= 0 && o->incr_frac <= 0)
        return OP_GET;
    double u = lg_rng_unit(r);
    if (u < o->update_frac)
        return OP_UPDATE;
    if (u < o->update_frac + o->delete_frac)
        return OP_DELETE;
    if (u < o->update_frac + o->delete_frac + o->incr_frac)
        return OP_INCR;
    return OP_GET;
}

static uint64_t next_id(const opts *o, const lg_zipf *z, lg_rng *r, uint64_t *scan_pos)
{
    switch (o->dist) {
    case D_UNIFORM:
        return lg_rng_next(r) % o->keys;
    case D_SCAN:
        if (lg_rng_unit(r) < o->scan_frac) {
            uint64_t id = o->keys + *scan_pos;
            *scan_pos = (*scan_pos + 1) % o->scan_len;
            return id;
        }
        /* fall through */
    default: {
        /* Popular ranks spread over the id space so ids do not encode popularity: a
         * bijection of [0, keys) (2654435761 is prime; keys a multiple of it is refused). */
        uint64_t rank = lg_zipf_sample(z, r);
        return (uint64_t)(((unsigned __int128)rank * 2654435761ULL + 12345) % o->keys);
    }
    }
}

static size_t key_of(const opts *o, uint64_t id, char *out)
{
    int n = sprintf(out, "k%llu", (unsigned long long)id);
    if (o->dist == D_ETC) {
        uint32_t want = lg_etc_key_size(id);
        if ((uint32_t)n < want) {
            out[n++] = ':';
            while ((uint32_t)n < want) {
                out[n] = (char)('a' + (id + (uint64_t)n) % 26);
                n++;
            }
        }
        out[n] = 0;
    }
    return (size_t)n;
}

static uint32_t value_size_of(const opts *o, uint64_t id)
{
    if (o->dist == D_ETC)
        return lg_etc_value_size(id, o->max_value);
    if (o->min_value && o->min_value < o->value_size)
        return o->min_value + (uint32_t)(tr_mix64(id ^ 0x5a1e5) % (o->value_size - o->min_value + 1));
    return o->value_size;
}

static void recompute_delay(const opts *o, uint64_t id)
{
    if (o->n_recompute == 0)
        return;
    uint32_t us = o->recompute_us[tr_mix64(id ^ 0xc1a55) % (uint64_t)o->n_recompute];
    if (us == 0)
        return;
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static char filler[1 << 20];

static int append_set(char **p, const opts *o, uint64_t id)
{
    char key[300];
    size_t kl = key_of(o, id, key);
    uint32_t vs = value_size_of(o, id);
    *p += sprintf(*p, "set %.*s 0 %d %u\r\n", (int)kl, key, o->ttl, vs);
    memcpy(*p, filler, vs);
    *p += vs;
    memcpy(*p, "\r\n", 2);
    *p += 2;
    return 0;
}

static int send_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    const opts *o = w->o;
    lg_rng r;
    lg_rng_seed(&r, o->seed + (uint64_t)w->idx * 0x100000001b3ULL);
    int fd = connect_to(o);
    if (fd < 0) {
        fprintf(stderr, "hc-loadgen: cannot connect to %s:%s\n", o->host, o->port);
        w->st.errors++;
        return NULL;
    }
    rd *in = malloc(sizeof *in);
    in->fd = fd;
    in->a = in->b = 0;
    int D = o->pipeline;
    size_t cap = (size_t)D * (size_t)(o->max_value + 400) + 4096;
    char *out = malloc(cap);
    req *batch = malloc((size_t)D * sizeof *batch);
    uint64_t *missed = malloc(2 * (size_t)D * sizeof *missed);
    uint64_t scan_pos = (o->scan_start + (uint64_t)w->idx * 7919) % (o->scan_len ? o->scan_len : 1);
    double t_end = o->duration_s > 0 ? now_s() + o->duration_s : 0;
    uint64_t done = 0;
    while (o->requests == 0 || done < o->requests) {
        if (t_end > 0 && (done & 63) == 0 && now_s() >= t_end)
            break;
        int n = D;
        if (o->requests && o->requests - done < (uint64_t)n)
            n = (int)(o->requests - done);
        char *p = out;
        for (int i = 0; i < n; i++) {
            batch[i].id = next_id(o, w->z, &r, &scan_pos);
            batch[i].op = next_op(o, &r);
            char key[300];
            size_t kl = key_of(o, batch[i].id, key);
            if (batch[i].op == OP_UPDATE)
                append_set(&p, o, batch[i].id);
            else if (batch[i].op == OP_DELETE)
                p += sprintf(p, "delete %.*s\r\n", (int)kl, key);
            else if (batch[i].op == OP_INCR) /* counters: their own keys, beside the values */
                p += sprintf(p, "incr n%.*s 1\r\n", (int)kl, key);
            else
                p += sprintf(p, "get %.*s\r\n", (int)kl, key);
        }
        if (send_all(fd, out, (size_t)(p - out)) < 0)
            goto fail;
        int nm = 0;
        int nc = 0;  /* counters to create: their ids follow the misses' in missed[] */
        for (int i = 0; i < n; i++) {
            if (batch[i].op == OP_UPDATE) {
                if (read_stored(in) < 0)
                    goto fail;
                w->st.updates++;
                continue;
            }
            if (batch[i].op == OP_DELETE || batch[i].op == OP_INCR) {
                int f = read_found(in);
                if (f < 0)
                    goto fail;
                if (batch[i].op == OP_DELETE) {
                    w->st.deletes++;
                } else {
                    w->st.incrs++;
                    if (!f)
                        missed[D + nc++] = batch[i].id;
                }
                continue;
            }
            int h = read_get(in);
            if (h < 0)
                goto fail;
            w->st.gets++;
            if (h)
                w->st.hits++;
            else {
                w->st.misses++;
                missed[nm++] = batch[i].id;
            }
        }
        if (nm > 0) {
            p = out;
            for (int i = 0; i < nm; i++) {
                recompute_delay(o, missed[i]);
                append_set(&p, o, missed[i]);
            }
            if (send_all(fd, out, (size_t)(p - out)) < 0)
                goto fail;
            for (int i = 0; i < nm; i++) {
                if (read_stored(in) < 0)
                    goto fail;
                w->st.sets++;
            }
        }
        if (nc > 0) { /* a rate limiter's first hit: the counter starts at 1 */
            p = out;
            for (int i = 0; i < nc; i++) {
                char key[300];
                size_t kl = key_of(o, missed[D + i], key);
                p += sprintf(p, "add n%.*s 0 %d 1\r\n1\r\n", (int)kl, key, o->ttl);
            }
            if (send_all(fd, out, (size_t)(p - out)) < 0)
                goto fail;
            for (int i = 0; i < nc; i++)
                if (read_stored(in) < 0)
                    goto fail;
        }
        done += (uint64_t)n;
    }
    w->scan_end = scan_pos;
    close(fd);
    free(in);
    free(out);
    free(batch);
    free(missed);
    return NULL;
fail:
    fprintf(stderr, "hc-loadgen: connection error\n");
    w->st.errors++;
    close(fd);
    free(in);
    free(out);
    free(batch);
    free(missed);
    return NULL;
}

static void usage(void)
{
    printf("usage: hc-loadgen [options]\n"
           "  --server HOST:PORT     (default 127.0.0.1:11211)\n"
           "  --dist zipf|uniform|scan|etc  (default zipf)\n"
           "  --alpha A              zipf exponent (default 0.9)\n"
           "  --keys N               key space (default 100000)\n"
           "  --requests N           per connection (default 100000; 0 = until --duration)\n"
           "  --duration S           stop after S seconds\n"
           "  --seed N               (default 1)\n"
           "  --pipeline D           requests per write (default 1 = request/response)\n"
           "  --conns C              connections, one thread each (default 1)\n"
           "  --value-size B         value bytes for zipf/uniform/scan (default 100)\n"
           "  --max-value B          cap for etc value sizes (default 65536)\n"
           "  --ttl S                TTL of stored items (default 0 = none)\n"
           "  --scan-frac F          scan: share of requests that belong to scans (0.2)\n"
           "  --scan-len N           scan: keys per scan pass, disjoint from --keys (keys)\n"
           "  --scan-start P         scan: position the scan starts at (0; the output's scan_end\n"
           "                         continues a previous run's scan where it stopped)\n"
           "  --update-frac F        share of requests that are blind sets (default 0)\n"
           "  --delete-frac F        share of requests that are deletes of the key (default 0)\n"
           "  --incr-frac F          share that are incr of the key's counter (n<key>), added\n"
           "                         at 1 when it does not exist yet (default 0)\n"
           "  --min-value B          value bytes per key uniform in [B, --value-size] (0: all\n"
           "                         --value-size)\n"
           "  --recompute-us A,B,..  recompute delay per key class (class = hash(key) mod n)\n"
           "  --print-keys           no server: print the key ids connection 0 would read\n"
           "  --quiet\n");
}

int main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    strcpy(o.host, "127.0.0.1");
    strcpy(o.port, "11211");
    o.dist = D_ZIPF;
    o.alpha = 0.9;
    o.keys = 100000;
    o.requests = 100000;
    o.seed = 1;
    o.pipeline = 1;
    o.conns = 1;
    o.value_size = 100;
    o.max_value = 65536;
    o.scan_frac = 0.2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, 1))
        if (!strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--print-keys")) {
            o.print_keys = 1;
        } else if (ARG("--server")) {
            const char *c = strrchr(v, ':');
            if (!c || (size_t)(c - v) >= sizeof o.host) {
                fprintf(stderr, "hc-loadgen: --server HOST:PORT\n");
                return 2;
            }
            snprintf(o.host, sizeof o.host, "%.*s", (int)(c - v), v);
            snprintf(o.port, sizeof o.port, "%s", c + 1);
        } else if (ARG("--dist")) {
            o.dist = !strcmp(v, "uniform") ? D_UNIFORM : !strcmp(v, "scan") ? D_SCAN
                   : !strcmp(v, "etc") ? D_ETC : !strcmp(v, "zipf") ? D_ZIPF : -1;
            if (o.dist < 0) {
                fprintf(stderr, "hc-loadgen: unknown --dist %s\n", v);
                return 2;
            }
        } else if (ARG("--alpha")) o.alpha = atof(v);
        else if (ARG("--keys")) o.keys = strtoull(v, NULL, 10);
        else if (ARG("--requests")) o.requests = strtoull(v, NULL, 10);
        else if (ARG("--duration")) o.duration_s = atof(v);
        else if (ARG("--seed")) o.seed = strtoull(v, NULL, 10);
        else if (ARG("--pipeline")) o.pipeline = atoi(v);
        else if (ARG("--conns")) o.conns = atoi(v);
        else if (ARG("--value-size")) o.value_size = (uint32_t)atoi(v);
        else if (ARG("--max-value")) o.max_value = (uint32_t)atoi(v);
        else if (ARG("--ttl")) o.ttl = atoi(v);
        else if (ARG("--scan-frac")) o.scan_frac = atof(v);
        else if (ARG("--scan-len")) o.scan_len = strtoull(v, NULL, 10);
        else if (ARG("--scan-start")) o.scan_start = strtoull(v, NULL, 10);
        else if (ARG("--update-frac")) o.update_frac = atof(v);
        else if (ARG("--delete-frac")) o.delete_frac = atof(v);
        else if (ARG("--incr-frac")) o.incr_frac = atof(v);
        else if (ARG("--min-value")) o.min_value = (uint32_t)atoi(v);
        else if (ARG("--recompute-us")) {
            char *s = strdup(v), *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t && o.n_recompute < 16;
                 t = strtok_r(NULL, ",", &save))
                o.recompute_us[o.n_recompute++] = (uint32_t)atoi(t);
            free(s);
        } else {
            fprintf(stderr, "hc-loadgen: unknown or incomplete option %s (see --help)\n", a);
            return 2;
        }
    }
    if (o.keys == 0 || o.pipeline < 1 || o.conns < 1 || o.value_size < 1 ||
        o.value_size > (1u << 20) - 1024 || o.max_value > (1u << 20) - 1024 ||
        (o.requests == 0 && o.duration_s <= 0)) {
        fprintf(stderr, "hc-loadgen: bad arguments (see --help)\n");
        return 2;
    }
    if (o.keys % 2654435761ULL == 0) {
        fprintf(stderr, "hc-loadgen: --keys must not be a multiple of 2654435761\n");
        return 2;
    }
    if (o.value_size > o.max_value)
        o.max_value = o.value_size;
    if (o.scan_len == 0)
        o.scan_len = o.keys;
    memset(filler, 'x', sizeof filler);
    lg_zipf z = {0, NULL};
    if (o.dist != D_UNIFORM && lg_zipf_init(&z, o.keys, o.alpha) < 0) {
        fprintf(stderr, "hc-loadgen: out of memory\n");
        return 1;
    }
    if (o.print_keys) {
        /* The read sequence does not depend on hits or misses, so it can be replayed offline
         * (e.g. through an exact LRU) without a server. Blind updates print as "u <id>". */
        lg_rng r;
        lg_rng_seed(&r, o.seed);
        uint64_t scan_pos = o.scan_start % o.scan_len;
        for (uint64_t i = 0; i < o.requests; i++) {
            uint64_t id = next_id(&o, &z, &r, &scan_pos);
            int op = next_op(&o, &r);
            printf(op == OP_UPDATE ? "u %llu\n" : op == OP_DELETE ? "d %llu\n"
                   : op == OP_INCR ? "i %llu\n" : "%llu\n", (unsigned long long)id);
        }
        lg_zipf_free(&z);
        return 0;
    }
    worker *w = calloc((size_t)o.conns, sizeof *w);
    double t0 = now_s();
    for (int i = 0; i < o.conns; i++) {
        w[i].o = &o;
        w[i].z = &z;
        w[i].idx = i;
        pthread_create(&w[i].th, NULL, work, &w[i]);
    }
    stats t = {0};
    for (int i = 0; i < o.conns; i++) {
        pthread_join(w[i].th, NULL);
        t.gets += w[i].st.gets;
        t.hits += w[i].st.hits;
        t.misses += w[i].st.misses;
        t.sets += w[i].st.sets;
        t.updates += w[i].st.updates;
        t.deletes += w[i].st.deletes;
        t.incrs += w[i].st.incrs;
        t.errors += w[i].st.errors;
    }
    double el = now_s() - t0;
    printf("{\"gets\": %llu, \"hits\": %llu, \"misses\": %llu, \"sets\": %llu, \"updates\": %llu, "
           "\"deletes\": %llu, \"incrs\": %llu, "
           "\"errors\": %llu, \"hit_ratio\": %.6f, \"elapsed_s\": %.3f, \"ops_per_s\": %.1f, "
           "\"scan_end\": %llu}\n",
           (unsigned long long)t.gets, (unsigned long long)t.hits, (unsigned long long)t.misses,
           (unsigned long long)t.sets, (unsigned long long)t.updates,
           (unsigned long long)t.deletes, (unsigned long long)t.incrs,
           (unsigned long long)t.errors, t.gets ? (double)t.hits / (double)t.gets : 0.0, el,
           (double)(t.gets + t.sets + t.updates + t.deletes + t.incrs) / el, (unsigned long long)w[0].scan_end);
    lg_zipf_free(&z);
    free(w);
    return t.errors ? 1 : 0;
}

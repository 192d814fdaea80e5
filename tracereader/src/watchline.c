/*
 * Parser for one memcached watch line. Field order is not relied upon (it changed across
 * versions: clsid, cfd and size were appended over time), only `name=value` tokens separated
 * by single spaces; URI encoding guarantees values contain no spaces.
 */
#include "watchline.h"

#include <string.h>

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int wl_uridecode(const char *s, size_t len, unsigned char *out, size_t cap)
{
    /* Fast path: most keys need no decoding (only [A-Za-z0-9-._~] and no '%'): one pass that
     * copies and checks; a '%' falls through to the decoder. */
    if (len <= cap) {
        size_t i = 0;
        for (; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '%')
                break;
            if (c <= ' ' || c >= 0x7f)
                return -1;
            out[i] = c;
        }
        if (i == len)
            return (int)len;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= len)
                return -1;
            int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            c = (unsigned char)(h * 16 + l);
            i += 2;
        } else if (c <= ' ' || c >= 0x7f) {
            return -1; /* memcached never emits these raw */
        }
        if (o >= cap)
            return -1;
        out[o++] = c;
    }
    return (int)o;
}

static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20)
        return -1;
    uint64_t v = 0;
    if (len < 20) { /* 19 digits cannot overflow: no division per digit (most fields) */
        for (size_t i = 0; i < len; i++) {
            unsigned d = (unsigned char)s[i] - '0';
            if (d > 9)
                return -1;
            v = v * 10 + d;
        }
        *out = v;
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_i64(const char *s, size_t len, int64_t *out)
{
    int neg = len > 0 && s[0] == '-';
    uint64_t u;
    if (parse_u64(s + neg, len - (size_t)neg, &u) < 0 || u > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? -(int64_t)u : (int64_t)u;
    return 0;
}

int wl_parse_ts(const char *s, size_t len, int64_t *ts_us)
{
    size_t d = 0; /* a dozen bytes: a loop is cheaper than a memchr call */
    while (d < len && s[d] != '.')
        d++;
    const char *dot = d < len ? s + d : NULL;
    uint64_t sec, usec = 0;
    if (!dot) {
        if (parse_u64(s, len, &sec) < 0)
            return -1;
    } else {
        /* %d of tv_usec: the digits ARE the microsecond count (".98134" is 98134 us). */
        if (parse_u64(s, (size_t)(dot - s), &sec) < 0 ||
            parse_u64(dot + 1, len - (size_t)(dot - s) - 1, &usec) < 0 || usec >= 1000000)
            return -1;
    }
    if (sec > (uint64_t)INT64_MAX / 1000000 - 1)
        return -1;
    *ts_us = (int64_t)sec * 1000000 + (int64_t)usec;
    return 0;
}

static enum wl_status status_of(const char *v, size_t n)
{
    static const struct { const char *s; enum wl_status st; } tab[] = {
        {"found", WS_FOUND}, {"not_found", WS_NOT_FOUND}, {"expired", WS_EXPIRED},
        {"flushed", WS_FLUSHED}, {"stored", WS_STORED}, {"not_stored", WS_NOT_STORED},
        {"exists", WS_EXISTS}, {"too_large", WS_TOO_LARGE}, {"no_memory", WS_NO_MEMORY},
    };
    if (n == 5 && memcmp(v, "found", 5) == 0) /* most lines: no table walk */
        return WS_FOUND;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].s) == n && memcmp(tab[i].s, v, n) == 0)
            return tab[i].st;
    return WS_UNKNOWN;
}

/* Types memcached prints that the normaliser has no use for; anything else is WL_UNKNOWN. */
static enum wl_type type_of(const char *v, size_t n)
{
    static const char *const other[] = {
        "conn_new", "conn_close", "connerr", "conntlserr", "lru_crawler", "slab_move",
        "compact_start", "compact_abort", "compact_read_start", "compact_read_end",
        "compact_end", "compact_fraginfo", "proxy_req", "proxy_backend", "proxy_conf",
        "proxy_error", "proxy_user",
    };
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(v, lit, n) == 0)
    if (IS("item_get"))
        return WL_GET;
    if (IS("item_store"))
        return WL_STORE;
    if (IS("eviction"))
        return WL_EVICTION;
    if (IS("deleted"))
        return WL_DELETED;
    if (IS("extwrite"))
        return WL_EXTWRITE;
#undef IS
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (strlen(other[i]) == n && memcmp(other[i], v, n) == 0)
            return WL_OTHER;
    return WL_UNKNOWN;
}

/* Index of the first ' ' in s[i, len), or len. Word at a time: a byte of x ^ 0x20.. is zero
 * where s has a space, and (y - 0x01..) & ~y & 0x80.. sets the top bit of the lowest zero byte
 * exactly (higher bits may be false positives, the lowest never is; little-endian). */
static size_t find_space(const char *s, size_t i, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (i + 8 <= len) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t y = x ^ 0x2020202020202020ULL;
        uint64_t t = (y - 0x0101010101010101ULL) & ~y & 0x8080808080808080ULL;
        if (t)
            return i + (size_t)(__builtin_ctzll(t) >> 3);
        i += 8;
    }
#endif
    while (i < len && s[i] != ' ')
        i++;
    return i;
}

#define NAME_IS(lit) (nlen == sizeof(lit) - 1 && memcmp(name, lit, nlen) == 0)

int wl_parse(const char *line, size_t len, wl_line *out, unsigned char *keybuf)
{
    unsigned char kb[WL_MAX_KEY];
    unsigned char *kout = keybuf ? keybuf : kb;
    memset(out, 0, sizeof *out);
    out->clsid = -1;
    out->cfd = -1;
    out->ttl = -1;
    out->la = -1;

    if (len == 2 && memcmp(line, "OK", 2) == 0) {
        out->type = WL_OTHER; /* the reply to the watch command itself */
        return 0;
    }
    int have_type = 0, have_key = 0, have_status = 0;
    int bad = 0;   /* a field of an item line is not what memcached prints */
    const char *key = NULL;
    size_t keylen = 0;
    size_t i = 0;
    while (i < len) {
        if (line[i] == ' ') { /* doubled space */
            i++;
            continue;
        }
        /* The name is a few bytes: scan it for '='; the value (a key can be 250 bytes) is
         * scanned for its end 8 bytes at a time. A byte loop over the whole token was ~1,000
         * instructions a line, most of the reader's CPU. */
        size_t j = i;
        while (j < len && line[j] != '=' && line[j] != ' ')
            j++;
        const char *eq = j < len && line[j] == '=' ? line + j : NULL;
        if (eq)
            j = find_space(line, j + 1, len);
        const char *tok = line + i;
        size_t tlen = j - i;
        if (!eq) {
            /* Free text (connerr msg=..., proxy_req req=get a b): fine after a non-item
             * type, garbage anywhere else. */
            bad = 1;
            i = j + 1;
            continue;
        }
        const char *name = tok;
        size_t nlen = (size_t)(eq - tok);
        const char *v = eq + 1;
        size_t vlen = tlen - nlen - 1;
        uint64_t u;
        int64_t s;
        if (NAME_IS("ts")) {
            if (wl_parse_ts(v, vlen, &out->ts_us) < 0)
                return -1;
        } else if (NAME_IS("gid")) {
            if (parse_u64(v, vlen, &out->gid) < 0)
                return -1;
            out->has_gid = 1;
        } else if (NAME_IS("skipped")) {
            /* Only a leading skipped=N is the watcher's loss count; compact_read_end carries
             * a skipped= field of its own. */
            if (i == 0) {
                if (parse_u64(v, vlen, &out->skipped) < 0)
                    return -1;
                out->type = WL_SKIPPED;
                have_type = 1;
            }
        } else if (NAME_IS("type")) {
            if (!have_type) /* proxy_req has a second, numeric type= */
                out->type = (uint8_t)type_of(v, vlen);
            have_type = 1;
        } else if (NAME_IS("key")) {
            key = v;
            keylen = vlen;
            have_key = 1;
        } else if (NAME_IS("status")) {
            out->status = (uint8_t)status_of(v, vlen);
            have_status = 1;
        } else if (NAME_IS("clsid")) {
            if (parse_u64(v, vlen, &u) < 0)
                bad = 1;
            /* 0 is "no class" (misses); > 255 only on garbage failure lines. */
            else
                out->clsid = (u == 0 || u > 255) ? -1 : (int16_t)u;
        } else if (NAME_IS("cfd")) {
            if (parse_i64(v, vlen, &s) < 0)
                bad = 1;
            else
                out->cfd = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
            out->fields |= WLF_CFD;
        } else if (NAME_IS("size")) {
            if (parse_i64(v, vlen, &s) < 0)
                bad = 1;
            else
                out->size = (s < 0 || s > UINT32_MAX) ? 0 : (uint32_t)s;
            out->fields |= WLF_SIZE;
        } else if (NAME_IS("ttl")) {
            if (parse_i64(v, vlen, &s) < 0)
                bad = 1;
            /* item_store: 0 = never expires; eviction: -1 = never expires. */
            else
                out->ttl = (s <= 0 || s > INT32_MAX) ? -1 : (int32_t)s;
        } else if (NAME_IS("la")) {
            if (parse_i64(v, vlen, &s) < 0)
                bad = 1;
            else
                out->la = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
        } else if (NAME_IS("fetch")) {
            out->fetched = vlen == 3 && memcmp(v, "yes", 3) == 0;
        } else if (NAME_IS("cmd")) {
            size_t c = vlen < sizeof out->cmd - 1 ? vlen : sizeof out->cmd - 1;
            memcpy(out->cmd, v, c);
            out->cmd[c] = 0;
        }
        /* Unknown names are other versions' additions: ignored. */
        i = j + 1;
    }
    if (!have_type)
        return -1;
    if (out->type == WL_SKIPPED)
        return bad ? -1 : 0;
    int item = out->type == WL_GET || out->type == WL_STORE || out->type == WL_EVICTION ||
               out->type == WL_DELETED || out->type == WL_EXTWRITE;
    if (!item) {
        out->fields = 0;
        return 0; /* what other lines carry is not ours to judge */
    }
    if (bad || !out->has_gid || !have_key)
        return -1;
    if ((out->type == WL_GET || out->type == WL_STORE) &&
        (!have_status || out->status == WS_UNKNOWN))
        return -1;
    int kl = wl_uridecode(key, keylen, kout, WL_MAX_KEY);
    if (kl < 0)
        return -1;
    out->keylen = (uint16_t)kl;
    out->key = tr_hash_key(kout, (size_t)kl);
    if (out->type == WL_GET && out->status != WS_FOUND) {
        out->clsid = -1; /* misses carry clsid=0 size=0 */
        out->size = 0;
    }
    return 0;
}

/*
 * Parser for one memcached watch line. Field order is not relied upon (it changed across
 * versions: clsid, cfd and size were appended over time), only `name=value` tokens separated
 * by single spaces; URI encoding guarantees values contain no spaces.
 */
#include "watchline_int.h"

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

enum wl_status wl_status_of(const char *v, size_t n)
{
#define IS(lit) (memcmp(v, lit, sizeof(lit) - 1) == 0)
    switch (n) { /* by length first: one or two compares a line, no table walk */
    case 5: return IS("found") ? WS_FOUND : WS_UNKNOWN;
    case 6: return IS("stored") ? WS_STORED : IS("exists") ? WS_EXISTS : WS_UNKNOWN;
    case 7: return IS("expired") ? WS_EXPIRED : IS("flushed") ? WS_FLUSHED : WS_UNKNOWN;
    case 9:
        return IS("not_found") ? WS_NOT_FOUND : IS("too_large") ? WS_TOO_LARGE
             : IS("no_memory") ? WS_NO_MEMORY : WS_UNKNOWN;
    case 10: return IS("not_stored") ? WS_NOT_STORED : WS_UNKNOWN;
    default: return WS_UNKNOWN;
    }
#undef IS
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

/* The fields wl_parse knows, by name. */
enum wl_field { F_OTHER, F_TS, F_GID, F_SKIPPED, F_TYPE, F_KEY, F_STATUS, F_CLSID, F_CFD,
                F_SIZE, F_TTL, F_LA, F_FETCH, F_CMD };

static enum wl_field field_of(const char *name, size_t n)
{
#define IS(lit) (memcmp(name, lit, sizeof(lit) - 1) == 0)
    switch (n) { /* by length first: one or two integer compares a token */
    case 2: return IS("ts") ? F_TS : IS("la") ? F_LA : F_OTHER;
    case 3:
        return IS("gid") ? F_GID : IS("key") ? F_KEY : IS("cfd") ? F_CFD : IS("ttl") ? F_TTL
             : IS("cmd") ? F_CMD : F_OTHER;
    case 4: return IS("type") ? F_TYPE : IS("size") ? F_SIZE : F_OTHER;
    case 5: return IS("clsid") ? F_CLSID : IS("fetch") ? F_FETCH : F_OTHER;
    case 6: return IS("status") ? F_STATUS : F_OTHER;
    case 7: return IS("skipped") ? F_SKIPPED : F_OTHER;
    default: return F_OTHER;
    }
#undef IS
}

/* The names memcached prints, matched with their '=' straight from the line (a few integer
 * compares; p has 8 readable bytes): *nlen is the name's length, where a scan for '=' would
 * stop. F_OTHER: not one of them, the caller scans. */
static enum wl_field known_name(const char *p, size_t *nlen)
{
#define AT(lit, f) if (memcmp(p, lit, sizeof(lit) - 1) == 0) { *nlen = sizeof(lit) - 2; return f; }
    switch (p[0]) {
    case 't': AT("ts=", F_TS) AT("type=", F_TYPE) AT("ttl=", F_TTL) break;
    case 'g': AT("gid=", F_GID) break;
    case 'k': AT("key=", F_KEY) break;
    case 's': AT("status=", F_STATUS) AT("size=", F_SIZE) AT("skipped=", F_SKIPPED) break;
    case 'c': AT("clsid=", F_CLSID) AT("cfd=", F_CFD) AT("cmd=", F_CMD) break;
    case 'l': AT("la=", F_LA) break;
    case 'f': AT("fetch=", F_FETCH) break;
    default: break;
    }
#undef AT
    return F_OTHER;
}

/* Fast paths for numeric values: the digits are read where they are, in the one pass that
 * also finds the value's end. They succeed only for the shape memcached prints (1 to 19
 * digits, then a space or the line's end) and return the value's end; anything else returns
 * 0 and the caller parses the value's exact span with parse_u64 / parse_i64 / wl_parse_ts,
 * so odd input gets exactly the answer it got before. */
static size_t digits(const char *s, size_t i, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t j = i;
    for (; j < len && j - i < 20; j++) {
        unsigned d = (unsigned char)s[j] - '0';
        if (d > 9)
            break;
        v = v * 10 + d;
    }
    *out = v;
    return j;
}

static size_t fast_u64(const char *s, size_t i, size_t len, uint64_t *out)
{
    size_t j = digits(s, i, len, out);
    if (j == i || j - i >= 20 || (j < len && s[j] != ' '))
        return 0;
    return j;
}

static size_t fast_i64(const char *s, size_t i, size_t len, int64_t *out)
{
    int neg = i < len && s[i] == '-';
    uint64_t u;
    size_t j = fast_u64(s, i + (size_t)neg, len, &u);
    if (!j || u > (uint64_t)INT64_MAX)
        return 0;
    *out = neg ? -(int64_t)u : (int64_t)u;
    return j;
}

static size_t fast_ts(const char *s, size_t i, size_t len, int64_t *ts_us)
{
    uint64_t sec, usec = 0;
    size_t j = digits(s, i, len, &sec);
    if (j == i || j - i >= 20)
        return 0;
    if (j < len && s[j] == '.') {
        size_t k = digits(s, j + 1, len, &usec);
        if (k == j + 1 || k - j - 1 >= 20 || usec >= 1000000)
            return 0;
        j = k;
    }
    if ((j < len && s[j] != ' ') || sec > (uint64_t)INT64_MAX / 1000000 - 1)
        return 0;
    *ts_us = (int64_t)sec * 1000000 + (int64_t)usec;
    return j;
}

int wl_parse_general(const char *line, size_t len, wl_line *out, unsigned char *keybuf)
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
        /* The name: one of memcached's, matched with its '=' (the scan below was a third of
         * the parser's instructions), or scanned for '='. */
        size_t j = i, nlen;
        enum wl_field f = i + 8 <= len ? known_name(line + i, &nlen) : F_OTHER;
        if (f != F_OTHER) {
            j = i + nlen;
        } else {
            while (j < len && line[j] != '=' && line[j] != ' ')
                j++;
            if (j == len || line[j] != '=') {
                /* Free text (connerr msg=..., proxy_req req=get a b): fine after a non-item
                 * type, garbage anywhere else. */
                bad = 1;
                i = j + 1;
                continue;
            }
            f = field_of(line + i, j - i);
        }
        size_t vs = j + 1, ve = 0; /* the value: [vs, ve), ve a space or len */
        const char *v = line + vs;
        uint64_t u;
        int64_t s;
        switch (f) {
        case F_TS:
            if (!(ve = fast_ts(line, vs, len, &out->ts_us))) {
                ve = find_space(line, vs, len);
                if (wl_parse_ts(v, ve - vs, &out->ts_us) < 0)
                    return -1;
            }
            break;
        case F_GID:
            if (!(ve = fast_u64(line, vs, len, &out->gid))) {
                ve = find_space(line, vs, len);
                if (parse_u64(v, ve - vs, &out->gid) < 0)
                    return -1;
            }
            out->has_gid = 1;
            break;
        case F_CLSID:
            if (!(ve = fast_u64(line, vs, len, &u))) {
                ve = find_space(line, vs, len);
                if (parse_u64(v, ve - vs, &u) < 0) {
                    bad = 1;
                    break;
                }
            }
            /* 0 is "no class" (misses); > 255 only on garbage failure lines. */
            out->clsid = (u == 0 || u > 255) ? -1 : (int16_t)u;
            break;
        case F_CFD: case F_SIZE: case F_TTL: case F_LA:
            if (f == F_CFD)
                out->fields |= WLF_CFD;
            else if (f == F_SIZE)
                out->fields |= WLF_SIZE;
            if (!(ve = fast_i64(line, vs, len, &s))) {
                ve = find_space(line, vs, len);
                if (parse_i64(v, ve - vs, &s) < 0) {
                    bad = 1;
                    break;
                }
            }
            if (f == F_CFD)
                out->cfd = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
            else if (f == F_SIZE)
                out->size = (s < 0 || s > UINT32_MAX) ? 0 : (uint32_t)s;
            else if (f == F_TTL) /* item_store: 0 = never expires; eviction: -1 = never */
                out->ttl = (s <= 0 || s > INT32_MAX) ? -1 : (int32_t)s;
            else
                out->la = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
            break;
        default:
            break;
        }
        if (!ve) /* a text value, or a number that took the exact path and failed */
            ve = find_space(line, vs, len);
        size_t vlen = ve - vs;
        switch (f) {
        case F_SKIPPED:
            /* Only a leading skipped=N is the watcher's loss count; compact_read_end carries
             * a skipped= field of its own. */
            if (i == 0) {
                if (parse_u64(v, vlen, &out->skipped) < 0)
                    return -1;
                out->type = WL_SKIPPED;
                have_type = 1;
            }
            break;
        case F_TYPE:
            if (!have_type) /* proxy_req has a second, numeric type= */
                out->type = (uint8_t)type_of(v, vlen);
            have_type = 1;
            break;
        case F_KEY:
            key = v;
            keylen = vlen;
            have_key = 1;
            break;
        case F_STATUS:
            out->status = (uint8_t)wl_status_of(v, vlen);
            have_status = 1;
            break;
        case F_FETCH:
            out->fetched = vlen == 3 && memcmp(v, "yes", 3) == 0;
            break;
        case F_CMD: {
            size_t c = vlen < sizeof out->cmd - 1 ? vlen : sizeof out->cmd - 1;
            memcpy(out->cmd, v, c);
            out->cmd[c] = 0;
            break;
        }
        default: /* numbers (above), or other versions' additions: ignored */
            break;
        }
        i = ve + 1;
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

/* memcached 1.6.x's own item lines take the fast path (watchline_fast.c); everything it does not
 * recognise, the general one. */
int wl_parse(const char *line, size_t len, wl_line *out, unsigned char *keybuf)
{
    if (wl_parse_fast(line, len, out, keybuf))
        return 0;
    return wl_parse_general(line, len, out, keybuf);
}

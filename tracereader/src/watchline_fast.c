/*
 * The watch-line parser's fast path: the three item lines memcached 1.6.x prints, read left to
 * right in the order memcached prints their fields, each name matched as part of a literal
 * (" gid=", " type=item_get key=") instead of being looked up, each number read where it is.
 *
 *   ts=S.U gid=N type=item_get key=K status=ST clsid=N cfd=N size=N
 *   ts=S.U gid=N type=item_store key=K status=ST cmd=C ttl=N clsid=N cfd=N size=N
 *   ts=S.U gid=N type=eviction key=K fetch=F ttl=N la=N clsid=N size=N
 *
 * The general parser (watchline.c) spent ~1,250 instructions a line on these: a name lookup,
 * a value scan and a dispatch per field. Anything else (another version's field set or order,
 * an escaped key, a doubled space, a number past 19 digits, an unknown status) returns 0 and
 * the line goes to the general parser, so a line gets exactly the answer it got before
 * (tests/test_tracereader.c compares the two on every line it has, and on mutations of them).
 */
#include "watchline_int.h"

#include <string.h>

static inline __attribute__((always_inline)) uint64_t ld8(const char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

static inline __attribute__((always_inline)) uint32_t ld4(const char *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/* p[0, n) == lit, n a constant 3..16 once inlined: two overlapping loads and compares against
 * constants the compiler folds (memcmp with an odd constant length was a library call). */
static inline __attribute__((always_inline)) int eq(const char *p, const char *lit, size_t n)
{
    if (n >= 8)
        return ld8(p) == ld8(lit) && ld8(p + n - 8) == ld8(lit + n - 8);
    if (n >= 4)
        return ld4(p) == ld4(lit) && ld4(p + n - 4) == ld4(lit + n - 4);
    return memcmp(p, lit, n) == 0;
}

/* The literal at p, and p moved past it. */
#define LIT(p, e, lit) \
    ((size_t)((e) - (p)) >= sizeof(lit) - 1 && eq((p), (lit), sizeof(lit) - 1) \
         ? ((p) += sizeof(lit) - 1, 1) : 0)

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WL_SWAR 1
/* How many of the 8 bytes of x (in memory order) are digits before the first non-digit. A byte
 * is a digit iff its high nibble is 3 and adding 6 keeps it so; the carry of +6 out of a byte
 * only starts at a non-digit (0xfa..0xff), so the lowest flagged byte is exact. */
static inline __attribute__((always_inline)) unsigned digit_run(uint64_t x)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, threes = 0x3030303030303030ULL;
    uint64_t t = ((x & hi) ^ threes) | (((x + 0x0606060606060606ULL) & hi) ^ threes);
    return t ? (unsigned)__builtin_ctzll(t) >> 3 : 8;
}

/* The value of the first n (1..8) digits of x: moved to the top so the rest become leading
 * zeros, then pairs, quads and the octet combined by multiplication (Lemire, "Faster
 * integer parsing", 2018). */
static inline __attribute__((always_inline)) uint64_t digits8(uint64_t x, unsigned n)
{
    x = (x - 0x3030303030303030ULL) << (8 * (8 - n));
    x = x * 10 + (x >> 8);
    return (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
            (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}
#endif

/* 1 to 19 digits (no overflow possible, as the general parser's fast path); NULL if none or
 * if more follow (the general parser decides those). */
static inline __attribute__((always_inline)) const char *num(const char *p, const char *e, uint64_t *out)
{
    static const uint64_t pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                      100000000};
    const char *q = p;
    uint64_t v = 0;
#ifdef WL_SWAR
    while (e - q >= 8) {
        uint64_t x = ld8(q);
        unsigned n = digit_run(x);
        if (n == 0)
            break;
        v = v * pow10[n] + digits8(x, n); /* may wrap past 19 digits: refused below */
        q += n;
        if (n < 8) {
            *out = v;
            return q - p > 19 ? NULL : q;
        }
    }
#endif
    for (; q < e; q++) {
        unsigned d = (unsigned char)*q - '0';
        if (d > 9)
            break;
        v = v * 10 + d;
    }
    *out = v;
    return q == p || q - p > 19 ? NULL : q;
}

/* The same a digit at a time, for the short fields (clsid, cfd, size, ttl, la: one to four
 * digits): eight at a time costs ~45 instructions whatever the length, this ~5 a digit. */
static inline __attribute__((always_inline)) const char *short_num(const char *p, const char *e,
                                                                   uint64_t *out)
{
    const char *q = p;
    uint64_t v = 0;
    for (; q < e; q++) {
        unsigned d = (unsigned char)*q - '0';
        if (d > 9)
            break;
        v = v * 10 + d;
        if (q - p >= 19)
            return NULL; /* a 20th digit: the general parser decides */
    }
    *out = v;
    return q == p ? NULL : q;
}

/* An optionally negative short number within int64 (ttl=-1 on evictions); NULL if not. */
static inline __attribute__((always_inline)) const char *snum(const char *p, const char *e, int64_t *out)
{
    int neg = p < e && *p == '-';
    uint64_t u;
    const char *q = short_num(p + neg, e, &u);
    if (!q || u > (uint64_t)INT64_MAX)
        return NULL;
    *out = neg ? -(int64_t)u : (int64_t)u;
    return q;
}

/* A key that needs no decoding, up to the space after it: its end, or NULL (a '%' escape, a
 * byte memcached never prints raw, no space, or longer than a key can be). Eight bytes at a
 * time: the lowest flagged byte of each test below is exact (borrows and carries only reach
 * higher bytes), so the lowest of their union is the first space or bad byte. */
static inline __attribute__((always_inline)) const char *plain_key(const char *p, const char *e)
{
    const char *q = p;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    while (e - q >= 8) {
        uint64_t x, y;
        memcpy(&x, q, 8);
        uint64_t low = (x - 0x21 * ones) & ~x;           /* byte <= ' ' */
        uint64_t top = x + ones;                          /* byte >= 0x7f (with |x) */
        y = x ^ (0x25 * ones);                            /* byte == '%' */
        uint64_t pct = (y - ones) & ~y;
        uint64_t t = (low | top | x | pct) & high;
        if (t) {
            q += __builtin_ctzll(t) >> 3;
            break;
        }
        q += 8;
    }
#endif
    for (; q < e; q++) {
        unsigned char c = (unsigned char)*q;
        if (c <= ' ' || c >= 0x7f || c == '%')
            break;
    }
    if (q == e || *q != ' ' || q == p || q - p > WL_MAX_KEY)
        return NULL;
    return q;
}

/* A text value up to the next space (status=, cmd=, fetch=): its end, NULL if none. */
static inline __attribute__((always_inline)) const char *word(const char *p, const char *e)
{
    const char *q = p;
    while (q < e && *q != ' ')
        q++;
    return q < e && q > p ? q : NULL;
}

/* ts='s seconds. They change once a second and lines come up to millions a second, so the last
 * ten-digit seconds this thread read (until the year 2286 they all have ten) are remembered,
 * text and value: a line of the same second compares ten bytes instead of reading ten digits.
 * Only a run of exactly ten digits followed by '.' is remembered or matched, so the value is
 * the one num() gives. */
static inline __attribute__((always_inline)) const char *seconds(const char *p, const char *e,
                                                                 uint64_t *sec)
{
    static _Thread_local struct { uint64_t lo; uint16_t hi; int set; uint64_t sec; } last;
    uint16_t hi;
    if (e - p >= 11 && p[10] == '.') {
        memcpy(&hi, p + 8, 2);
        if (last.set && ld8(p) == last.lo && hi == last.hi) {
            *sec = last.sec;
            return p + 10;
        }
    }
    const char *q = num(p, e, sec);
    if (q && q - p == 10 && q < e && *q == '.') {
        last.lo = ld8(p);
        memcpy(&last.hi, p + 8, 2);
        last.sec = *sec;
        last.set = 1;
    }
    return q;
}

int wl_parse_fast(const char *line, size_t len, wl_line *out, unsigned char *keybuf)
{
    const char *p = line, *e = line + len;
    uint64_t u, sec, usec = 0;
    int64_t s;
    if (!LIT(p, e, "ts=") || !(p = seconds(p, e, &sec)))
        return 0;
    if (p < e && *p == '.' && !(p = num(p + 1, e, &usec)))
        return 0;
    if (usec >= 1000000 || sec > (uint64_t)INT64_MAX / 1000000 - 1)
        return 0;
    memset(out, 0, sizeof *out);
    out->clsid = -1;
    out->cfd = -1;
    out->ttl = -1;
    out->la = -1;
    out->ts_us = (int64_t)sec * 1000000 + (int64_t)usec;
    if (!LIT(p, e, " gid=") || !(p = num(p, e, &out->gid)) || !LIT(p, e, " type="))
        return 0;
    out->has_gid = 1;
    if (LIT(p, e, "item_get key="))
        out->type = WL_GET;
    else if (LIT(p, e, "item_store key="))
        out->type = WL_STORE;
    else if (LIT(p, e, "eviction key="))
        out->type = WL_EVICTION;
    else
        return 0;
    const char *key = p;
    if (!(p = plain_key(p, e)))
        return 0;
    size_t keylen = (size_t)(p - key);
    const char *v;
    if (out->type == WL_EVICTION) {
        if (!LIT(p, e, " fetch=") || !(v = word(p, e)))
            return 0;
        out->fetched = v - p == 3 && memcmp(p, "yes", 3) == 0;
        p = v;
    } else {
        if (!LIT(p, e, " status=") || !(v = word(p, e)))
            return 0;
        out->status = (uint8_t)wl_status_of(p, (size_t)(v - p));
        if (out->status == WS_UNKNOWN)
            return 0;
        p = v;
    }
    if (out->type == WL_STORE) {
        if (!LIT(p, e, " cmd=") || !(v = word(p, e)))
            return 0;
        size_t c = (size_t)(v - p) < sizeof out->cmd - 1 ? (size_t)(v - p) : sizeof out->cmd - 1;
        memcpy(out->cmd, p, c);
        p = v;
    }
    if (out->type != WL_GET) { /* item_store: 0 = never expires; eviction: -1 = never */
        if (!LIT(p, e, " ttl=") || !(p = snum(p, e, &s)))
            return 0;
        out->ttl = (s <= 0 || s > INT32_MAX) ? -1 : (int32_t)s;
    }
    if (out->type == WL_EVICTION) {
        if (!LIT(p, e, " la=") || !(p = snum(p, e, &s)))
            return 0;
        out->la = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
    }
    /* 0 is "no class" (misses); > 255 only on garbage failure lines. */
    if (!LIT(p, e, " clsid=") || !(p = short_num(p, e, &u)))
        return 0;
    out->clsid = (u == 0 || u > 255) ? -1 : (int16_t)u;
    if (out->type != WL_EVICTION) {
        if (!LIT(p, e, " cfd=") || !(p = snum(p, e, &s)))
            return 0;
        out->cfd = (s < 0 || s > INT32_MAX) ? -1 : (int32_t)s;
        out->fields |= WLF_CFD;
    }
    if (!LIT(p, e, " size=") || !(p = snum(p, e, &s)) || p != e)
        return 0;
    out->size = (s < 0 || s > UINT32_MAX) ? 0 : (uint32_t)s;
    out->fields |= WLF_SIZE;
    /* The key needs no decoding: hash it where it is; copy it only for a caller that wants it. */
    if (keybuf)
        memcpy(keybuf, key, keylen);
    out->keylen = (uint16_t)keylen;
    out->key = tr_hash_key(key, keylen);
    if (out->type == WL_GET && out->status != WS_FOUND) {
        out->clsid = -1; /* misses carry clsid=0 size=0 */
        out->size = 0;
    }
    return 1;
}

/*
 * CSV traces: `key,size[,op]` per line. The key may be double-quoted ("" escapes a quote) so
 * keys with commas survive. A first line whose size field is not a number is a header.
 * op: get/read (TR_GET, the default), hit, miss, set/write/add/replace, delete/del,
 * evict, or the numeric tr_op value 0-5.
 * Integer-looking keys are hashed from their text as is ("42" is tr_hash_int(42);
 * "042" is a different key, like in memcached).
 */
#define _POSIX_C_SOURCE 200809L
#include "reader_int.h"
#include "hashint.h"

#include <string.h>
#include <strings.h>

static int op_of(const char *s, size_t n)
{
    static const struct { const char *name; int op; } tab[] = {
        {"get", TR_GET}, {"read", TR_GET}, {"r", TR_GET}, {"hit", TR_HIT}, {"miss", TR_MISS},
        {"set", TR_SET}, {"write", TR_SET}, {"w", TR_SET}, {"add", TR_SET},
        {"replace", TR_SET}, {"delete", TR_DELETE}, {"del", TR_DELETE}, {"evict", TR_EVICT},
        {"0", TR_GET}, {"1", TR_HIT}, {"2", TR_MISS}, {"3", TR_SET}, {"4", TR_DELETE},
        {"5", TR_EVICT},
    };
    while (n > 0 && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0)
        return TR_GET;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].name) == n && strncasecmp(tab[i].name, s, n) == 0)
            return tab[i].op;
    return -1;
}

/* Parse the key field at line[0..]; returns bytes consumed incl. the comma, or -1. */
static long parse_key(const char *line, size_t len, unsigned char *kb, size_t cap, size_t *kl)
{
    size_t i = 0, o = 0;
    if (len > 0 && line[0] == '"') {
        i = 1;
        for (;;) {
            if (i >= len)
                return -1; /* unterminated quote */
            if (line[i] == '"') {
                if (i + 1 < len && line[i + 1] == '"') {
                    if (o >= cap)
                        return -1;
                    kb[o++] = '"';
                    i += 2;
                    continue;
                }
                i++;
                break;
            }
            if (o >= cap)
                return -1;
            kb[o++] = (unsigned char)line[i++];
        }
        if (i >= len || line[i] != ',')
            return -1;
    } else {
        while (i < len && line[i] != ',') {
            if (o >= cap)
                return -1;
            kb[o++] = (unsigned char)line[i++];
        }
        if (i >= len)
            return -1;
    }
    *kl = o;
    return (long)i + 1;
}

static int csv_next(tr_reader *r, tr_request *out)
{
    unsigned char kb[4096];
    for (;;) {
        const char *line;
        size_t len;
        int rc = tr_input_line(r->in, &line, &len);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return tr_input_failed(r);
        r->csv_line++;
        if (rc == 2) {
            r->skipped++;
            continue;
        }
        if (len == 0 || line[0] == '#')
            continue;
        size_t kl;
        long used = parse_key(line, len, kb, sizeof kb, &kl);
        if (used < 0 || kl == 0) {
            r->skipped++;
            continue;
        }
        const char *rest = line + used;
        size_t rlen = len - (size_t)used;
        const char *comma = memchr(rest, ',', rlen);
        size_t slen = comma ? (size_t)(comma - rest) : rlen;
        int64_t size;
        if (tr_parse_i64(rest, slen, &size) < 0 || size < 0 || size > UINT32_MAX) {
            if (r->csv_line != 1)
                r->skipped++; /* line 1: a header */
            continue;
        }
        int op = comma ? op_of(comma + 1, rlen - slen - 1) : TR_GET;
        if (op < 0) {
            r->skipped++;
            continue;
        }
        memset(out, 0, sizeof *out);
        out->key = tr_hash_key(kb, kl);
        out->size = (uint32_t)size;
        out->op = (uint8_t)op;
        out->clsid = -1;
        out->ttl = -1;
        return 1;
    }
}

const tr_format tr_fmt_csv = {"csv", NULL, csv_next, NULL};

/* cache2k traces: big-endian signed 32-bit keys back to back, no separators. */
#include "reader_int.h"
#include "hashint.h"

#include <string.h>

static int c2k_next(tr_reader *r, tr_request *out)
{
    /* Keep whole records in the buffer: refill when fewer than 4 bytes remain. */
    while (r->blen - r->bpos < 4) {
        size_t rest = r->blen - r->bpos;
        memmove(r->bbuf, r->bbuf + r->bpos, rest);
        r->bpos = 0;
        r->blen = rest;
        ssize_t n = tr_input_read(r->in, r->bbuf + rest, sizeof r->bbuf - rest);
        if (n < 0)
            return tr_input_failed(r);
        if (n == 0) {
            if (rest > 0) {
                r->skipped++; /* a truncated trailing record */
                r->blen = 0;
            }
            return 0;
        }
        r->blen += (size_t)n;
    }
    const unsigned char *b = r->bbuf + r->bpos;
    r->bpos += 4;
    int32_t k = (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
                          (uint32_t)b[3]);
    memset(out, 0, sizeof *out);
    out->key = tr_hash_int(k);
    out->op = TR_GET;
    out->clsid = -1;
    out->ttl = -1;
    return 1;
}

const tr_format tr_fmt_cache2k = {"cache2k", NULL, c2k_next, NULL};

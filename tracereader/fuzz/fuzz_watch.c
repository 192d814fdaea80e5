/*
 * libFuzzer target: the watch-line parser and the normaliser, as the live agent drives them.
 * The input is a stream of lines; the first byte of every line also picks an arrival-time
 * step, so the live reorder/timeout paths run as well as the offline ones. Every event that
 * comes out must be one of the five ops, and the normaliser must end empty after a flush. A line
 * the fast path takes must parse exactly as the general parser parses it.
 *   make -C tracereader fuzz [FUZZ_SECONDS=60]   (clang + libclang-rt-14-dev from Debian)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "watchline.h"
#include "watchline_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wn_config cfg = {.reorder_lines = 64, .reorder_us = 1000, .pair_gids = 32,
                     .pair_gids_nocfd = 8};
    wn_norm *n = wn_new(&cfg);
    if (!n)
        return 0;
    unsigned char kb[WL_MAX_KEY];
    int64_t now = 0;
    size_t i = 0;
    while (i < size) {
        const uint8_t *nl = memchr(data + i, '\n', size - i);
        size_t len = nl ? (size_t)(nl - (data + i)) : size - i;
        /* a private copy that ends exactly at the line: overreads are caught by ASan */
        char *line = malloc(len ? len : 1);
        if (!line)
            break;
        memcpy(line, data + i, len);
        wl_line l, g;
        unsigned char gk[WL_MAX_KEY];
        memset(&l, 0, sizeof l);
        memset(&g, 0, sizeof g);
        if (wl_parse_fast(line, len, &l, kb) &&
            (wl_parse_general(line, len, &g, gk) != 0 || memcmp(&l, &g, sizeof l) != 0 ||
             memcmp(kb, gk, l.keylen) != 0))
            abort();
        if (wl_parse(line, len, &l, kb) == 0) {
            if ((l.type == WL_GET || l.type == WL_STORE || l.type == WL_EVICTION ||
                 l.type == WL_DELETED) && l.keylen > WL_MAX_KEY)
                abort();
            wn_push(n, &l, now);
        }
        unsigned char dec[WL_MAX_KEY];
        (void)wl_uridecode(line, len, dec, sizeof dec);
        free(line);
        now += len ? (data[i] & 7) * 300 : 0;
        wn_event ev;
        while (wn_pop(n, now, &ev) == 1)
            if (ev.req.op < TR_HIT || ev.req.op > TR_EVICT)
                abort();
        i += len + 1;
    }
    wn_flush(n);
    wn_event ev;
    while (wn_pop(n, now, &ev) == 1)
        if (ev.req.op < TR_HIT || ev.req.op > TR_EVICT)
            abort();
    if (wn_pop(n, INT64_MAX / 2, &ev) != 0)
        abort();
    wn_free(n);
    return 0;
}

/*
 * watchlog: a saved memcached `watch fetchers mutations evictions` stream, normalised by the
 * same parser and normaliser the live agent uses (watchline.h). Offline there is no arrival
 * clock, so reordering is by line count only (65,536 lines covers the ~60k-gid lag measured
 * on 1.6.18).
 */
#include "reader_int.h"
#include "watchline.h"

static int wl_init(tr_reader *r)
{
    r->wn = wn_new(NULL);
    if (!r->wn) {
        r->err = "out of memory";
        return -1;
    }
    return 0;
}

static int wl_next(tr_reader *r, tr_request *out)
{
    wn_event ev;
    for (;;) {
        if (wn_pop(r->wn, 0, &ev)) {
            *out = ev.req;
            return 1;
        }
        if (r->wl_eof)
            return 0;
        const char *line;
        size_t len;
        int rc = tr_input_line(r->in, &line, &len);
        if (rc < 0)
            return tr_input_failed(r);
        if (rc == 0) {
            r->wl_eof = 1;
            wn_flush(r->wn);
            continue;
        }
        if (rc == 2) {
            r->skipped++;
            continue;
        }
        if (len == 0)
            continue;
        wl_line l;
        if (wl_parse(line, len, &l, NULL) < 0) {
            r->skipped++;
            continue;
        }
        if (wn_push(r->wn, &l, 0) < 0) {
            r->err = "out of memory";
            return -1;
        }
    }
}

static void wl_fini(tr_reader *r)
{
    wn_free(r->wn);
    r->wn = NULL;
}

const tr_format tr_fmt_watchlog = {"watchlog", wl_init, wl_next, wl_fini};

/* tr_open / tr_next / tr_close: format dispatch. */
#include "reader_int.h"
#include "watchline.h"

#include <stdlib.h>
#include <string.h>

static const tr_format *const formats[] = {
    &tr_fmt_arc, &tr_fmt_lirs, &tr_fmt_cache2k, &tr_fmt_csv, &tr_fmt_watchlog,
};

/* "auto": guess from the file name (the codec is still detected from content). */
static const char *guess_format(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, ".lis"))
        return "arc";
    if (strstr(base, "cache2k"))
        return "cache2k";
    if (strstr(base, "lirs"))
        return "lirs";
    if (strstr(base, ".csv"))
        return "csv";
    if (strstr(base, "watch"))
        return "watchlog";
    return NULL;
}

tr_reader *tr_open(const char *path, const char *format, const char **err)
{
    const char *dummy;
    if (!err)
        err = &dummy;
    if (!path) {
        *err = "no path";
        return NULL;
    }
    if (!format || strcmp(format, "auto") == 0) {
        format = guess_format(path);
        if (!format) {
            *err = "cannot guess the trace format from the file name; give one";
            return NULL;
        }
    }
    const tr_format *f = NULL;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i]->name, format) == 0)
            f = formats[i];
    if (!f) {
        *err = "unknown trace format (arc, lirs, cache2k, csv, watchlog)";
        return NULL;
    }
    tr_reader *r = calloc(1, sizeof *r);
    if (!r) {
        *err = "out of memory";
        return NULL;
    }
    r->fmt = f;
    r->in = tr_input_open(path, err);
    if (!r->in) {
        free(r);
        return NULL;
    }
    if (f->init && f->init(r) < 0) {
        *err = r->err ? r->err : "format init failed";
        tr_close(r);
        return NULL;
    }
    return r;
}

int tr_next(tr_reader *r, tr_request *out)
{
    if (r->err)
        return -1;
    int rc = r->fmt->next(r, out);
    if (rc == 1)
        r->requests++;
    return rc;
}

const char *tr_error(const tr_reader *r) { return r->err ? r->err : "no error"; }
uint64_t tr_skipped(const tr_reader *r) { return r->skipped; }

uint64_t tr_stream_skipped(const tr_reader *r)
{
    return r->wn ? wn_get_stats(r->wn)->stream_skipped : 0;
}

void tr_close(tr_reader *r)
{
    if (!r)
        return;
    if (r->fmt && r->fmt->fini)
        r->fmt->fini(r);
    tr_input_close(r->in);
    free(r);
}

int tr_input_failed(tr_reader *r)
{
    r->err = tr_input_error(r->in);
    return -1;
}

const struct wn_stats *tr_watchlog_stats(const tr_reader *r)
{
    return r->wn ? wn_get_stats(r->wn) : NULL;
}

/* Internal: the reader object shared by the format files. */
#ifndef TR_READER_INT_H
#define TR_READER_INT_H

#include "tracereader.h"
#include "input.h"

typedef struct tr_format {
    const char *name;
    int (*init)(tr_reader *r);            /* may be NULL */
    int (*next)(tr_reader *r, tr_request *out);
    void (*fini)(tr_reader *r);           /* may be NULL */
} tr_format;

struct tr_reader {
    tr_input *in;
    const tr_format *fmt;
    const char *err;
    uint64_t skipped;
    uint64_t requests;
    /* arc: the rest of a multi-block request */
    int64_t arc_next;
    int64_t arc_left;
    /* cache2k: decompressed bytes not yet consumed */
    unsigned char bbuf[64 * 1024];
    size_t bpos, blen;
    /* csv: header handling */
    int csv_line;
    /* watchlog */
    struct wn_norm *wn;
    int wl_eof;
};

extern const tr_format tr_fmt_arc, tr_fmt_lirs, tr_fmt_cache2k, tr_fmt_csv, tr_fmt_watchlog;

/* Sets r->err from the input layer and returns -1. */
int tr_input_failed(tr_reader *r);

#endif

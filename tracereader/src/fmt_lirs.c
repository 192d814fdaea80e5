/* LIRS traces: one integer key per line; a line `*` is a marker and is skipped silently. */
#include "reader_int.h"
#include "hashint.h"

#include <string.h>

static int lirs_next(tr_reader *r, tr_request *out)
{
    for (;;) {
        const char *line;
        size_t len;
        int rc = tr_input_line(r->in, &line, &len);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return tr_input_failed(r);
        if (rc == 2) {
            r->skipped++;
            continue;
        }
        size_t a = 0, b = len;
        while (a < b && (line[a] == ' ' || line[a] == '\t'))
            a++;
        while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t'))
            b--;
        if (a == b || (b - a == 1 && line[a] == '*'))
            continue;
        int64_t k;
        if (tr_parse_i64(line + a, b - a, &k) < 0) {
            r->skipped++;
            continue;
        }
        memset(out, 0, sizeof *out);
        out->key = tr_hash_int(k);
        out->op = TR_GET;
        out->clsid = -1;
        out->ttl = -1;
        return 1;
    }
}

const tr_format tr_fmt_lirs = {"lirs", NULL, lirs_next, NULL};

/* ARC .lis traces: `start_block n_blocks ignore req_no`; one request touches n blocks. */
#include "reader_int.h"
#include "hashint.h"

#include <string.h>

static void fill(tr_request *out, int64_t block)
{
    memset(out, 0, sizeof *out);
    out->key = tr_hash_int(block);
    out->op = TR_GET;
    out->clsid = -1;
    out->ttl = -1;
}

static int arc_next(tr_reader *r, tr_request *out)
{
    for (;;) {
        if (r->arc_left > 0) {
            fill(out, r->arc_next++);
            r->arc_left--;
            return 1;
        }
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
        /* Split on blanks; need at least 2 fields. */
        const char *f[4];
        size_t fl[4];
        int nf = 0;
        size_t i = 0;
        while (i < len && nf < 4) {
            while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
            if (i == len)
                break;
            size_t j = i;
            while (j < len && line[j] != ' ' && line[j] != '\t')
                j++;
            f[nf] = line + i;
            fl[nf++] = j - i;
            i = j;
        }
        if (nf == 0)
            continue; /* blank line */
        int64_t start, n;
        if (nf < 2 || tr_parse_i64(f[0], fl[0], &start) < 0 ||
            tr_parse_i64(f[1], fl[1], &n) < 0 || n < 1 || n > (1 << 24) || start < 0 ||
            start > INT64_MAX - n) {
            r->skipped++;
            continue;
        }
        r->arc_next = start;
        r->arc_left = n;
    }
}

const tr_format tr_fmt_arc = {"arc", NULL, arc_next, NULL};

#include "keyprefix.h"

#include <stdio.h>
#include <string.h>

int hc_prefix_rule_init(hc_prefix_rule *r, char delim, int depth, const char *regex, char *err,
                        size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->delim = delim;
    r->depth = depth;
    if (regex && *regex) {
        int rc = regcomp(&r->re, regex, REG_EXTENDED);
        if (rc != 0) {
            char m[128];
            regerror(rc, &r->re, m, sizeof m);
            snprintf(err, errlen, "bad prefix regex: %s", m);
            return -1;
        }
        r->use_regex = 1;
        r->groups = (int)r->re.re_nsub;
        return 0;
    }
    if (depth < 1 || depth > HC_PREFIX_MAX_DEPTH) {
        snprintf(err, errlen, "prefix depth must be 1..%d", HC_PREFIX_MAX_DEPTH);
        return -1;
    }
    if (delim == 0) {
        snprintf(err, errlen, "prefix delimiter must be one character");
        return -1;
    }
    return 0;
}

void hc_prefix_rule_free(hc_prefix_rule *r)
{
    if (r->use_regex)
        regfree(&r->re);
    r->use_regex = 0;
}

int hc_printable(const unsigned char *s, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        int esc = c <= 0x20 || c >= 0x7f || c == '%' || c == '"' || c == '\\';
        size_t need = esc ? 3 : 1;
        if (o + need > cap - 1) {
            out[o] = 0;
            return -(int)o;
        }
        if (esc) {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return (int)o;
}

int hc_prefix_span(const hc_prefix_rule *r, const unsigned char *key, size_t len, size_t *start,
                   size_t *end)
{
    *start = *end = 0;
    if (r->use_regex) {
        char buf[256];
        if (len >= sizeof buf || memchr(key, 0, len))
            return 0; /* regexec needs a C string: binary keys have no prefix by regex */
        memcpy(buf, key, len);
        buf[len] = 0;
        regmatch_t m[2];
        if (regexec(&r->re, buf, 2, m, 0) != 0)
            return 0;
        int g = r->groups >= 1 && m[1].rm_so >= 0 ? 1 : 0;
        *start = (size_t)m[g].rm_so;
        *end = (size_t)m[g].rm_eo;
    } else {
        /* end at the depth-th delimiter, or at the last one if there are fewer */
        int seen = 0;
        for (size_t i = 0; i < len; i++)
            if (key[i] == (unsigned char)r->delim) {
                *end = i;
                if (++seen == r->depth)
                    break;
            }
        if (seen == 0)
            return 0;
    }
    return *end > *start;
}

int hc_prefix_of(const hc_prefix_rule *r, const unsigned char *key, size_t len, char *out)
{
    size_t start, end;
    if (!hc_prefix_span(r, key, len, &start, &end)) {
        out[0] = 0;
        return 0;
    }
    return hc_printable(key + start, end - start, out, HC_PREFIX_MAX + 1);
}

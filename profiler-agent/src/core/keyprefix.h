/*
 * keyprefix: which group ("prefix") a memcached key belongs to, by a configurable rule:
 *   - delimiter and depth (default ':' and 1): the first `depth` delimiter-separated fields,
 *     never the last field (the id): "user:profile:42" -> "user" (depth 1), "user:profile"
 *     (depth 2); "user:42" at depth 2 -> "user"; a key without the delimiter has no prefix;
 *   - or a POSIX extended regex: the first capture group if the pattern has one, else the
 *     whole match; no match -> no prefix.
 * Keys are binary-safe; the prefix is returned printable: bytes outside 0x21..0x7e and '%'
 * are written %XX (as memcached's watch stream writes keys), and cut at HC_PREFIX_MAX
 * characters (counted by the caller: the limit is part of the upload protocol).
 */
#ifndef HC_KEYPREFIX_H
#define HC_KEYPREFIX_H

#include <regex.h>
#include <stddef.h>

#define HC_PREFIX_MAX 64          /* characters of a prefix as reported */
#define HC_PREFIX_MAX_DEPTH 8

typedef struct hc_prefix_rule {
    char delim;
    int depth;
    int use_regex;
    int groups;                   /* capture groups in the regex */
    regex_t re;
} hc_prefix_rule;

/* regex may be NULL/empty (delimiter rule). Returns 0, or -1 with a message in err. */
int hc_prefix_rule_init(hc_prefix_rule *r, char delim, int depth, const char *regex, char *err,
                        size_t errlen);
void hc_prefix_rule_free(hc_prefix_rule *r);

/* The key's prefix, printable and NUL-terminated in out (HC_PREFIX_MAX + 1 bytes). Returns its
 * length, 0 when the key has no prefix (out = ""), or -(length) when it was cut to the limit. */
int hc_prefix_of(const hc_prefix_rule *r, const unsigned char *key, size_t len, char *out);
/* Where that prefix lies in the key, as raw bytes [*start, *end): 1, or 0 when it has none. */
int hc_prefix_span(const hc_prefix_rule *r, const unsigned char *key, size_t len, size_t *start,
                   size_t *end);

/* Printable form of any bytes (%XX escapes), cut at cap-1 characters; returns the length or
 * -(length) when cut. Used for prefixes and for hot keys sent in clear. */
int hc_printable(const unsigned char *s, size_t len, char *out, size_t cap);

#endif

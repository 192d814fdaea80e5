/* Small, strict number parsing shared by the text formats (strtoll needs NUL-terminated
 * input and silently accepts garbage suffixes; trace lines are neither). */
#include "hashint.h"

int tr_parse_i64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    while (len > i && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == len)
        return -1;
    uint64_t v = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return -1;
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

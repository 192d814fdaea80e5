/* Key hashing shared by every format and by the live agent: XXH3-64 of the key bytes. */
#include "tracereader.h"
#include "hashint.h"

#include <xxhash.h>

uint64_t tr_hash_key(const void *bytes, size_t len)
{
    return XXH3_64bits(bytes, len);
}

/* Integer keys hash from their canonical decimal text, so "42" in a csv, 42 in a lirs trace
 * and 42 in cache2k are the same key. */
uint64_t tr_hash_int(int64_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return XXH3_64bits(p, (size_t)(buf + sizeof buf - p));
}

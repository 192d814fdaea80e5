/* Internal helpers shared by the format readers. */
#ifndef TR_HASHINT_H
#define TR_HASHINT_H
#include <stdint.h>
#include <stddef.h>
uint64_t tr_hash_int(int64_t v);
/* Parse a decimal integer (optional sign, surrounding blanks allowed); 0 ok, -1 malformed. */
int tr_parse_i64(const char *s, size_t len, int64_t *out);
#endif

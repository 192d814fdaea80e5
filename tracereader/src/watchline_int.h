/* Internal: the two watch-line parsers behind wl_parse (watchline.c, watchline_fast.c). */
#ifndef WATCHLINE_INT_H
#define WATCHLINE_INT_H

#include "watchline.h"

/* Any line, fields in any order (the reference: every other version's shapes, odd input). */
int wl_parse_general(const char *line, size_t len, wl_line *out, unsigned char *keybuf);

/* Only the item lines memcached 1.6.x prints, in the order it prints their fields. 1: parsed,
 * *out is exactly what wl_parse_general gives; 0: not that shape, *out and keybuf are garbage
 * and the caller parses the line with wl_parse_general. */
int wl_parse_fast(const char *line, size_t len, wl_line *out, unsigned char *keybuf);

enum wl_status wl_status_of(const char *v, size_t n);

#endif

/* Small helpers of the live agent: clocks, ids, gzip, files. */
#ifndef AG_UTIL_H
#define AG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "trmix.h" /* tr_mix64, the shared hash finaliser */

int64_t ag_mono_us(void);                 /* CLOCK_MONOTONIC */
int64_t ag_wall_us(void);                 /* CLOCK_REALTIME */
/* "2026-11-22T12:00:00.123Z" (UTC, milliseconds) into buf (>= 32 bytes). */
void ag_iso8601(int64_t wall_us, char *buf, size_t cap);
/* Random UUIDv4 text (37 bytes incl. NUL) from getrandom. */
void ag_uuid4(char out[37]);
/* gzip-compress (RFC 1952) in into a malloc'd buffer. Returns 0 or -1. */
int ag_gzip(const void *in, size_t len, unsigned char **out, size_t *outlen);
/* Write a file atomically (tmp + fsync + rename). Returns 0 or -1 (errno set). */
int ag_write_atomic(const char *path, const void *data, size_t len);
/* The same replace-by-rename, fsync'ed only if `durable`: readers see the old or the new
 * content, but a crash may lose the new one. For state that can be rebuilt at start-up. */
int ag_write_replace(const char *path, const void *data, size_t len, int durable);
/* Read a whole file. Returns 0 or -1. */
int ag_read_file(const char *path, unsigned char **data, size_t *len);
/* mkdir -p. Returns 0 or -1. */
int ag_mkdirs(const char *path, int mode);
/* Sleep in small steps until *stop becomes non-zero or us elapsed. */
void ag_sleep_us(int64_t us, volatile int *stop);

#endif

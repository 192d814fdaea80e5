/*
 * Internal: byte and line input over plain, gzip, xz or zstd data (detected by magic bytes).
 * Not part of the public API; formats use it through tr_input_*.
 */
#ifndef TR_INPUT_H
#define TR_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tr_input tr_input;

enum tr_codec { TR_CODEC_PLAIN = 0, TR_CODEC_GZIP, TR_CODEC_XZ, TR_CODEC_ZSTD };

/* path "-" is stdin. Returns NULL and sets *err (static string) on failure. */
tr_input *tr_input_open(const char *path, const char **err);
enum tr_codec tr_input_codec(const tr_input *in);
/* Decompressed bytes: >0 count, 0 end of data, -1 error (tr_input_error). */
ssize_t tr_input_read(tr_input *in, void *buf, size_t n);
/*
 * Next line without its '\n' (a trailing '\r' is removed too); *line stays valid until the
 * next call. 1 = line, 0 = end, -1 = error, 2 = line longer than TR_MAX_LINE (consumed and
 * discarded; callers count it as skipped).
 */
#define TR_MAX_LINE (1u << 20)
int tr_input_line(tr_input *in, const char **line, size_t *len);
const char *tr_input_error(const tr_input *in);
void tr_input_close(tr_input *in);

#endif

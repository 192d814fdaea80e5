/*
 * Decompressing input. The codec is chosen from the first bytes of the data, never from the
 * file name, so a renamed or piped trace still reads. Every codec is streamed: a multi-GB
 * trace never has to fit in memory. Concatenated gzip members, xz streams and zstd frames
 * are all read to the end (pigz/pixz/zstd -T output and `cat a.gz b.gz` are legal inputs).
 */
#define _POSIX_C_SOURCE 200809L
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define RAW_CHUNK (128 * 1024)

struct tr_input {
    int fd;
    int own_fd;
    enum tr_codec codec;
    const char *err;
    int raw_eof;
    /* compressed (raw) bytes */
    unsigned char *raw;
    size_t raw_pos, raw_len;
    /* codec state */
    z_stream z;
    int z_ended;          /* a gzip member ended; a new one may follow */
    lzma_stream lz;
    ZSTD_DStream *zs;
    int zs_midframe;      /* zstd: inside a frame (EOF here means truncated) */
    int done;
    /* line buffer */
    char *lb;
    size_t lb_cap, lb_start, lb_end;
    int lb_eof;
};

static int fill_raw(tr_input *in)
{
    if (in->raw_pos < in->raw_len || in->raw_eof)
        return 0;
    for (;;) {
        ssize_t n = read(in->fd, in->raw, RAW_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            in->err = "read error";
            return -1;
        }
        in->raw_pos = 0;
        in->raw_len = (size_t)n;
        if (n == 0)
            in->raw_eof = 1;
        return 0;
    }
}

tr_input *tr_input_open(const char *path, const char **err)
{
    const char *dummy;
    if (!err)
        err = &dummy;
    tr_input *in = calloc(1, sizeof *in);
    if (!in || !(in->raw = malloc(RAW_CHUNK))) {
        free(in);
        *err = "out of memory";
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        in->fd = 0;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            *err = errno == ENOENT ? "file not found" : "cannot open file";
            free(in->raw);
            free(in);
            return NULL;
        }
        in->own_fd = 1;
    }
    /* Sniff: read until we have 6 bytes or EOF (pipes may deliver less per read). */
    while (in->raw_len < 6 && !in->raw_eof) {
        ssize_t n = read(in->fd, in->raw + in->raw_len, RAW_CHUNK - in->raw_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *err = "read error";
            tr_input_close(in);
            return NULL;
        }
        if (n == 0)
            in->raw_eof = 1;
        in->raw_len += (size_t)n;
    }
    const unsigned char *m = in->raw;
    size_t l = in->raw_len;
    if (l >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
        in->codec = TR_CODEC_GZIP;
        /* 16 + MAX_WBITS: gzip wrapper only. */
        if (inflateInit2(&in->z, 16 + MAX_WBITS) != Z_OK) {
            *err = "zlib init failed";
            tr_input_close(in);
            return NULL;
        }
    } else if (l >= 6 && memcmp(m, "\xfd" "7zXZ\0", 6) == 0) {
        in->codec = TR_CODEC_XZ;
        lzma_stream init = LZMA_STREAM_INIT;
        in->lz = init;
        if (lzma_stream_decoder(&in->lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
            in->codec = TR_CODEC_PLAIN;
            *err = "liblzma init failed";
            tr_input_close(in);
            return NULL;
        }
    } else if (l >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
        in->codec = TR_CODEC_ZSTD;
        in->zs = ZSTD_createDStream();
        if (!in->zs || ZSTD_isError(ZSTD_initDStream(in->zs))) {
            *err = "libzstd init failed";
            tr_input_close(in);
            return NULL;
        }
    } else {
        in->codec = TR_CODEC_PLAIN;
    }
    return in;
}

enum tr_codec tr_input_codec(const tr_input *in) { return in->codec; }
const char *tr_input_error(const tr_input *in) { return in->err ? in->err : "no error"; }

static ssize_t read_plain(tr_input *in, unsigned char *out, size_t n)
{
    if (fill_raw(in) < 0)
        return -1;
    size_t avail = in->raw_len - in->raw_pos;
    if (avail == 0)
        return 0;
    if (avail > n)
        avail = n;
    memcpy(out, in->raw + in->raw_pos, avail);
    in->raw_pos += avail;
    return (ssize_t)avail;
}

static ssize_t read_gzip(tr_input *in, unsigned char *out, size_t n)
{
    in->z.next_out = out;
    in->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
    while (in->z.avail_out > 0) {
        if (fill_raw(in) < 0)
            return -1;
        if (in->raw_pos == in->raw_len) {
            if (in->z_ended)
                break; /* clean end after a complete member */
            in->err = "truncated gzip data";
            return -1;
        }
        if (in->z_ended) {
            /* Another member follows the one that ended. */
            if (inflateReset(&in->z) != Z_OK) {
                in->err = "zlib reset failed";
                return -1;
            }
            in->z_ended = 0;
        }
        in->z.next_in = in->raw + in->raw_pos;
        in->z.avail_in = (uInt)(in->raw_len - in->raw_pos);
        int rc = inflate(&in->z, Z_NO_FLUSH);
        in->raw_pos = in->raw_len - in->z.avail_in;
        if (rc == Z_STREAM_END) {
            in->z_ended = 1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            in->err = "corrupt gzip data";
            return -1;
        }
        if (in->z.avail_out < n)
            break; /* return what we have rather than blocking on more input */
    }
    return (ssize_t)(n - in->z.avail_out);
}

static ssize_t read_xz(tr_input *in, unsigned char *out, size_t n)
{
    if (in->done)
        return 0;
    in->lz.next_out = out;
    in->lz.avail_out = n;
    while (in->lz.avail_out == n) {
        if (fill_raw(in) < 0)
            return -1;
        in->lz.next_in = in->raw + in->raw_pos;
        in->lz.avail_in = in->raw_len - in->raw_pos;
        lzma_ret rc = lzma_code(&in->lz, in->raw_eof ? LZMA_FINISH : LZMA_RUN);
        in->raw_pos = in->raw_len - in->lz.avail_in;
        if (rc == LZMA_STREAM_END) {
            in->done = 1;
            break;
        }
        if (rc != LZMA_OK) {
            in->err = rc == LZMA_BUF_ERROR ? "truncated xz data" : "corrupt xz data";
            return -1;
        }
    }
    return (ssize_t)(n - in->lz.avail_out);
}

static ssize_t read_zstd(tr_input *in, unsigned char *out, size_t n)
{
    ZSTD_outBuffer ob = {out, n, 0};
    while (ob.pos == 0) {
        if (fill_raw(in) < 0)
            return -1;
        if (in->raw_pos == in->raw_len) {
            if (in->zs_midframe) {
                in->err = "truncated zstd data";
                return -1;
            }
            return 0;
        }
        ZSTD_inBuffer ib = {in->raw, in->raw_len, in->raw_pos};
        size_t rc = ZSTD_decompressStream(in->zs, &ob, &ib);
        in->raw_pos = ib.pos;
        if (ZSTD_isError(rc)) {
            in->err = "corrupt zstd data";
            return -1;
        }
        /* rc == 0: a frame is complete and fully flushed. */
        in->zs_midframe = rc != 0;
    }
    return (ssize_t)ob.pos;
}

ssize_t tr_input_read(tr_input *in, void *buf, size_t n)
{
    if (n == 0)
        return 0;
    switch (in->codec) {
    case TR_CODEC_GZIP: return read_gzip(in, buf, n);
    case TR_CODEC_XZ: return read_xz(in, buf, n);
    case TR_CODEC_ZSTD: return read_zstd(in, buf, n);
    default: return read_plain(in, buf, n);
    }
}

int tr_input_line(tr_input *in, const char **line, size_t *len)
{
    int too_long = 0;
    for (;;) {
        char *s = in->lb ? in->lb + in->lb_start : NULL; /* no buffer before the first read */
        size_t have = in->lb_end - in->lb_start;
        char *nl = have ? memchr(s, '\n', have) : NULL;
        if (nl || (in->lb_eof && have > 0)) {
            size_t l = nl ? (size_t)(nl - s) : have;
            in->lb_start += nl ? l + 1 : l;
            if (too_long)
                return 2;
            if (l > 0 && s[l - 1] == '\r')
                l--;
            *line = s;
            *len = l;
            return 1;
        }
        if (in->lb_eof)
            return too_long ? 2 : 0;
        /* Need more: compact, grow up to the cap, or discard an overlong line. */
        if (in->lb_start > 0) {
            memmove(in->lb, s, have);
            in->lb_start = 0;
            in->lb_end = have;
        }
        if (in->lb_end == in->lb_cap) {
            if (in->lb_cap >= TR_MAX_LINE) {
                too_long = 1;
                in->lb_end = 0; /* drop what we have of this line, keep reading to its end */
            } else {
                size_t nc = in->lb_cap ? in->lb_cap * 2 : 64 * 1024;
                char *nb = realloc(in->lb, nc);
                if (!nb) {
                    in->err = "out of memory";
                    return -1;
                }
                in->lb = nb;
                in->lb_cap = nc;
            }
        }
        ssize_t r = tr_input_read(in, in->lb + in->lb_end, in->lb_cap - in->lb_end);
        if (r < 0)
            return -1;
        if (r == 0)
            in->lb_eof = 1;
        in->lb_end += (size_t)r;
    }
}

void tr_input_close(tr_input *in)
{
    if (!in)
        return;
    if (in->codec == TR_CODEC_GZIP)
        inflateEnd(&in->z);
    else if (in->codec == TR_CODEC_XZ)
        lzma_end(&in->lz);
    else if (in->codec == TR_CODEC_ZSTD)
        ZSTD_freeDStream(in->zs);
    if (in->own_fd)
        close(in->fd);
    free(in->raw);
    free(in->lb);
    free(in);
}

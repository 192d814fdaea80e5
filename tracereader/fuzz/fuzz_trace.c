/*
 * libFuzzer target: the trace readers (tr_open / tr_next / tr_close) over every format and
 * codec, as `simulate` and the offline tools drive them. The first byte picks the format
 * (arc, lirs, cache2k, csv, watchlog); the rest is the file, handed over as a memfd so the
 * codec detection (plain, gzip, xz, zstd by magic bytes) and the streamed decompression run
 * exactly as on a real file. Every request that comes out must carry one of the six ops; an
 * error must come with its message; the reader must stop by itself.
 *   make -C tracereader fuzz-trace [FUZZ_SECONDS=60]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracereader.h"

static const char *const formats[] = {"arc", "lirs", "cache2k", "csv", "watchlog"};
/* A valid compressed trace may hold far more requests than a fuzz run wants to read. */
#define MAX_REQUESTS (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *format = formats[data[0] % (sizeof formats / sizeof formats[0])];
    int fd = memfd_create("trace", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t off = 1;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) {
            close(fd);
            return 0;
        }
        off += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    const char *err = NULL;
    tr_reader *r = tr_open(path, format, &err);
    if (!r) {
        if (!err || !*err)
            abort();
        close(fd);
        return 0;
    }
    tr_request q;
    int rc = 0;
    unsigned n = 0;
    while (n < MAX_REQUESTS && (rc = tr_next(r, &q)) == 1) {
        if (q.op > TR_EVICT || q.clsid < -1)
            abort();
        n++;
    }
    if (n < MAX_REQUESTS && rc == -1) {
        const char *e = tr_error(r);
        if (!e || !*e)
            abort();
    }
    (void)tr_skipped(r);
    tr_close(r);
    close(fd);
    return 0;
}

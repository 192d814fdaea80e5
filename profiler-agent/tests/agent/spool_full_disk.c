/*
 * Driver for test_spool_full_disk.py: fills a spool directory on a small file system (the test
 * mounts it) with incompressible entries far past its space, the oldest entry held in flight
 * as the uploader holds it, then prints what is left and the counters.
 *   spool_full_disk DIR ENTRIES ENTRY_BYTES
 * Output: one "put <i> <rc>" line per entry, "left <name>" per entry on disk, then
 * "counts pending=<n> dropped=<n> inflight=<name>".
 */
#include "agent/spool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int entries = atoi(argv[2]);
    size_t bytes = (size_t)atol(argv[3]);
    static ag_spool s;
    if (ag_spool_open(&s, argv[1], (uint64_t)1 << 40, 1000000) != 0)
        return 3;
    unsigned char *data = malloc(bytes);
    if (!data)
        return 4;
    uint64_t x = 88172645463325252ull;
    char inflight[256] = "";
    for (int i = 0; i < entries; i++) {
        for (size_t j = 0; j < bytes; j++) { /* xorshift: nothing compresses or dedups */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data[j] = (unsigned char)x;
        }
        char id[32];
        snprintf(id, sizeof id, "id%04d", i);
        int rc = ag_spool_put(&s, ag_spool_next_seq(&s), "snapshot", id, data, bytes);
        printf("put %d %d\n", i, rc);
        if (i == 0 && ag_spool_oldest(&s, inflight, sizeof inflight) != 1)
            return 5;
    }
    size_t n = 0;
    char name[256];
    /* list what is left, oldest first, by taking entries as the uploader does */
    ag_spool_release(&s);
    while (ag_spool_oldest(&s, name, sizeof name) && n++ < (size_t)entries) {
        printf("left %s\n", name);
        ag_spool_done(&s, name);
    }
    uint64_t pend, pbytes, drop, rej, sent;
    ag_spool_counts(&s, &pend, &pbytes, &drop, &rej, &sent);
    printf("counts pending=%llu dropped=%llu sent=%llu inflight=%s\n", (unsigned long long)pend,
           (unsigned long long)drop, (unsigned long long)sent, inflight);
    free(data);
    ag_spool_close(&s);
    return 0;
}

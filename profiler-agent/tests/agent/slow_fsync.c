/*
 * LD_PRELOAD shim for test_slow_disk.py: a disk whose fsync does not finish. While the file
 * named by HC_FSYNC_GATE exists, every fsync/fdatasync of the process waits (polling every
 * 10 ms); the first one to wait creates "<gate>.entered" so the test knows a write is stuck.
 * Removing the gate lets them all complete (then the real call runs). Writes and renames are
 * untouched: only the flush a busy disk makes slow (80 s seen under two `make test` runs).
 * Built by the test with `cc -shared -fPIC`; not part of the agent.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void wait_gate(void)
{
    const char *g = getenv("HC_FSYNC_GATE");
    if (!g || access(g, F_OK) != 0)
        return;
    char entered[4096];
    snprintf(entered, sizeof entered, "%s.entered", g);
    int fd = open(entered, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    struct timespec ts = {0, 10 * 1000 * 1000};
    while (access(g, F_OK) == 0)
        nanosleep(&ts, NULL);
}

int fsync(int fd)
{
    static int (*real)(int);
    if (!real)
        real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    wait_gate();
    return real(fd);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    if (!real)
        real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    wait_gate();
    return real(fd);
}

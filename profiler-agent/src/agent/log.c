#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "log.h"
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int min_level = AG_LOG_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void ag_log_set_level(int level) { min_level = level; }

int ag_log_parse_level(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void ag_log(int level, const char *msg, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    if (level < min_level)
        return;
    char ts[40];
    ag_iso8601(ag_wall_us(), ts, sizeof ts);
    char kv[1024] = "";
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(kv, sizeof kv, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_lock(&log_mu);
    fprintf(stderr, "ts=%s level=%s msg=%s%s%s\n", ts, names[level], msg, *kv ? " " : "", kv);
    fflush(stderr);
    pthread_mutex_unlock(&log_mu);
}

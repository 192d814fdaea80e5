/* Uploader thread: sends the spool in order over HTTPS (libcurl), one entry at a time. */
#ifndef AG_UPLOAD_H
#define AG_UPLOAD_H

#include <pthread.h>
#include <stdint.h>

#include "spool.h"

typedef struct ag_uploader {
    pthread_t th;
    ag_spool *spool;
    char base_url[512];
    char key_file[512];
    char ca_file[512];
    double timeout_s, backoff_max_s;
    volatile int stop;            /* leave now */
    volatile int draining;        /* send what is queued, then leave */
    volatile int wake;            /* cuts a backoff sleep short when draining starts */
    int64_t drain_deadline_us;    /* monotonic */
    uint64_t attempts, failures;
    int last_status;
} ag_uploader;

int ag_uploader_start(ag_uploader *u, ag_spool *s, const char *base_url, const char *key_file,
                      const char *ca_file, double timeout_s, double backoff_max_s);
/* Drain the queue for at most timeout_s, then stop. Returns entries left unsent. */
uint64_t ag_uploader_drain_and_stop(ag_uploader *u, double timeout_s);

#endif

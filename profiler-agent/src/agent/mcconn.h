/* Connections to memcached: TCP host:port (IPv4/IPv6 names) or a unix socket path. */
#ifndef AG_MCCONN_H
#define AG_MCCONN_H

#include <stddef.h>
#include <stdint.h>

/* Returns a connected, blocking socket fd with SO_RCVTIMEO/SO_SNDTIMEO of timeout_ms, or -1
 * (errbuf filled). */
int mc_connect(const char *addr, int timeout_ms, char *errbuf, size_t errcap);
/* Send all bytes. 0 or -1. */
int mc_send_all(int fd, const void *buf, size_t len);

/* Buffered line reader over a socket (for request/response commands, not the watch). */
typedef struct mc_lines {
    int fd;
    char buf[65536];
    size_t start, end;
} mc_lines;
void mc_lines_init(mc_lines *l, int fd);
/* Next line without CRLF into *line (NUL-terminated, valid until next call). 1 ok, 0 EOF,
 * -1 error/timeout. */
int mc_lines_next(mc_lines *l, char **line, size_t *len);

#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mcconn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t sl, int timeout_ms)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, sa, sl);
    if (rc < 0 && errno != EINPROGRESS)
        return -1;
    if (rc < 0) {
        struct pollfd p = {fd, POLLOUT, 0};
        int n;
        do
            n = poll(&p, 1, timeout_ms);
        while (n < 0 && errno == EINTR);
        if (n <= 0) {
            errno = n == 0 ? ETIMEDOUT : errno;
            return -1;
        }
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err) {
            errno = err;
            return -1;
        }
    }
    fcntl(fd, F_SETFL, fl);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return 0;
}

int mc_connect(const char *addr, int timeout_ms, char *errbuf, size_t errcap)
{
    if (addr[0] == '/') {
        struct sockaddr_un su;
        memset(&su, 0, sizeof su);
        su.sun_family = AF_UNIX;
        if (strlen(addr) >= sizeof su.sun_path) {
            snprintf(errbuf, errcap, "socket path too long");
            return -1;
        }
        strcpy(su.sun_path, addr);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect_timeout(fd, (struct sockaddr *)&su, sizeof su, timeout_ms) < 0) {
            snprintf(errbuf, errcap, "%s", strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        return fd;
    }
    char host[256], port[16];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || strlen(colon + 1) >= sizeof port ||
        (size_t)(colon - addr) >= sizeof host) {
        snprintf(errbuf, errcap, "address must be host:port or /path/to/socket");
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    strcpy(port, colon + 1);
    /* [v6]:port */
    char *h = host;
    if (h[0] == '[' && h[strlen(h) - 1] == ']') {
        h[strlen(h) - 1] = 0;
        h++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(h, port, &hints, &res);
    if (gai != 0) {
        snprintf(errbuf, errcap, "resolve %s: %s", h, gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms) == 0)
            break;
        snprintf(errbuf, errcap, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int mc_send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void mc_lines_init(mc_lines *l, int fd)
{
    l->fd = fd;
    l->start = l->end = 0;
}

int mc_lines_next(mc_lines *l, char **line, size_t *len)
{
    for (;;) {
        char *s = l->buf + l->start;
        size_t have = l->end - l->start;
        char *nl = have ? memchr(s, '\n', have) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - s);
            l->start += n + 1;
            if (n > 0 && s[n - 1] == '\r')
                n--;
            s[n] = 0;
            *line = s;
            *len = n;
            return 1;
        }
        if (l->start > 0) {
            memmove(l->buf, s, have);
            l->start = 0;
            l->end = have;
        }
        if (l->end == sizeof l->buf)
            return -1; /* a line longer than 64 KiB: not memcached */
        ssize_t r = recv(l->fd, l->buf + l->end, sizeof l->buf - l->end, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        l->end += (size_t)r;
    }
}

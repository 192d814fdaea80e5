/* Structured logs: one logfmt line per event on stderr (journald keeps them as is). */
#ifndef AG_LOG_H
#define AG_LOG_H

enum { AG_LOG_DEBUG = 0, AG_LOG_INFO, AG_LOG_WARN, AG_LOG_ERROR };

void ag_log_set_level(int level);
int ag_log_parse_level(const char *s); /* -1 if unknown */
/* msg is a short fixed event name; fmt adds `key=value` pairs (values without spaces, or
 * quoted by the caller). */
void ag_log(int level, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

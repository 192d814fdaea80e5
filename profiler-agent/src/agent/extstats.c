#include "extstats.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int mc_ext_stats_apply(mc_ext_stats *e, const char *name, const char *value)
{
    static const struct { const char *n; size_t off; } tab[] = {
#define F(n, x) {n, offsetof(mc_ext_stats, x)}
        F("get_extstore", get_extstore), F("get_aborted_extstore", get_aborted_extstore),
        F("get_oom_extstore", get_oom_extstore), F("recache_from_extstore", recache_from_extstore),
        F("miss_from_extstore", miss_from_extstore), F("badcrc_from_extstore", badcrc_from_extstore),
        F("extstore_compact_lost", compact_lost), F("extstore_compact_rescues", compact_rescues),
        F("extstore_compact_skipped", compact_skipped), F("extstore_page_allocs", page_allocs),
        F("extstore_page_evictions", page_evictions), F("extstore_page_reclaims", page_reclaims),
        F("extstore_pages_free", pages_free), F("extstore_pages_used", pages_used),
        F("extstore_objects_evicted", objects_evicted), F("extstore_objects_read", objects_read),
        F("extstore_objects_written", objects_written), F("extstore_objects_used", objects_used),
        F("extstore_bytes_evicted", bytes_evicted), F("extstore_bytes_written", bytes_written),
        F("extstore_bytes_read", bytes_read), F("extstore_bytes_used", bytes_used),
        F("extstore_bytes_fragmented", bytes_fragmented),
        F("extstore_limit_maxbytes", limit_maxbytes), F("extstore_io_queue", io_queue),
#undef F
    };
    /* cheap reject: every name above has "ext" in it */
    if (!strstr(name, "ext"))
        return 0;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(tab[i].n, name)) {
            uint64_t v = strtoull(value, NULL, 10);
            *(uint64_t *)((char *)e + tab[i].off) = v;
            if (tab[i].off == offsetof(mc_ext_stats, limit_maxbytes))
                e->present = v > 0;
            return 1;
        }
    return 0;
}

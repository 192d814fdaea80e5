#include "overload.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *const shed_names[] = {"none", "trace", "trace,breakdown"};

void ag_overload_init(ag_overload *o, int enabled)
{
    memset(o, 0, sizeof *o);
    o->enabled = enabled;
    o->cpu_at_window = ag_self_cpu_seconds();
}

double ag_self_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Resident bytes now (/proc/self/statm) and at most so far (getrusage, KiB on Linux). */
static void self_rss(uint64_t *now, uint64_t *peak)
{
    *now = *peak = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size, res;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &res) == 2)
            *now = res * (uint64_t)sysconf(_SC_PAGESIZE);
        fclose(f);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        *peak = (uint64_t)ru.ru_maxrss * 1024;
}

int ag_overload_check(ag_overload *o, int64_t now_us, uint64_t ring_dropped)
{
    if (now_us < o->next_check_us)
        return -1;
    o->next_check_us = now_us + AG_SHED_CHECK_US;
    uint64_t d = ring_dropped - o->drops_at_check;
    o->drops_at_check = ring_dropped;
    o->over_checks = d > 0 ? o->over_checks + 1 : 0;
    if (!o->enabled || o->over_checks < AG_SHED_CHECKS || o->level >= AG_SHED_BREAKDOWN)
        return -1;
    o->over_checks = 0;
    o->level++;
    if (o->level > o->window_level)
        o->window_level = o->level;
    ag_log(AG_LOG_WARN, "agent_shedding",
           "level=%d shed=%s reason=ring_dropped dropped_last_check=%" PRIu64
           " action=\"the per-class curves keep every line; the shed work leaves the snapshots"
           " until the agent keeps up again\"",
           o->level, shed_names[o->level], d);
    return o->level;
}

static unsigned setting_kib(const mc_stats *s, const char *name)
{
    for (int i = 0; i < s->nsettings; i++)
        if (!strcmp(s->set_name[i], name))
            return (unsigned)(strtoull(s->set_value[i], NULL, 10) / 1024);
    return 0;
}

/* The change that helps for the source that lost most over the sustained stretch. */
static void advice(const mc_stats *s1, const char *src, char *out, size_t cap)
{
    if (!strcmp(src, "worker")) {
        unsigned k = setting_kib(s1, "worker_logbuf_size");
        snprintf(out, cap,
                 "memcached's per-worker log buffers overflowed (log_worker_dropped): start "
                 "memcached with -o worker_logbuf_size=%u (KiB, now %u), or watch fewer streams",
                 k ? k * 4 : 256, k);
    } else if (!strcmp(src, "watcher")) {
        unsigned k = setting_kib(s1, "watcher_logbuf_size");
        snprintf(out, cap,
                 "memcached skipped lines for the agent's watcher (log_watcher_skipped): start "
                 "memcached with -o watcher_logbuf_size=%u (KiB, now %u); if the agent's CPU "
                 "(diagnostics.agent_cost) is near a core, give it a core or sample",
                 k ? k * 4 : 1024, k);
    } else {
        snprintf(out, cap,
                 "the agent's own ring overflowed (loss.agent_dropped): it sheds trace chunks and "
                 "the breakdown (diagnostics.shed); if that is not enough, raise --ring-size, "
                 "give the agent a core (it needs two threads), or sample");
    }
}

int ag_overload_window(ag_overload *o, json_t *snap, const ag_loss *loss, double loss_ratio,
                       double loss_threshold, const mc_stats *s1, uint64_t lines)
{
    double cpu = ag_self_cpu_seconds(), dcpu = cpu - o->cpu_at_window;
    o->cpu_at_window = cpu;
    uint64_t rss, peak;
    self_rss(&rss, &peak);
    /* loss history: sustained = over the threshold in 2 of the last 3 windows */
    memmove(&o->loss_ratio[1], &o->loss_ratio[0], (AG_LOSS_HISTORY - 1) * sizeof o->loss_ratio[0]);
    memmove(&o->worker[1], &o->worker[0], (AG_LOSS_HISTORY - 1) * sizeof o->worker[0]);
    memmove(&o->watcher[1], &o->watcher[0], (AG_LOSS_HISTORY - 1) * sizeof o->watcher[0]);
    memmove(&o->agent[1], &o->agent[0], (AG_LOSS_HISTORY - 1) * sizeof o->agent[0]);
    uint64_t skipped = s1->has_watcher_skipped ? loss->watcher_skipped : loss->stream_skipped;
    o->loss_ratio[0] = loss_ratio;
    o->worker[0] = loss->worker_dropped;
    o->watcher[0] = skipped;
    o->agent[0] = loss->agent_dropped;
    if (o->nhist < AG_LOSS_HISTORY)
        o->nhist++;
    int over = 0;
    uint64_t w = 0, k = 0, a = 0;
    for (int i = 0; i < o->nhist; i++) {
        over += o->loss_ratio[i] > loss_threshold;
        w += o->worker[i], k += o->watcher[i], a += o->agent[i];
    }
    int sustained = over >= 2;
    const char *src = w + k + a == 0 ? "none" : w >= k && w >= a ? "worker" : k >= a ? "watcher" : "agent";
    char adv[400] = "";
    if (sustained) {
        advice(s1, src, adv, sizeof adv);
        ag_log(AG_LOG_WARN, "loss_sustained",
               "windows_over_threshold=%d/%d source=%s worker_dropped=%" PRIu64
               " watcher_skipped=%" PRIu64 " agent_dropped=%" PRIu64 " advice=\"%s\"",
               over, o->nhist, src, w, k, a, adv);
    }
    json_t *diag = snap ? json_object_get(snap, "diagnostics") : NULL;
    if (snap && !diag) {
        diag = json_object();
        json_object_set_new(snap, "diagnostics", diag);
    }
    if (diag) {
        json_object_set_new(diag, "agent_cost",
                            json_pack("{s:f,s:I,s:I,s:I,s:f}", "cpu_seconds", dcpu, "rss_bytes",
                                      (json_int_t)rss, "peak_rss_bytes", (json_int_t)peak,
                                      "lines", (json_int_t)lines, "cpu_us_per_line",
                                      lines ? dcpu / (double)lines * 1e6 : 0.0));
        json_t *ls = json_pack("{s:I,s:I,s:I,s:b,s:s}", "worker_dropped",
                               (json_int_t)loss->worker_dropped, "watcher_skipped",
                               (json_int_t)skipped, "agent_dropped", (json_int_t)loss->agent_dropped,
                               "sustained", sustained, "source", src);
        if (sustained)
            json_object_set_new(ls, "advice", json_string(adv));
        json_object_set_new(diag, "loss_sources", ls);
        json_object_set_new(diag, "shed",
                            json_pack("{s:b,s:i,s:b,s:b}", "enabled", o->enabled, "level",
                                      o->window_level, "trace", o->window_level >= AG_SHED_TRACE,
                                      "breakdown", o->window_level >= AG_SHED_BREAKDOWN));
    }
    /* a level comes back after quiet windows (the breakdown restarts from empty) */
    int changed = -1;
    o->quiet_windows = loss->agent_dropped == 0 ? o->quiet_windows + 1 : 0;
    if (o->level > 0 && o->quiet_windows >= AG_SHED_QUIET_WINDOWS) {
        o->level--;
        o->quiet_windows = 0;
        changed = o->level;
        ag_log(AG_LOG_INFO, "agent_shed_restored", "level=%d shed=%s", o->level,
               shed_names[o->level]);
    }
    o->window_level = o->level;
    return changed;
}

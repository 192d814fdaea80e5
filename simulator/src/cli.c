/*
 * hitcurve-sim: compare replacement policies on a captured trace.
 *   hitcurve-sim --policy NAME[,NAME...] --format arc|lirs|cache2k|csv|watchlog
 *                --sizes S1,S2,... [--unit items|bytes] [options] FILE|-
 * Prints one JSON object {"results": [...], "trace": {...}}. Fields are only ever added.
 */
#include "hcsim.h"
#include "trace_load.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_VERSION "0.1.0"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: hitcurve-sim --policy NAME[,NAME...]|all --format arc|lirs|cache2k|csv|watchlog\n"
        "                    --sizes S1,S2,... [--unit items|bytes] [options] FILE|-\n"
        "options:\n"
        "  --object-size N      bytes per object when the trace has no sizes (default 1024)\n"
        "  --slab               bytes mode: charge memcached chunk sizes (48 B header + size)\n"
        "  --policy-metadata    with --slab: add each policy's metadata bytes (NbQ -6, GD-Wheel +8)\n"
        "  --sample-rate R      miniature simulation: sample keys at rate R, simulate size*R\n"
        "  --salt N             salt of the sampling hash\n"
        "  --no-sample-adjust   report the raw sampled hit ratio (default: SHARDS_adj-corrected)\n"
        "  --presampled         the trace already is a key sample at --sample-rate R (e.g. the\n"
        "                       agent's): no second sampling; sizes and pages still scale by R\n"
        "  --param K=V          policy parameter, e.g. gclock.k=4 (repeatable; comma lists ok)\n"
        "  --warmup F           do not count the first fraction F of the requests\n"
        "  --no-fill            a GET miss does not insert the object\n"
        "  --exact-lru          also report the exact LRU curve (Mattson) as policy \"exact-lru\"\n"
        "  --threads N          worker threads (default: all CPUs)\n"
        "  --max-requests N     read at most N requests\n"
        "  --cost-file FILE     recomputation cost of each request, one number per line\n"
        "  --pretty             indent the JSON\n"
        "  --list-policies      print the policies and exit\n"
        "  --version            print the version and exit\n"
        "sizes accept suffixes k/M/G (x1000) and KiB/MiB/GiB (x1024).\n");
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v > 0))
        return -1;
    double mult = 1;
    if (*end) {
        if (!strcmp(end, "k") || !strcmp(end, "K")) mult = 1e3;
        else if (!strcmp(end, "M")) mult = 1e6;
        else if (!strcmp(end, "G")) mult = 1e9;
        else if (!strcmp(end, "KiB")) mult = 1024.0;
        else if (!strcmp(end, "MiB")) mult = 1048576.0;
        else if (!strcmp(end, "GiB")) mult = 1073741824.0;
        else return -1;
    }
    v *= mult;
    if (v < 1 || v > 1e18)
        return -1;
    *out = (uint64_t)llround(v);
    return 0;
}

/* split a comma list in place; returns count */
static int split(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            out[n++] = tok;
    return n;
}

int main(int argc, char **argv)
{
    enum { O_POLICY = 1, O_FORMAT, O_SIZES, O_UNIT, O_OBJSIZE, O_SLAB, O_META, O_RATE, O_SALT,
           O_PARAM, O_WARMUP, O_NOFILL, O_THREADS, O_MAXREQ, O_PRETTY, O_LIST, O_EXACT, O_HELP, O_COSTS, O_NOADJ, O_VERSION, O_PRESAMPLED };
    static const struct option opts[] = {
        {"policy", required_argument, 0, O_POLICY}, {"format", required_argument, 0, O_FORMAT},
        {"sizes", required_argument, 0, O_SIZES}, {"unit", required_argument, 0, O_UNIT},
        {"object-size", required_argument, 0, O_OBJSIZE}, {"slab", no_argument, 0, O_SLAB},
        {"policy-metadata", no_argument, 0, O_META},
        {"sample-rate", required_argument, 0, O_RATE}, {"salt", required_argument, 0, O_SALT},
        {"param", required_argument, 0, O_PARAM}, {"warmup", required_argument, 0, O_WARMUP},
        {"no-fill", no_argument, 0, O_NOFILL}, {"threads", required_argument, 0, O_THREADS},
        {"max-requests", required_argument, 0, O_MAXREQ}, {"pretty", no_argument, 0, O_PRETTY},
        {"list-policies", no_argument, 0, O_LIST}, {"exact-lru", no_argument, 0, O_EXACT},
        {"help", no_argument, 0, O_HELP}, {"cost-file", required_argument, 0, O_COSTS},
        {"no-sample-adjust", no_argument, 0, O_NOADJ}, {"version", no_argument, 0, O_VERSION},
        {"presampled", no_argument, 0, O_PRESAMPLED},
        {0, 0, 0, 0}};
    sim_config cfg;
    sim_config_default(&cfg);
    char *policy_arg = NULL, *sizes_arg = NULL;
    const char *format = NULL, *unit = "items";
    char params[4096] = "";
    int threads = 0, pretty = 0, exact = 0;
    uint64_t max_req = 0;
    const char *cost_file = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_VERSION: printf("hitcurve-sim %s\n", SIM_VERSION); return 0;
        case O_POLICY: policy_arg = optarg; break;
        case O_FORMAT: format = optarg; break;
        case O_SIZES: sizes_arg = optarg; break;
        case O_UNIT: unit = optarg; break;
        case O_OBJSIZE: {
            uint64_t v;
            if (parse_size(optarg, &v) < 0 || v > UINT32_MAX) {
                fprintf(stderr, "hitcurve-sim: bad --object-size '%s'\n", optarg);
                return 2;
            }
            cfg.default_size = (uint32_t)v;
            break;
        }
        case O_SLAB: cfg.slab = 1; break;
        case O_META: cfg.policy_metadata = 1; break;
        case O_RATE: {
            char *end;
            cfg.sample_rate = strtod(optarg, &end);
            if (*end || !(cfg.sample_rate > 0) || cfg.sample_rate > 1) {
                fprintf(stderr, "hitcurve-sim: --sample-rate must be in (0, 1]\n");
                return 2;
            }
            break;
        }
        case O_SALT: cfg.sample_salt = strtoull(optarg, NULL, 0); break;
        case O_PARAM:
            if (strlen(params) + strlen(optarg) + 2 >= sizeof params) {
                fprintf(stderr, "hitcurve-sim: too many --param\n");
                return 2;
            }
            if (*params)
                strcat(params, ",");
            strcat(params, optarg);
            break;
        case O_WARMUP: {
            char *end;
            cfg.warmup_fraction = strtod(optarg, &end);
            if (*end || cfg.warmup_fraction < 0 || cfg.warmup_fraction >= 1) {
                fprintf(stderr, "hitcurve-sim: --warmup must be in [0, 1)\n");
                return 2;
            }
            break;
        }
        case O_NOFILL: cfg.fill_on_miss = 0; break;
        case O_THREADS: threads = atoi(optarg); break;
        case O_MAXREQ: max_req = strtoull(optarg, NULL, 10); break;
        case O_PRETTY: pretty = 1; break;
        case O_EXACT: exact = 1; break;
        case O_COSTS: cost_file = optarg; break;
        case O_NOADJ: cfg.sample_adjust = 0; break;
        case O_PRESAMPLED: cfg.presampled = 1; break;
        case O_LIST:
            for (const char *const *p = sim_policy_names(); *p; p++)
                printf("%-10s %s\n", *p, sim_policy_describe(*p));
            return 0;
        case O_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!policy_arg || !format || !sizes_arg || optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    if (strcmp(unit, "items") && strcmp(unit, "bytes")) {
        fprintf(stderr, "hitcurve-sim: --unit must be items or bytes\n");
        return 2;
    }
    cfg.unit_bytes = !strcmp(unit, "bytes");
    if (cfg.slab && !cfg.unit_bytes) {
        fprintf(stderr, "hitcurve-sim: --slab needs --unit bytes\n");
        return 2;
    }
    cfg.params = params;

    char *pol[64];
    int np;
    static const char *all[64];
    if (!strcmp(policy_arg, "all")) {
        np = 0;
        for (const char *const *p = sim_policy_names(); *p && np < 64; p++)
            all[np++] = *p;
        for (int i = 0; i < np; i++)
            pol[i] = (char *)all[i];
    } else {
        np = split(policy_arg, pol, 64);
    }
    for (int i = 0; i < np; i++) {
        if (!sim_policy_describe(pol[i])) {
            fprintf(stderr, "hitcurve-sim: unknown policy '%s' (try --list-policies)\n", pol[i]);
            return 2;
        }
    }
    char *sz[1024];
    int ns = split(sizes_arg, sz, 1024);
    uint64_t sizes[1024];
    for (int i = 0; i < ns; i++) {
        if (parse_size(sz[i], &sizes[i]) < 0) {
            fprintf(stderr, "hitcurve-sim: bad size '%s'\n", sz[i]);
            return 2;
        }
    }
    if (np == 0 || ns == 0) {
        usage(stderr);
        return 2;
    }

    char err[512];
    sim_loaded tr;
    if (sim_load_trace(argv[optind], format, max_req, &tr, err, sizeof err) < 0) {
        fprintf(stderr, "hitcurve-sim: %s\n", err);
        return 1;
    }
    double *costs = NULL;
    if (cost_file) {
        FILE *f = fopen(cost_file, "r");
        if (!f) {
            fprintf(stderr, "hitcurve-sim: %s: %s\n", cost_file, strerror(errno));
            return 1;
        }
        costs = malloc((tr.t.n ? tr.t.n : 1) * sizeof *costs);
        size_t k = 0;
        char line[128];
        while (costs && fgets(line, sizeof line, f)) {
            char *end;
            double v = strtod(line, &end);
            while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
                end++;
            if (end == line || *end || !(v >= 0)) {
                fprintf(stderr, "hitcurve-sim: %s:%zu: not a cost: %s", cost_file, k + 1, line);
                return 1;
            }
            if (k == tr.t.n) {
                k++;
                break;
            }
            costs[k++] = v;
        }
        fclose(f);
        if (!costs || k != tr.t.n) {
            fprintf(stderr, "hitcurve-sim: %s has %s%zu costs for %zu requests\n", cost_file,
                    k > tr.t.n ? "more than " : "", k > tr.t.n ? tr.t.n : k, tr.t.n);
            return 1;
        }
        tr.t.costs = costs;
    }
    sim_result *res = calloc((size_t)np * ns, sizeof *res);
    if (!res || sim_simulate_many(&tr.t, (const char *const *)pol, np, sizes, ns, &cfg, threads,
                                 res, err, sizeof err) < 0) {
        fprintf(stderr, "hitcurve-sim: %s\n", res ? err : "out of memory");
        return 1;
    }

    json_t *root = json_object(), *arr = json_array();
    for (int i = 0; i < np * ns; i++) {
        sim_result *r = &res[i];
        json_t *o = json_object();
        json_object_set_new(o, "policy", json_string(r->policy));
        json_object_set_new(o, "size", json_integer((json_int_t)r->size));
        json_object_set_new(o, "hit_ratio", json_real(r->hit_ratio));
        json_object_set_new(o, "byte_hit_ratio", json_real(r->byte_hit_ratio));
        json_object_set_new(o, "requests", json_integer((json_int_t)r->requests));
        json_object_set_new(o, "seconds", json_real(r->seconds));
        json_object_set_new(o, "cpu_seconds", json_real(r->cpu_seconds));
        json_object_set_new(o, "unit", json_string(unit));
        json_object_set_new(o, "hits", json_integer((json_int_t)r->hits));
        json_object_set_new(o, "miss_cost_total", json_real(r->miss_cost_total));
        json_object_set_new(o, "miss_cost_p99", json_real(r->miss_cost_p99));
        json_object_set_new(o, "miss_cost_p99_misses", json_real(r->miss_cost_p99_misses));
        json_object_set_new(o, "evictions", json_integer((json_int_t)r->evictions));
        json_object_set_new(o, "sample_rate", json_real(r->sample_rate));
        json_object_set_new(o, "simulated_size", json_integer((json_int_t)r->sim_size));
        json_object_set_new(o, "hit_ratio_unadjusted", json_real(r->hit_ratio_raw));
        json_object_set_new(o, "byte_hit_ratio_unadjusted", json_real(r->byte_hit_ratio_raw));
        json_object_set_new(o, "expected_requests", json_real(r->expected_requests));
        json_array_append_new(arr, o);
    }
    if (exact) {
        uint64_t *hits = calloc((size_t)ns, sizeof *hits);
        int64_t gets = hits ? sim_exact_lru_hits(&tr.t, sizes, ns, hits) : -1;
        if (gets < 0) {
            fprintf(stderr, "hitcurve-sim: exact LRU failed\n");
            return 1;
        }
        for (int i = 0; i < ns; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "policy", json_string("exact-lru"));
            json_object_set_new(o, "size", json_integer((json_int_t)sizes[i]));
            json_object_set_new(o, "hit_ratio", json_real(gets ? (double)hits[i] / (double)gets : 0));
            json_object_set_new(o, "byte_hit_ratio", json_null());
            json_object_set_new(o, "requests", json_integer(gets));
            json_object_set_new(o, "seconds", json_real(0));
            json_object_set_new(o, "unit", json_string("items"));
            json_array_append_new(arr, o);
        }
        free(hits);
    }
    json_object_set_new(root, "results", arr);
    json_t *ti = json_object();
    json_object_set_new(ti, "path", json_string(argv[optind]));
    json_object_set_new(ti, "format", json_string(format));
    json_object_set_new(ti, "requests", json_integer((json_int_t)tr.t.n));
    json_object_set_new(ti, "skipped", json_integer((json_int_t)tr.skipped));
    json_object_set_new(ti, "ignored", json_integer((json_int_t)tr.ignored));
    json_object_set_new(ti, "load_seconds", json_real(tr.seconds));
    json_object_set_new(root, "trace", ti);
    char *out = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(10));
    if (!out) {
        fprintf(stderr, "hitcurve-sim: JSON encoding failed\n");
        return 1;
    }
    puts(out);
    free(out);
    json_decref(root);
    free(res);
    free(costs);
    sim_loaded_free(&tr);
    return 0;
}

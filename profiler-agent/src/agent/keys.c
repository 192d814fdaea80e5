#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "trmix.h"

int ag_keys_init(ag_keys *k, char delim, int depth, const char *regex, int clear, char *err,
                 size_t errlen)
{
    memset(k, 0, sizeof *k);
    if (hc_prefix_rule_init(&k->rule, delim, depth, regex, err, errlen) < 0)
        return -1;
    k->clear = clear;
    k->mask = 2 * AG_KEYS_MAX_PREFIXES - 1;
    k->hash = calloc(k->mask + 1, sizeof *k->hash);
    k->id = calloc(k->mask + 1, sizeof *k->id);
    k->name = calloc(AG_KEYS_MAX_PREFIXES, sizeof *k->name);
    k->clear_name = clear ? calloc(AG_KEYS_WANT, sizeof *k->clear_name) : NULL;
    pthread_mutex_init(&k->mu, NULL);
    if (!k->hash || !k->id || !k->name || (clear && !k->clear_name)) {
        snprintf(err, errlen, "out of memory");
        ag_keys_free(k);
        return -1;
    }
    k->n = 1; /* id 0 is "no prefix" */
    return 0;
}

void ag_keys_free(ag_keys *k)
{
    hc_prefix_rule_free(&k->rule);
    free(k->hash);
    free(k->id);
    free(k->name);
    free(k->clear_name);
    pthread_mutex_destroy(&k->mu);
    memset(k, 0, sizeof *k);
}

uint16_t ag_keys_line(ag_keys *k, uint64_t key_hash, const unsigned char *key, size_t len)
{
    if (k->clear) {
        for (uint32_t j = 0; j < AG_KEYS_PROBES; j++) {
            uint32_t w = (uint32_t)((key_hash + j) % AG_KEYS_WANT);
            if (atomic_load_explicit(&k->want[w], memory_order_relaxed) != key_hash)
                continue;
            if (k->got[w] != key_hash) { /* got[] is only written here, under mu */
                pthread_mutex_lock(&k->mu);
                hc_printable(key, len, k->clear_name[w], AG_HOT_KEY_MAX + 1);
                k->got[w] = key_hash;
                pthread_mutex_unlock(&k->mu);
            }
            break;
        }
    }
    size_t s, e;
    if (!hc_prefix_span(&k->rule, key, len, &s, &e))
        return AG_PFX_NONE;
    /* most lines repeat a recent prefix: look its raw bytes up first */
    ag_keys_memo *m = NULL;
    uint64_t w[2] = {0, 0};
    if (e - s <= sizeof w) {
        memcpy(w, key + s, e - s);
        m = &k->memo[tr_mix64(w[0] ^ tr_mix64(w[1] ^ (e - s))) & (AG_KEYS_MEMO - 1)];
        if (m->len == e - s && m->w[0] == w[0] && m->w[1] == w[1])
            return m->id;
    }
    char p[HC_PREFIX_MAX + 1];
    int n = hc_printable(key + s, e - s, p, sizeof p);
    if (n == 0)
        return AG_PFX_NONE;
    if (n < 0) {
        atomic_fetch_add_explicit(&k->cut, 1, memory_order_relaxed);
        n = -n;
        m = NULL; /* every cut line is counted: not remembered (16 raw bytes are never cut) */
    }
    uint64_t h = XXH3_64bits(p, (size_t)n) | 1;
    uint32_t i = (uint32_t)h & k->mask;
    while (k->hash[i] && k->hash[i] != h)
        i = (i + 1) & k->mask;
    if (k->hash[i]) {
        if (m)
            *m = (ag_keys_memo){{w[0], w[1]}, (uint16_t)(e - s), k->id[i]};
        return k->id[i];
    }
    if (k->n >= AG_KEYS_MAX_PREFIXES) {
        atomic_fetch_add_explicit(&k->overflow, 1, memory_order_relaxed);
        return AG_PFX_FULL;
    }
    pthread_mutex_lock(&k->mu);
    uint16_t id = (uint16_t)k->n++;
    memcpy(k->name[id], p, (size_t)n + 1);
    k->hash[i] = h;
    k->id[i] = id;
    pthread_mutex_unlock(&k->mu);
    if (m)
        *m = (ag_keys_memo){{w[0], w[1]}, (uint16_t)(e - s), id};
    return id;
}

void ag_keys_prefix_name(ag_keys *k, uint16_t id, char *out, size_t cap)
{
    if (id == AG_PFX_NONE) {
        snprintf(out, cap, "%s", "");
        return;
    }
    pthread_mutex_lock(&k->mu);
    if (id < k->n)
        snprintf(out, cap, "%s", k->name[id]);
    else
        snprintf(out, cap, "%s", "(unregistered)");
    pthread_mutex_unlock(&k->mu);
}

void ag_keys_want(ag_keys *k, const uint64_t *hashes, uint32_t n)
{
    if (!k->clear)
        return;
    /* rebuild the set; a key the reader misses meanwhile is captured on its next line */
    uint64_t next[AG_KEYS_WANT] = {0};
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < AG_KEYS_PROBES; j++) {
            uint32_t w = (uint32_t)((hashes[i] + j) % AG_KEYS_WANT);
            if (next[w] == 0 || next[w] == hashes[i]) {
                next[w] = hashes[i];
                break;
            }
        }
    for (uint32_t w = 0; w < AG_KEYS_WANT; w++)
        atomic_store_explicit(&k->want[w], next[w], memory_order_relaxed);
}

int ag_keys_clear_name(ag_keys *k, uint64_t key_hash, char *out, size_t cap)
{
    if (!k->clear)
        return 0;
    int ok = 0;
    pthread_mutex_lock(&k->mu);
    for (uint32_t j = 0; j < AG_KEYS_PROBES && !ok; j++) {
        uint32_t w = (uint32_t)((key_hash + j) % AG_KEYS_WANT);
        if (k->got[w] == key_hash) {
            snprintf(out, cap, "%s", k->clear_name[w]);
            ok = 1;
        }
    }
    pthread_mutex_unlock(&k->mu);
    return ok;
}

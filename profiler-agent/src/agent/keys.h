/*
 * Key-level work on the watch reader thread, where the decoded key bytes exist (the ring and
 * the normalised events carry only the key hash): the key's prefix by the configured rule
 * (core/keyprefix.h), registered as a small id that rides in the ring item, and, only with
 * --hot-keys-clear, the clear text of the keys the main thread asked for (its current hot
 * keys). Names are read by the main thread at snapshot time under a mutex; the reader never
 * waits for anything else.
 */
#ifndef AG_KEYS_H
#define AG_KEYS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/keyprefix.h"

#define AG_PFX_NONE 0             /* the key has no prefix by the rule */
#define AG_PFX_FULL 0xffff        /* more distinct prefixes than the registry holds */
#define AG_KEYS_MAX_PREFIXES 4096 /* registry bound (ids 1..4095) */
#define AG_KEYS_WANT 1024         /* clear-name slots (4 probes from the key hash) */
#define AG_KEYS_PROBES 4
#define AG_HOT_KEY_MAX 250        /* characters of a hot key sent in clear (protocol limit) */

#define AG_KEYS_MEMO 256          /* reader's memo of recent raw prefixes (<= 16 bytes) -> id */

/* A prefix's raw bytes (zero-padded) and its registered id; len 0 = empty. */
typedef struct ag_keys_memo {
    uint64_t w[2];
    uint16_t len, id;
} ag_keys_memo;

typedef struct ag_keys {
    hc_prefix_rule rule;
    int clear;                                /* --hot-keys-clear */
    /* prefix registry: written by the reader only; names also read by the main thread */
    uint64_t *hash;                           /* open addressing, 2x entries: hash of name */
    uint16_t *id;
    uint32_t mask, n;
    char (*name)[HC_PREFIX_MAX + 1];
    _Atomic uint64_t overflow, cut;           /* lines whose prefix had no id / was cut */
    /* Reader only. Ids are never taken back, so a remembered (bytes, id) pair stays true; it
     * skips the printable copy, the hash of the name and the registry probe (~110 of the
     * ~190 instructions a line of ag_keys_line). */
    ag_keys_memo memo[AG_KEYS_MEMO];
    /* clear names of wanted keys */
    _Atomic uint64_t want[AG_KEYS_WANT];      /* main -> reader: key hashes to capture */
    uint64_t got[AG_KEYS_WANT];               /* reader -> main, under mu */
    char (*clear_name)[AG_HOT_KEY_MAX + 1];
    pthread_mutex_t mu;
} ag_keys;

/* regex may be empty. Returns 0, or -1 with a message in err. */
int ag_keys_init(ag_keys *k, char delim, int depth, const char *regex, int clear, char *err,
                 size_t errlen);
void ag_keys_free(ag_keys *k);
/* Reader thread: the prefix id of a decoded key (AG_PFX_NONE, an id, or AG_PFX_FULL); also
 * captures the key's clear name if it is wanted. */
uint16_t ag_keys_line(ag_keys *k, uint64_t key_hash, const unsigned char *key, size_t len);
/* Any thread: the name of a prefix id ("" for none, "(unregistered)" past the bound). */
void ag_keys_prefix_name(ag_keys *k, uint16_t id, char *out, size_t cap);
/* Main thread: ask for the clear names of these keys (replaces the previous request). */
void ag_keys_want(ag_keys *k, const uint64_t *hashes, uint32_t n);
/* Main thread: the clear name of a key if captured (1), else 0. */
int ag_keys_clear_name(ag_keys *k, uint64_t key_hash, char *out, size_t cap);

#endif

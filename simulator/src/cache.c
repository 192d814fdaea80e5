/* Cache base: object pool, key index, default request flow, parameter lookup. */
#include "cache.h"
#include "table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t sim_obj_alloc(sim_cache *c, const sim_req *r)
{
    uint32_t i;
    if (c->free_head != SIM_NIL) {
        i = c->free_head;
        c->free_head = c->objs[i].next;
    } else {
        if (c->nused == c->nalloc) {
            uint32_t n = c->nalloc ? c->nalloc * 2 : 1024;
            sim_obj *o = realloc(c->objs, (size_t)n * sizeof *o);
            if (!o) {
                fprintf(stderr, "hcsim: out of memory growing the object pool\n");
                abort();
            }
            c->objs = o;
            c->nalloc = n;
        }
        i = c->nused++;
    }
    sim_obj *o = &c->objs[i];
    memset(o, 0, sizeof *o);
    o->key = r->key;
    o->size = r->size;
    o->charge = r->charge;
    o->cost = r->cost;
    o->cls = r->cls;
    o->prev = o->next = SIM_NIL;
    if (sim_table_put(&c->table, r->key, i) < 0) {
        fprintf(stderr, "hcsim: out of memory growing the key index\n");
        abort();
    }
    return i;
}

void sim_obj_release(sim_cache *c, uint32_t idx)
{
    sim_obj *o = &c->objs[idx];
    /* the key may already point at a newer object (NbQ lazy delete): only unindex ours */
    if (sim_table_get(&c->table, o->key) == idx)
        sim_table_remove(&c->table, o->key);
    o->next = c->free_head;
    o->key = 0;
    c->free_head = idx;
}

void sim_ghost_push(sim_cache *c, sim_list *l, uint32_t idx, uint8_t qid, uint64_t cap_bytes)
{
    c->objs[idx].flags |= SIM_F_GHOST;
    c->objs[idx].qid = qid;
    sim_list_push_head(c, l, idx);
    while (l->bytes > cap_bytes) {
        uint32_t g = l->tail;
        sim_list_unlink(c, l, g);
        sim_obj_release(c, g);
    }
}

uint32_t sim_find(const sim_cache *c, uint64_t key)
{
    return sim_table_get(&c->table, key);
}

void sim_table_del(sim_cache *c, uint64_t key)
{
    sim_table_remove(&c->table, key);
}

bool sim_get_default(sim_cache *c, const sim_req *r)
{
    uint32_t idx = sim_table_get(&c->table, r->key);
    if (idx != SIM_NIL) {
        c->ops->hit(c, idx, r);
        return true;
    }
    if (r->charge > c->capacity)
        return false;   /* can never fit: served from the backend, not cached */
    while (c->used + r->charge > c->capacity && c->nresident > 0)
        c->ops->evict(c, r);
    c->ops->insert(c, r);
    return false;
}

uint64_t sim_capacity_objects(const sim_cache *c)
{
    if (!c->cfg->unit_bytes)
        return c->capacity;
    uint64_t per = c->cfg->slab ? sim_slab_charge(c->cfg->default_size) : c->cfg->default_size;
    if (per == 0)
        per = 1;
    uint64_t n = c->capacity / per;
    return n ? n : 1;
}

/* Look up "<policy>.<key>=v" first, then "<key>=v"; params are short, so a linear scan. */
double sim_param(const sim_cache *c, const char *key, double dflt)
{
    const char *p = c->cfg->params;
    if (!p)
        return dflt;
    size_t plen = strlen(c->ops->name), klen = strlen(key);
    double found = dflt;
    int found_rank = 0;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *eq = strchr(p, '=');
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (!eq || eq > end) {
            p = end;
            continue;
        }
        size_t nlen = (size_t)(eq - p);
        int rank = 0;
        if (nlen == plen + 1 + klen && strncmp(p, c->ops->name, plen) == 0 && p[plen] == '.' &&
            strncmp(p + plen + 1, key, klen) == 0)
            rank = 2;
        else if (nlen == klen && strncmp(p, key, klen) == 0)
            rank = 1;
        if (rank > found_rank) {
            found = strtod(eq + 1, NULL);
            found_rank = rank;
        }
        p = end;
    }
    return found;
}

int sim_list_check(const sim_cache *c, const sim_list *l, const char *name, char *why, size_t n)
{
    uint64_t cnt = 0, bytes = 0;
    uint32_t prev = SIM_NIL;
    for (uint32_t i = l->head; i != SIM_NIL; i = c->objs[i].next) {
        if (c->objs[i].prev != prev) {
            snprintf(why, n, "%s: broken prev link at %u", name, i);
            return -1;
        }
        cnt++;
        bytes += c->objs[i].charge;
        prev = i;
        if (cnt > c->nused) {
            snprintf(why, n, "%s: cycle", name);
            return -1;
        }
    }
    if (prev != l->tail || cnt != l->count || bytes != l->bytes) {
        snprintf(why, n, "%s: count %llu/%llu bytes %llu/%llu tail ok %d", name, (unsigned long long)cnt,
                 (unsigned long long)l->count, (unsigned long long)bytes, (unsigned long long)l->bytes,
                 prev == l->tail);
        return -1;
    }
    return 0;
}

int sim_cache_verify(sim_cache *c, char *why, size_t n)
{
    /* every indexed object maps back to its key; residents add up to used/nresident */
    uint64_t units = 0, objs = 0;
    uint64_t nslots = c->table.direct ? c->table.direct_n : c->table.mask + 1;
    for (uint64_t s = 0; s < nslots; s++) {
        uint64_t key = c->table.direct ? s : c->table.slots[s].key;
        uint32_t idx = c->table.direct ? c->table.direct[s] : c->table.slots[s].idx;
        if (idx == SIM_NIL)
            continue;
        const sim_obj *o = &c->objs[idx];
        if (o->key != key) {
            snprintf(why, n, "index points at the wrong object");
            return -1;
        }
        if (!(o->flags & SIM_F_GHOST)) {
            units += o->charge;
            objs++;
        }
    }
    /* NbQ keeps lazily deleted nodes resident but unindexed; mcslru charges chunks */
    if (objs > c->nresident || units > c->used) {
        snprintf(why, n, "indexed residents %llu/%llu units exceed accounting %llu/%llu",
                 (unsigned long long)objs, (unsigned long long)units, (unsigned long long)c->nresident,
                 (unsigned long long)c->used);
        return -1;
    }
    if (strcmp(c->ops->name, "nbq-clock") != 0 && (objs != c->nresident || units != c->used)) {
        snprintf(why, n, "residents %llu (%llu units) vs accounting %llu (%llu units)", (unsigned long long)objs,
                 (unsigned long long)units, (unsigned long long)c->nresident, (unsigned long long)c->used);
        return -1;
    }
    return c->ops->verify ? c->ops->verify(c, why, n) : 0;
}

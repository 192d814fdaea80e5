/* Evictions caused by memcached moving a slab page, told apart from evictions caused by a
 * class running out of memory (cache pressure). */
#ifndef AG_PAGEMOVE_H
#define AG_PAGEMOVE_H

#include <stdint.h>

#include "stats.h"

/* 1 when this memcached counts page-move evictions as ordinary evictions of the source class
 * (`evicted` in `stats items`, `evictions`, and an `eviction` line in the watch stream): from
 * 1.6.34 the mover frees a page by evicting from the class's COLD tail. Before, the mover
 * dropped the page's items itself and counted them only in slab_reassign_evictions_nomem, so
 * a class's evictions were all pressure. Unknown versions count as new. */
int ag_page_moves_evict(const char *version);

/* Of the evictions class c had between two polls, how many a page move caused: the pages the
 * class lost times the chunks a page holds, capped by the evictions it had. memcached does
 * not mark the source of an eviction (its own TODO), so this is a per-window estimate; a class
 * that lost and regained a page within one window reads as having lost none. */
uint64_t ag_page_move_evictions(const mc_stats *s0, const mc_stats *s1, int c);

#endif

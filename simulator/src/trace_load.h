/* Load a whole trace through the shared tracereader into hcsim's struct of arrays. */
#ifndef SIM_TRACE_LOAD_H
#define SIM_TRACE_LOAD_H
#include "hcsim.h"

typedef struct sim_loaded {
    sim_trace t;
    uint64_t *keys;
    uint32_t *sizes;   /* NULL when the trace carries no sizes */
    uint8_t *ops;      /* NULL when every request is a GET */
    uint64_t skipped;  /* malformed records the reader skipped */
    uint64_t ignored;  /* records with no simulator meaning (reported evictions) */
    double seconds;
} sim_loaded;

/* 0 on success; -1 with a message in err. max_requests 0 = all. */
int sim_load_trace(const char *path, const char *format, uint64_t max_requests, sim_loaded *out,
                  char *err, size_t errlen);
void sim_loaded_free(sim_loaded *l);
#endif

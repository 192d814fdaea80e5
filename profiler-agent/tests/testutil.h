/* Minimal test harness: CHECK counts, the program ends with "N passed, M failed". */
#ifndef HC_TESTUTIL_H
#define HC_TESTUTIL_H
#include <stdio.h>
static int t_pass, t_fail;
#define CHECK(cond, ...) do { if (cond) t_pass++; else { t_fail++; \
    fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define TEST_DONE() (printf("%d passed, %d failed\n", t_pass, t_fail), t_fail ? 1 : 0)
#endif

# Hitcurve: the two commands are `make demo` and `make test` (see README.md); `make check` is the edit loop.
SHELL := /bin/bash
C_COMPONENTS := tracereader profiler-agent simulator

.PHONY: all install build build-c build-frontend test check demo stop status bench fuzz lint migrate clean

all: build

install:  ## install what is missing (Debian packages, .venv, node_modules); idempotent
	@bash scripts/install.sh

build: install build-c build-frontend  ## build C programs into bin/ and the dashboard into frontend/dist

# Quiet on success: one line per C component; a failing build prints its whole log, then fails.
build-c:
	@mkdir -p .run/build-logs; for d in $(C_COMPONENTS); do \
	  if [ -f $$d/Makefile ]; then \
	    name=$$(basename $$d); log=.run/build-logs/$$name.log; \
	    if $(MAKE) --no-print-directory -C $$d all >$$log 2>&1; then echo "built $$name (log: $$log)"; \
	    else cat $$log >&2; echo "building $$name failed (log: $$log)" >&2; exit 1; fi; \
	  fi; \
	done
	@# the agent release the backend serves to the install blocks (/api/v1/agent-release)
	@$(MAKE) --no-print-directory -C profiler-agent release >/dev/null

# The dashboard is rebuilt when its sources, config or dependencies changed.
FRONTEND_INPUTS := $(shell find frontend/src -type f 2>/dev/null) $(wildcard frontend/index.html frontend/*.ts frontend/*.js frontend/*.json)
build-frontend: frontend/dist/index.html
frontend/dist/index.html: $(FRONTEND_INPUTS)
	@cd frontend && npm run --silent build >/dev/null

test: build  ## every test: C units, lint and types, pytest (real PostgreSQL/Redis/memcached), Vitest, Playwright
	@bash scripts/test.sh

check: build  ## the edit loop: lint, types, C and Python unit tests, Vitest (PostgreSQL and Redis only)
	@bash scripts/test.sh --check

demo: build  ## the whole product locally, with a live demo memcached and traffic
	@bash scripts/demo.sh

stop:  ## stop exactly what the scripts started (by pid)
	@bash scripts/stop.sh

status:  ## every process the scripts started: PostgreSQL, Redis, API, workers, beat, demo programs
	@for i in dev test; do bash scripts/services.sh status $$i; bash scripts/supervise.sh status $$i; done

bench: build  ## accuracy, speed and memory benchmarks, printed next to their references
	@bash scripts/bench.sh

FUZZ_SECONDS ?= 60
fuzz: install  ## libFuzzer on the watch-line parser, the trace readers, the upload decoder and the stored trace decoder (FUZZ_SECONDS each, default 60)
	@$(MAKE) --no-print-directory -C tracereader fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)
	@mkdir -p .run/fuzz-decoder .run/fuzz-trace-records
	.venv/bin/python backend/fuzz/fuzz_decoder.py -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -max_len=65536 -timeout=10 -rss_limit_mb=2048 .run/fuzz-decoder
	.venv/bin/python backend/fuzz/fuzz_trace_records.py -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -max_len=65536 -timeout=10 -rss_limit_mb=2048 .run/fuzz-trace-records

lint: install
	@bash scripts/test.sh --lint-only

migrate: install
	@bash scripts/services.sh start dev && set -a && source .run/dev/env && set +a && .venv/bin/alembic upgrade head

clean:
	@for d in $(C_COMPONENTS); do [ -f $$d/Makefile ] && $(MAKE) --no-print-directory -C $$d clean; done; rm -rf bin frontend/dist

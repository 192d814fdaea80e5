# Hitcurve: the two commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
C_COMPONENTS := tracereader profiler-agent simulator

.PHONY: all install build build-c build-frontend test demo stop status bench fuzz lint migrate clean

all: build

install:  ## install what is missing (Debian packages, .venv, node_modules); idempotent
	@bash scripts/install.sh

build: install build-c build-frontend  ## build C programs into bin/ and the dashboard into frontend/dist

build-c:
	@for d in $(C_COMPONENTS); do \
	  if [ -f $$d/Makefile ]; then $(MAKE) --no-print-directory -C $$d all || exit 1; fi; \
	done

build-frontend:
	@cd frontend && npm run --silent build >/dev/null

test: build  ## every test: C units, lint and types, pytest (real PostgreSQL/Redis/memcached), Vitest, Playwright
	@bash scripts/test.sh

demo: build  ## the whole product locally, with a live demo memcached and traffic
	@bash scripts/demo.sh

stop:  ## stop exactly what the scripts started (by pid)
	@bash scripts/stop.sh

status:  ## every process the scripts started: PostgreSQL, Redis, API, workers, beat, demo programs
	@for i in dev test; do bash scripts/services.sh status $$i; bash scripts/supervise.sh status $$i; done

bench: build  ## accuracy, speed and memory benchmarks, printed next to their references
	@bash scripts/bench.sh

fuzz: install  ## libFuzzer on the watch-line parser + normaliser (FUZZ_SECONDS, default 60)
	@$(MAKE) --no-print-directory -C tracereader fuzz

lint: install
	@bash scripts/test.sh --lint-only

migrate: install
	@bash scripts/services.sh start dev && set -a && source .run/dev/env && set +a && .venv/bin/alembic upgrade head

clean:
	@for d in $(C_COMPONENTS); do [ -f $$d/Makefile ] && $(MAKE) --no-print-directory -C $$d clean; done; rm -rf bin frontend/dist

# Entry points; the work is done by the scripts under scripts/.
.DEFAULT_GOAL := help
# The Node.js that scripts/bootstrap.sh pins when the machine's own is older than 24 (scripts/lib/node.sh).
export PATH := $(CURDIR)/.venv/nodejs/bin:$(PATH)
.PHONY: help up test bench fuzz chaos build bootstrap temporal clean record-histories

help: ## List the targets
	@echo "Usage: make <target>"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

up: ## Install, build, start the Temporal dev server and run API + worker (Ctrl-C stops both)
	@scripts/up.sh

test: ## Build, then run the unit, integration and temporal (in-process workflow) test suites
	@scripts/test.sh

bench: ## Run the benchmarks (tables on stdout, JSON in bench/results/); BENCH="start reads", BENCH_SCALE=2
	@bench/run.sh

fuzz: ## Schemathesis against the whole API and the runtime's fast-check properties, more examples than make test (FUZZ_MAX_EXAMPLES, FUZZ_SEED)
	@scripts/fuzz.sh

chaos: ## Fault injection, full form: worker and API kills, Temporal restarts, Postgres outages (with DATABASE_URL); make test runs a short form
	@scripts/bootstrap.sh
	CHAOS_MODE=full NODE_OPTIONS="$${NODE_OPTIONS:-} --experimental-vm-modules --disable-warning=ExperimentalWarning" npx --no-install jest --selectProjects chaos --runInBand

build: ## Compile TypeScript to dist/ now (installs dependencies first if needed)
	@rm -f dist/.bootstrap-stamp
	@scripts/bootstrap.sh

bootstrap: ## Install node_modules and .venv and build dist/, each only when out of date
	@scripts/bootstrap.sh

temporal: ## Run only the Temporal dev server (state in .data/), following its log; Ctrl-C stops it
	@scripts/bootstrap.sh --no-build
	@scripts/temporal-dev.sh run

record-histories: ## Re-record the workflow histories the replay tests use (test/histories)
	@scripts/bootstrap.sh --no-build
	NODE_OPTIONS=--experimental-vm-modules npx --no-install jest --selectProjects record --runInBand

clean: ## Stop the dev server, then delete dist/ and .data/ (all local state)
	@scripts/temporal-dev.sh stop
	rm -rf dist .data

# Entry points; the work is done by the scripts under scripts/.
.DEFAULT_GOAL := help
.PHONY: help up test build bootstrap temporal clean record-histories

help: ## List the targets
	@echo "Usage: make <target>"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

up: ## Install, build, start the Temporal dev server and run API + worker (Ctrl-C stops both)
	@scripts/up.sh

test: ## Build, then run the unit, integration and temporal (in-process workflow) test suites
	@scripts/test.sh

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

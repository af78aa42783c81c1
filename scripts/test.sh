#!/usr/bin/env bash
# `make test`: every tier in turn (scripts/lib/run-steps.sh prints the summary; its last line is
# "N passed, N failed"). Exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# The integration suites start their own Temporal dev server (jest globalSetup) on free ports:
# none is started here, the .venv binaries are enough.
# PGlite loads its Wasm through dynamic import(), which jest's VM only allows with this flag.
export NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --disable-warning=ExperimentalWarning"
STEPS=(
  "npm run --silent build"
  "npx --no-install jest --selectProjects unit"
  "npx --no-install jest --selectProjects integration --runInBand"
  "npx --no-install jest --selectProjects security --runInBand"
  "npx --no-install jest --selectProjects temporal --runInBand"
  # Fault injection, short form (worker and API kills, Temporal restart, Postgres outage with
  # DATABASE_URL), each suite on a stack of its own; `make chaos` runs the full form.
  "npx --no-install jest --selectProjects chaos --runInBand"
  # schemathesis against the whole API, bounded (about a minute); `make fuzz` runs more.
  "npx --no-install jest --selectProjects fuzz"
)

scripts/bootstrap.sh --no-build || { echo "bootstrap failed" >&2; exit 1; }
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh # the Node bootstrap chose
echo "test: node $(node --version) ($(command -v node))"

# shellcheck source=scripts/lib/run-steps.sh
source scripts/lib/run-steps.sh
run_steps summary "${STEPS[@]}"

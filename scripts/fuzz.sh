#!/usr/bin/env bash
# `make fuzz`: the fuzzing suites with far more examples than their bounded forms in `make test`:
#   - fast-check properties of the state-machine runtime (test/unit and test/temporal *.property.test.ts)
#   - schemathesis against the whole HTTP API from its OpenAPI document (test/fuzz), random seed
# Every step runs even when an earlier one fails (scripts/lib/run-steps.sh); the last line is
# "N passed, N failed" and the exit code is non-zero if any step failed. Override the defaults below from the environment,
# e.g. FUZZ_MAX_EXAMPLES=1000 FUZZ_MAX_TIME=1800 make fuzz, or FUZZ_SEED=<seed printed by a failing run>.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

export NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --disable-warning=ExperimentalWarning"
export FUZZ_MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-200}"  # schemathesis test cases per operation and phase
export FUZZ_SEED="${FUZZ_SEED:-random}"
export FC_RUNS_FACTOR="${FC_RUNS_FACTOR:-20}"         # pure runtime properties: 20x make test's runs
export FC_RUNS="${FC_RUNS:-400}"                      # generated machines run on the time-skipping server
STEPS=(
  "npx --no-install jest --selectProjects unit --testPathPatterns '\\.property\\.test\\.ts\$'"
  "npx --no-install jest --selectProjects temporal --runInBand --testPathPatterns '\\.property\\.test\\.ts\$'"
  "npx --no-install jest --selectProjects fuzz"
)

scripts/bootstrap.sh || { echo "bootstrap failed" >&2; exit 1; }
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh # the Node bootstrap chose

# shellcheck source=scripts/lib/run-steps.sh
source scripts/lib/run-steps.sh
run_steps "fuzz summary; FUZZ_MAX_EXAMPLES=$FUZZ_MAX_EXAMPLES FUZZ_SEED=$FUZZ_SEED FC_RUNS_FACTOR=$FC_RUNS_FACTOR FC_RUNS=$FC_RUNS; reports in .test-data/fuzz/" "${STEPS[@]}"

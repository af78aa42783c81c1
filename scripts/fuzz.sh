#!/usr/bin/env bash
# `make fuzz`: the fuzzing suites with far more examples than their bounded forms in `make test`:
#   - fast-check properties of the state-machine runtime (test/unit and test/temporal *.property.test.ts)
#   - schemathesis against the whole HTTP API from its OpenAPI document (test/fuzz), random seed
# Every step runs even when an earlier one fails; the last line is "N passed, N failed" and the
# exit code is non-zero if any step failed. Override the defaults below from the environment,
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

trap 'exit 130' INT
out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0 failed=0 failed_steps=0
report=()
for step in "${STEPS[@]}"; do
  printf '\n==> %s\n' "$step"
  t0=$SECONDS
  bash -c "$step" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  line=$(sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E '^Tests:' | tail -n 1)
  p=0 f=0
  [[ $line =~ ([0-9]+)\ passed ]] && p=${BASH_REMATCH[1]}
  [[ $line =~ ([0-9]+)\ failed ]] && f=${BASH_REMATCH[1]}
  ((rc != 0 && f == 0)) && f=1
  passed=$((passed + p)) failed=$((failed + f))
  if ((rc == 0)); then status=ok; else status=FAIL failed_steps=$((failed_steps + 1)); fi
  report+=("$(printf '%-4s %4ss  %s [%d passed, %d failed]' "$status" $((SECONDS - t0)) "$step" "$p" "$f")")
done

printf '\n==> fuzz summary (%d of %d steps failed; FUZZ_MAX_EXAMPLES=%s FUZZ_SEED=%s FC_RUNS_FACTOR=%s FC_RUNS=%s; reports in .test-data/fuzz/)\n' \
  "$failed_steps" "${#STEPS[@]}" "$FUZZ_MAX_EXAMPLES" "$FUZZ_SEED" "$FC_RUNS_FACTOR" "$FC_RUNS"
printf '%s\n' "${report[@]}"
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed_steps == 0))

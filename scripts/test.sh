#!/usr/bin/env bash
# `make test`: runs every step even when an earlier one fails, then prints a summary whose
# last line is "N passed, N failed" (tests counted from jest's "Tests:" lines).
# Exits non-zero if any step failed.
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
  "npx --no-install jest --selectProjects temporal --runInBand"
  # Fault injection, short form (worker and API kills, Temporal restart, Postgres outage with
  # DATABASE_URL), each suite on a stack of its own; `make chaos` runs the full form.
  "npx --no-install jest --selectProjects chaos --runInBand"
  # schemathesis against the whole API, bounded (about a minute); `make fuzz` runs more.
  "npx --no-install jest --selectProjects fuzz"
)

scripts/bootstrap.sh --no-build || { echo "bootstrap failed" >&2; exit 1; }

trap 'exit 130' INT
out=$(mktemp)
trap 'rm -f "$out"' EXIT

passed=0 failed=0 skipped=0 failed_steps=0
report=()
for step in "${STEPS[@]}"; do
  printf '\n==> %s\n' "$step"
  t0=$SECONDS
  bash -c "$step" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}

  # e.g. "Tests:       1 failed, 2 skipped, 10 passed, 13 total" (colour codes stripped)
  line=$(sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E '^Tests:' | tail -n 1)
  p=0 f=0 s=0
  [[ $line =~ ([0-9]+)\ passed ]] && p=${BASH_REMATCH[1]}
  [[ $line =~ ([0-9]+)\ failed ]] && f=${BASH_REMATCH[1]}
  [[ $line =~ ([0-9]+)\ skipped ]] && s=${BASH_REMATCH[1]}
  # A step that failed without a failing test (build error, suite that does not compile,
  # globalSetup crash, no tests found) still counts as one failure.
  ((rc != 0 && f == 0)) && f=1
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))

  if ((rc == 0)); then status=ok; else status=FAIL failed_steps=$((failed_steps + 1)); fi
  counts=""
  [[ -n $line ]] && counts=" [$p passed, $f failed, $s skipped]"
  report+=("$(printf '%-4s %4ss  %s%s' "$status" $((SECONDS - t0)) "$step" "$counts")")
done

printf '\n==> summary (%d of %d steps failed)\n' "$failed_steps" "${#STEPS[@]}"
printf '%s\n' "${report[@]}"
if ((skipped > 0)); then
  printf '%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
else
  printf '%d passed, %d failed\n' "$passed" "$failed"
fi
((failed_steps == 0))

# Sourced by scripts/test.sh and scripts/fuzz.sh: runs every step in STEPS even when an earlier
# one fails, counts tests from jest's "Tests:" lines, then prints a summary whose last line is
# "N passed, N failed[, N skipped]". Under a failed step it lists jest's failing suites and
# tests, so the tail of a long CI log alone says what failed. Returns non-zero if any step failed.
# Usage: run_steps "<summary title>" "${STEPS[@]}"
run_steps() {
  local title=$1
  shift
  local out
  out=$(mktemp)
  # shellcheck disable=SC2064 # expand now: $out is local
  trap "rm -f '$out'" EXIT
  trap 'exit 130' INT

  local passed=0 failed=0 skipped=0 failed_steps=0 step t0 rc line p f s status counts
  local report=()
  for step in "$@"; do
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
    if ((rc != 0)); then
      # "FAIL test/unit/x.test.ts" and "  ● Suite › test" headers; console blocks are not failures.
      while IFS= read -r line; do report+=("       $line"); done < <(
        sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E '^(FAIL |  ● )' | grep -v '● Console' | awk '!seen[$0]++' | head -n 40
      )
    fi
  done

  printf '\n==> %s (%d of %d steps failed)\n' "$title" "$failed_steps" "$#"
  printf '%s\n' "${report[@]}"
  if ((skipped > 0)); then
    printf '%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
  else
    printf '%d passed, %d failed\n' "$passed" "$failed"
  fi
  ((failed_steps == 0))
}

#!/usr/bin/env bash
# `make bench [BENCH="start projection stream reads steps longpoll"]`: installs what is missing,
# compiles bench/ (and what it imports) to dist-bench/, runs the benchmarks.
# PGlite unless DATABASE_URL is set; BENCH_SCALE and the other knobs are listed in bench/run.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --no-build
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh # the Node bootstrap chose
echo "bench: compiling bench/ to dist-bench/" >&2
npx --no-install tsc -p bench/tsconfig.json
# shellcheck disable=SC2086 # BENCH is a list of names
exec node dist-bench/bench/run.js ${BENCH:-} "$@"

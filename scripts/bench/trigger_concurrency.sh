#!/usr/bin/env bash
# Trigger delivery throughput by maxConcurrency (1, 16, 64) and receiver latency (0, 10,
# 100 ms per event): see scripts/bench/trigger_concurrency.py. One Hearth on 127.0.0.1
# port 0, a fresh temp dir removed at exit, nothing written into the repo.
# Knobs (env): HEARTH_BIN (default .build/release/hearth, else .build/debug/hearth),
#   DELAYS (0,10,100) CONCURRENCY (1,16,64) LOCATIONS (64) CELL_SECONDS (20)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${HEARTH_BIN:-}
if [ -z "$BIN" ]; then
  if [ -x "$REPO/.build/release/hearth" ]; then BIN=$REPO/.build/release/hearth; else BIN=$REPO/.build/debug/hearth; fi
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); commit: $(cd "$REPO" && git rev-parse --short HEAD); binary: $BIN" >&2
echo "machine: nproc=$(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 "$REPO/scripts/bench/trigger_concurrency.py" --hearth "$BIN" --work "$WORK" \
  --delays "${DELAYS:-0,10,100}" --concurrency "${CONCURRENCY:-1,16,64}" \
  --locations "${LOCATIONS:-64}" --cell-seconds "${CELL_SECONDS:-20}"

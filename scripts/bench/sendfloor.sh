#!/usr/bin/env bash
# The kernel's cost of a push by how it is handed over: one send() per connection (what
# Hearth's I/O loops and `hearth-load floor` do) against one io_uring submission for many
# connections' sends (liburing from Debian's liburing-dev: IORING_OP_SEND for each
# connection, up to 4,096 per io_uring_enter, completions reaped in batches).
#
# scripts/bench/sendfloor (a package of its own, built here in release, never by the main
# package or CI) opens SF_CONNS loopback TCP connections, reads their client ends on
# SF_RECEIVERS epoll threads as the fan-out client does, and sends SF_BYTES (a wire push's
# length) to every connection SF_RATE times a second, one phase of SF_SECONDS per entry of
# SF_MODES, on the same connections and receivers, so the modes alternate within one run.
# Per phase: the sending thread's CPU per send (on loopback it includes the receivers' TCP
# input and wake-ups, as a server's CPU per push does), the receivers' CPU per send, and
# the whole process's.
#
#   scripts/bench/sendfloor.sh
#   SF_CONNS=1000 SF_SECONDS=3 SF_MODES=send,uring scripts/bench/sendfloor.sh
#
# Knobs (env): SF_CONNS (9900: both ends of each connection are in one process, under the
# default open-file limit of 20,000) SF_RATE (10) SF_SECONDS (8) SF_MODES
# (send,uring,uring,send,send,uring) SF_RECEIVERS (2) SF_BYTES (218) RESULTS
# Results: $RESULTS (one JSON line per phase) and a table on stdout.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init sendfloor
SF_CONNS=${SF_CONNS:-9900}; SF_RATE=${SF_RATE:-10}; SF_SECONDS=${SF_SECONDS:-8}
SF_MODES=${SF_MODES:-send,uring,uring,send,send,uring}; SF_RECEIVERS=${SF_RECEIVERS:-2}; SF_BYTES=${SF_BYTES:-218}
if ! pkg-config --exists liburing 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev
  else
    echo "please install: apt-get install -y liburing-dev" >&2; exit 1
  fi
fi
PACKAGE="$REPO/scripts/bench/sendfloor"
log "swift build -c release (scripts/bench/sendfloor)"
(cd "$PACKAGE" && swift build -c release 2>&1 | tail -1) >&2
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "machine: nproc=$(nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "load average before: $(load_avgs)"
  echo "swift: $(swift --version 2>/dev/null | head -1); repo at commit $(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "liburing: $(pkg-config --modversion liburing); io_uring_disabled: $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo '?')"
  echo "sendfloor settings: $SF_CONNS connections, $SF_BYTES bytes to each $SF_RATE times a second, ${SF_SECONDS}s per phase, phases $SF_MODES, $SF_RECEIVERS receiver threads"
} | tee "$RESULTS.meta" >&2
"$PACKAGE/.build/release/sendfloor" --connections "$SF_CONNS" --rate "$SF_RATE" --seconds "$SF_SECONDS" \
  --modes "$SF_MODES" --receivers "$SF_RECEIVERS" --bytes "$SF_BYTES" | tee "$RESULTS" >&2
{
  echo
  echo "### The kernel's cost of a push: send() against io_uring — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  python3 - "$RESULTS" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
us = lambda r, key: r[key] / r["sends"] * 1e6
print("| phase | mode | sender µs per send | receivers µs per send | process µs per send | all bytes received | short sends |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print("| %d | %s | %.2f | %.2f | %.2f | %s | %d |" % (r["phase"], r["mode"], r["sender_us_per_send"], us(r, "receivers_cpu_s"),
          us(r, "process_cpu_s"), "yes" if r["bytes_received"] == r["bytes_expected"] else "no", r["short"]))
med = {m: statistics.median([r["sender_us_per_send"] for r in rows if r["mode"] == m]) for m in ("send", "uring") if any(r["mode"] == m for r in rows)}
for m, v in med.items():
    print("| median | %s | %.2f | | | | |" % (m, v))
if len(med) == 2:
    print()
    print("io_uring ÷ send(), the sending thread's CPU per send (medians): **%.2f**" % (med["uring"] / med["send"]))
PY
} | tee "${RESULTS%.jsonl}.md"

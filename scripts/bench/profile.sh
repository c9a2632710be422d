#!/usr/bin/env bash
# Profile Hearth under one wrk scenario with perf (Linux): start hearth (open to anonymous
# requests as in http_baseline.sh, port 0, temp data dir), seed the 50 x 20 favourites, start wrk for the scenario, attach
# `perf record` to the server pid for PROFILE_SECONDS, then print the top symbols
# (self cost, demangled) and, with CALLERS=1, the call graph of the top entries.
#
#   scripts/bench/profile.sh list            # GET of a user's 20-favourite subtree
#   scripts/bench/profile.sh put             # PUT of the whole subtree
#   scripts/bench/profile.sh healthz
#
# Knobs (env): PROFILE_SECONDS (8) CONNS (64) THREADS (2) CALLGRAPH (dwarf | fp | none;
# default dwarf) TOP (40) HEARTH_SYNC (full) HEARTH_BIN SKIP_BUILD=1 KEEP_WORK=1
# (keeps perf.data in the temp dir). Needs perf (linux-perf); no files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
SCEN=${1:?usage: profile.sh SCENARIO (see targets/hearth.json)}
bench_init "profile-$SCEN"
command -v perf >/dev/null || { echo "needs perf (apt-get install -y linux-perf)" >&2; exit 1; }
PROFILE_SECONDS=${PROFILE_SECONDS:-8}; CALLGRAPH=${CALLGRAPH:-dwarf}; TOP=${TOP:-40}
build_hearth

start_hearth_with_plan "$SCEN"
head -3 "$WORK/plan.txt" >&2

# wrk runs longer than perf; perf attaches after a 2 s warm-up
wrk -t"$THREADS" -c"$CONNS" -d$((PROFILE_SECONDS + 4))s -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" \
  >"$WORK/wrk.out" 2>&1 &
WRK_PID=$!; _PIDS+=("$WRK_PID")
sleep 2
case $CALLGRAPH in
  dwarf) cg=(--call-graph dwarf,16384) ;;
  fp) cg=(-g) ;;
  *) cg=() ;;
esac
log "perf record ${cg[*]} -p $HEARTH_PID for ${PROFILE_SECONDS}s under '$SCEN'"
perf record -F 999 "${cg[@]}" -p "$HEARTH_PID" -o "$WORK/perf.data" -- sleep "$PROFILE_SECONDS" 2>&1 | tail -2 >&2
wait "$WRK_PID" || true
grep -E 'Requests/sec|Latency' "$WORK/wrk.out" >&2 || cat "$WORK/wrk.out" >&2

demangle() {  # demangle Swift names, drop perf's empty trailing columns
  if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi \
    | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/[[:space:]]+$//'
}
# reports go to files first: piping perf into head would end perf with SIGPIPE (pipefail)
perf report -i "$WORK/perf.data" --no-children --sort dso,symbol --stdio -g none >"$WORK/self.txt" 2>/dev/null || true
log "top $TOP symbols by self cost ($SCEN)"
grep -v -e '^#' -e '^$' "$WORK/self.txt" | demangle | head -n "$TOP" || true
if [ "${CALLERS:-0}" = 1 ] && [ ${#cg[@]} -gt 0 ]; then
  perf report -i "$WORK/perf.data" --children --sort symbol --stdio -g none >"$WORK/children.txt" 2>/dev/null || true
  log "inclusive cost (self + callees), top $TOP"
  grep -v -e '^#' -e '^$' "$WORK/children.txt" | demangle | head -n "$TOP" || true
fi
stop_hearth

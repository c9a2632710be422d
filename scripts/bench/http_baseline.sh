#!/usr/bin/env bash
# Hearth HTTP baseline, in one run:
#  (a) GET /healthz on Hearth vs nginx serving a static file with the same 15-byte body
#      ({"status":"ok"}) at the same path: req/s, p50/p99 and the ratio Hearth/nginx
#      (the foundation issue asks for >= 0.5); for context also nginx returning the same
#      body from memory (GET /healthz-mem, 'return 200'), a harder reference;
#  (b) Hearth on the favourites workload, 50 users seeded first (scripts/bench/hearth_setup.py):
#      GET and PUT of a user's whole 20-favourite subtree (/users/<uid>/favorites.json),
#      plus GET of one favourite and POST (create) for context.
# wrk -t2 -c64 -d10s through scripts/bench/harness.py (request pools replayed by
# wrk/replay.lua, rotating over the users); warm-up, several runs, median; server / wrk /
# other-process CPU per run. Prints a markdown table; result lines go to $RESULTS.
#
# Hearth gets no auth header (accounts do not exist yet) and is opened to anonymous
# requests: --no-rules on builds that have it, else an open rules file (lib.sh,
# hearth_access_args; HEARTH_RULES_FILE to serve another one). Port 0, a fresh temp data
# dir, synchronous=full (its default; HEARTH_SYNC=normal to change).
# Everything on 127.0.0.1, free ports only; all processes stopped and temp files removed
# at exit; nothing is written into the repo.
#
# Knobs (env): DURATION (10) RUNS (3) WARMUP (3) CONNS (64; comma list ok) THREADS (2)
#   QUICK=1 (smoke run: 1 run of 2 s, 1 s warm-up)  SCENARIOS (list,put,get,create;
#   "none": only part (a), no seeding; scripts/bench/run uses that)
#   HEARTH_BIN (default: swift build -c release, then .build/release/hearth) SKIP_BUILD=1
#   HEARTH_REV (label for a HEARTH_BIN built elsewhere)  HEARTH_RULES_FILE
#   HEARTH_SYNC (full)  RESULTS (file for result lines)  KEEP_WORK=1
#   BENCH_QUIET_PCT (10) BENCH_QUIET_WAIT (300): wait for other processes to calm down.
# Needs wrk, nginx (apt-get install -y wrk nginx-light; done automatically as root), curl, python3.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init baseline
SCENARIOS=${SCENARIOS:-list,put,get,create}
build_hearth

machine_facts | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

if [ "$SCENARIOS" = none ]; then log "start hearth (healthz only: no seeding)"
else log "start hearth and seed 50 users x 20 favourites (+50 empty writer users)"; fi
start_hearth "$WORK/hearth-data"
echo "hearth access: $ACCESS_NOTE; $(auth_header_note)" | tee -a "$RESULTS.meta" >&2
retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" $(auth_target_arg)
if [ "$SCENARIOS" != none ]; then
  python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" --out "$WORK/fixtures.json" $(auth_setup_args) >&2
fi

log "start nginx with a static /healthz of the same bytes"
HEALTHZ=$(curl -fsS "$HEARTH_URL/healthz")
start_nginx healthz "$HEALTHZ"
retarget "$BENCH_DIR/targets/nginx-healthz.json" "$NGINX_URL" "$WORK/nginx-healthz.json"
hz_bytes=$(curl -fsS "$HEARTH_URL/healthz" | wc -c); ng_bytes=$(curl -fsS "$NGINX_URL/healthz" | wc -c)
echo "healthz body: hearth $hz_bytes bytes, nginx $ng_bytes bytes ($HEALTHZ)" | tee -a "$RESULTS.meta" >&2
[ "$hz_bytes" = "$ng_bytes" ] || { echo "body sizes differ" >&2; exit 1; }
[ "$(curl -fsS "$NGINX_URL/healthz-mem")" = "$HEALTHZ" ] || { echo "nginx /healthz-mem differs" >&2; exit 1; }

log "healthz: Hearth, nginx static file, nginx from memory, alternating run by run ($RUNS x ${DURATION}s each)"
for r in $(seq 1 "$RUNS"); do
  RUNS=1 run_wrk "$WORK/hearth.json" "" healthz "$HEARTH_PID"
  RUNS=1 run_wrk "$WORK/nginx-healthz.json" "" healthz "$NGINX_PID"
  RUNS=1 run_wrk "$WORK/nginx-healthz.json" "" healthz_mem "$NGINX_PID"
done
stop_pid "$NGINX_PID"; NGINX_PID=

if [ "$SCENARIOS" != none ]; then
log "favourites: $SCENARIOS"
run_wrk "$WORK/hearth.json" "$WORK/fixtures.json" "$SCENARIOS" "$HEARTH_PID"
echo "hearth RSS after the runs: $("${HARNESS[@]}" rss "$HEARTH_PID") KiB" | tee -a "$RESULTS.meta" >&2
# the lists are still 20 favourites each (PUT rewrites the same keys, creates go to writers)
python3 - "$HEARTH_URL" "$WORK/fixtures.json" <<'EOF' | tee -a "$RESULTS.meta" >&2
import json, sys, urllib.request
base, fx = sys.argv[1], json.load(open(sys.argv[2]))
u = fx["readers"][0]
req = urllib.request.Request("%s/users/%s/favorites.json" % (base, u["uid"]))
if u.get("token"):  # auth mode: the reference rules let only the owner read
    req.add_header("Authorization", "Bearer " + u["token"])
body = urllib.request.urlopen(req).read()
print("after the runs: a reader's list has %d favourites, %d bytes" % (len(json.loads(body)), len(body)))
EOF
fi
stop_hearth

{
  echo
  echo "### Hearth HTTP baseline — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  echo "Hearth: access $ACCESS_NOTE; $(auth_header_note); synchronous=${HEARTH_SYNC:-full}."
  echo
  python3 "$BENCH_DIR/summarize.py" "$RESULTS" --names "hearth=Hearth,nginx-healthz=nginx" \
    --ratio "Hearth / nginx static file, GET /healthz (15 B)=hearth:healthz/nginx-healthz:healthz>=0.5" \
    --ratio "Hearth / nginx from memory (context)=hearth:healthz/nginx-healthz:healthz_mem"
} | tee "${RESULTS%.jsonl}.md"
echo >&2
echo "raw result lines: $RESULTS; this table: ${RESULTS%.jsonl}.md" >&2

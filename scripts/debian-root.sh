# Helpers for the scripts that build and inspect a minimal Debian root
# (scripts/docker-steps.sh, scripts/check-runtime-packages.sh). Sourced, not run.

# Messages: `say` a step, `phase` a step with the seconds since the script began, `fail`
# with the script's name (and exit 1).
CHECK_NAME=$(basename "$0" .sh)
CHECK_STARTED=$SECONDS
say() { printf '== %s\n' "$*"; }
fail() { printf '%s: FAIL: %s\n' "$CHECK_NAME" "$*" >&2; exit 1; }
phase() { say "$1 (+$((SECONDS - CHECK_STARTED)) s)"; }

# TOOL...: fails unless this runs as root (debootstrap, chroot and unshare need it) with
# every TOOL installed.
need_root_and() {
  [ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot, unshare), as CI runs it"
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || fail "$tool is not installed"
  done
}

# The Debian mirror this machine's apt uses (the first http(s) one ending in /debian),
# else Debian's own; debootstrap then fetches from where apt already reaches.
debian_mirror() {
  local mirror
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*debian\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
  echo "${mirror:-http://deb.debian.org/debian}"
}

# The package names an `apt-get install` command line names: the words after `install`
# that are not options, up to the end of that command (&&, ;, ||, |). Comments dropped.
apt_packages() {
  python3 - "$1" <<'PY'
import shlex, sys
words = shlex.split(sys.argv[1].replace("&&", " && ").replace(";", " ; "), comments=True)
out, on = [], False
for word in words:
    if word in ("&&", ";", "||", "|"):
        on = False
    elif on and not word.startswith("-"):
        out.append(word)
    elif word == "install" and "apt-get" in words:
        on = True
print(" ".join(out))
PY
}

# ROOT PATH: the package that installed a library file in the root (usrmerge aware).
dpkg_owner() {
  local root=$1 path=$2 real candidate
  real=$(chroot "$root" readlink -f "$path")
  for candidate in "$path" "$real" "${real#/usr}" "/usr${real#/usr}" "/usr$path"; do
    chroot "$root" dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1 && return 0
  done
  return 1
}

# JOB [TARGET]: while JOB, a server started in the background as `unshare --pid --fork
# ...`, still runs, kills TARGET, the server, PID 1 of that namespace (its end takes the
# namespace's every process along: unshare's --kill-child does not reach a child that
# changed its uid), then JOB, and reaps it.
kill_server() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
  [ -z "${2:-}" ] || kill -KILL "$2" 2>/dev/null || true
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# SIGNAL TARGET JOB SECONDS: sends SIGNAL (TERM, INT...) to TARGET, the server inside its
# namespace, and waits up to SECONDS for JOB, the background job that started it, to end;
# fails unless it exits 0 in time.
stop_server() {
  local signal=$1 target=$2 job=$3 seconds=$4 waited=0 status=0
  kill "-$signal" "$target"
  while kill -0 "$job" 2>/dev/null; do
    [ "$waited" -lt $((seconds * 10)) ] || fail "still running $seconds s after SIG$signal"
    sleep 0.1; waited=$((waited + 1))
  done
  wait "$job" || status=$?
  [ "$status" = 0 ] || fail "exit status $status after SIG$signal"
}

# DIR: removes a work directory, unless something is still mounted below it.
remove_work() {
  if grep -q " $1/" /proc/self/mountinfo; then
    echo "not removing $1: something is still mounted below it" >&2
  else
    rm -rf "$1"
  fi
}

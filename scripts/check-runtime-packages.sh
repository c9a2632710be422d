#!/usr/bin/env bash
# Checks docs/deploying.md's runtime packages against the release binary: a host set up
# as the docs say must be able to start Hearth.
#
#  1. reads the package list from the table between the `runtime-packages` markers in
#     docs/deploying.md (the only place the list is written down), and checks that the
#     systemd steps' `apt-get install` there and the Dockerfile's run stage install exactly
#     that list;
#  2. builds a minimal Debian 12 root: `debootstrap --variant=minbase bookworm` (Debian's
#     base system, what every Debian host has) plus exactly those packages with
#     `apt-get install --no-install-recommends`, from the mirror this machine's apt uses.
#     The root is cached, keyed by suite, mirror, architecture and package list (rebuilt
#     after a week, so it follows Debian's updates);
#  3. copies the binary in and runs `ldd` inside the root: a library no package there
#     provides fails the check, naming the missing .so. Each library is printed with the
#     package it comes from (base system, a documented package, or one apt brought with a
#     documented package);
#  4. runs it there (its own mount and PID namespace, chrooted, as an unprivileged uid):
#     `hearth --version`, then `hearth serve --port 0` with a data directory inside the
#     root, waits for "listening on", GET /healthz, an admin token from `hearth token`,
#     a REST write and read with it, SIGTERM (exit 0);
#  5. shows that step 3 can fail: with each documented package's libraries hidden in
#     turn, ldd inside the root must report that package's .so as missing.
#
# Usage: scripts/check-runtime-packages.sh [BINARY]
#   BINARY defaults to .build/release/hearth, built first with the command docs/deploying.md
#   gives (`swift build -c release --static-swift-stdlib --product hearth`).
# Needs root (debootstrap, chroot, unshare), debootstrap, curl, python3 and Debian's
# package mirror: CI runs it (.ci/run), the README's test command does not.
#   RUNTIME_ROOT_CACHE=DIR   where roots are cached (default /var/cache/hearth-runtime-roots)
set -euo pipefail
BINARY=""
[ $# -eq 0 ] || BINARY=$(realpath -m -- "$1")   # before the cd: relative to where it was called
cd "$(dirname "$0")/.."
REPO=$PWD
DOC=$REPO/docs/deploying.md
DOCKERFILE=$REPO/Dockerfile
SUITE=bookworm                 # Debian 12: what the docs and the Dockerfile's run stage name
CACHE=${RUNTIME_ROOT_CACHE:-/var/cache/hearth-runtime-roots}
CACHE_DAYS=7                   # a cached root older than this is built anew
START_SECONDS=20               # how long `hearth serve` may take to print "listening on"
STOP_SECONDS=20                # how long it may take to exit after SIGTERM (the unit's TimeoutStopSec=)
SERVICE_UID=65534              # the unprivileged uid the server runs as inside the root
# shellcheck source=scripts/debian-root.sh
source "$REPO/scripts/debian-root.sh"   # say, phase, fail, need_root_and, debian_mirror, apt_packages, dpkg_owner, kill_server, stop_server, remove_work

need_root_and debootstrap curl python3 unshare chroot flock sha256sum

# ---- 1: the documented list, and the places that install it ------------------------------
phase "runtime packages from docs/deploying.md"
read -r -a PACKAGES <<<"$(sed -n '/<!-- runtime-packages/,/<!-- \/runtime-packages -->/p' "$DOC" \
  | sed -n 's/^| *`\([^`]*\)` *|.*/\1/p' | tr '\n' ' ')"
[ "${#PACKAGES[@]}" -gt 0 ] || fail "no package rows between <!-- runtime-packages --> and <!-- /runtime-packages --> in $DOC"
for package in "${PACKAGES[@]}"; do
  [[ $package =~ ^[a-z0-9][a-z0-9.+-]+$ ]] || fail "'$package' in docs/deploying.md's runtime packages is not a Debian package name"
done
echo "   ${PACKAGES[*]}"
sorted() { printf '%s\n' "$@" | sort -u | tr '\n' ' '; }
documented=$(sorted "${PACKAGES[@]}")

# The systemd section's shell block: its apt-get install line.
systemd_line=$(awk '/^## systemd/ { on = 1; next } /^## / { on = 0 } on' "$DOC" \
  | awk '/^```/ { block = !block; next } block' | grep 'apt-get install' || true)
[ -n "$systemd_line" ] || fail "the systemd steps in docs/deploying.md have no apt-get install line"
read -r -a systemd_packages <<<"$(apt_packages "$systemd_line")"
[ "$(sorted "${systemd_packages[@]}")" = "$documented" ] \
  || fail "the systemd steps install '${systemd_packages[*]}', the runtime packages are '${PACKAGES[*]}'"
echo "   the systemd steps install the same"
# The Dockerfile's run stage: RUN lines (joined across continuations) after the last FROM.
run_stage=$(awk '/^FROM / { stage = "" } { stage = stage $0 "\n" } END { printf "%s", stage }' "$DOCKERFILE" \
  | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -E '^RUN .*apt-get install' || true)
[ -n "$run_stage" ] || fail "the Dockerfile's run stage has no apt-get install"
read -r -a image_packages <<<"$(apt_packages "${run_stage#RUN }")"
[ "$(sorted "${image_packages[@]}")" = "$documented" ] \
  || fail "the Dockerfile's run stage installs '${image_packages[*]}', the runtime packages are '${PACKAGES[*]}'"
echo "   the Dockerfile's run stage installs the same"

# ---- the binary ----------------------------------------------------------------------------
if [ -z "$BINARY" ]; then
  phase "swift build -c release --static-swift-stdlib --product hearth (as docs/deploying.md)"
  swift build -c release --static-swift-stdlib --product hearth
  BINARY=$REPO/.build/release/hearth
fi
[ -x "$BINARY" ] || fail "no binary at $BINARY"

# ---- 2: the root -----------------------------------------------------------------------------
mirror=$(debian_mirror)
arch=$(dpkg --print-architecture)
key=$(printf '%s\n' "$SUITE" "$mirror" "$arch" "$documented" | sha256sum | cut -c1-16)
cached=$CACHE/$SUITE-$arch-$key
mkdir -p "$CACHE"
WORK=$(mktemp -d /tmp/hearth-runtime-packages.XXXXXX)
chmod 0755 "$WORK"
ROOT=$WORK/root
SERVER_PID=""
cleanup() {
  local status=$?
  kill_server "$SERVER_PID" "${HEARTH_PID:-}"
  [ "$status" = 0 ] || [ ! -f "$WORK/serve.log" ] || { echo "--- hearth serve's log"; tail -n 30 "$WORK/serve.log"; }
  remove_work "$WORK"
  exit "$status"
}
trap cleanup EXIT

{
  flock 9   # one build of a root at a time; a second run waits and then reuses it
  # Roots of other package lists, past their week, go.
  for stale in "$CACHE"/*/ready; do
    [ -e "$stale" ] && [ -n "$(find "$stale" -mtime "+$CACHE_DAYS")" ] && rm -rf "$(dirname "$stale")"
  done
  if [ -f "$cached/ready" ] && [ -z "$(find "$cached/ready" -mtime "+$CACHE_DAYS")" ]; then
    phase "minimal root from the cache ($cached)"
  else
    phase "debootstrap --variant=minbase $SUITE ($mirror), then apt-get install ${PACKAGES[*]}"
    rm -rf "$cached" "$cached.new"
    building=$cached.new
    debootstrap --variant=minbase "$SUITE" "$building/root" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
      || { tail -n 20 "$WORK/debootstrap.log"; fail "debootstrap failed"; }
    chroot "$building/root" dpkg-query -W -f '${Package}\n' | sort >"$building/base-packages"
    cp /etc/resolv.conf "$building/root/etc/resolv.conf"
    chroot "$building/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
      /bin/sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" && apt-get clean && rm -rf /var/lib/apt/lists/*' \
      sh "${PACKAGES[@]}" >"$WORK/apt.log" 2>&1 || { tail -n 20 "$WORK/apt.log"; fail "apt-get install ${PACKAGES[*]} in the root failed"; }
    chroot "$building/root" dpkg-query -W -f '${Package}\n' | sort >"$building/all-packages"
    touch "$building/ready"
    mv "$building" "$cached"
  fi
} 9>"$CACHE/.lock"
cp -a "$cached/root" "$ROOT"
added=$(comm -13 "$cached/base-packages" "$cached/all-packages" | tr '\n' ' ')
echo "   base system: $(wc -l <"$cached/base-packages") packages; added by apt for the runtime packages: $added"
install -D -m 0755 "$BINARY" "$ROOT/usr/local/bin/hearth"

# ---- 3: shared libraries inside the root -----------------------------------------------------
# ldd's lines for a binary inside the root; `missing` prints only the sonames not found.
libraries() { chroot "$ROOT" /usr/bin/ldd /usr/local/bin/hearth 2>&1 || true; }
missing() { libraries | sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/\1/p'; }
phase "ldd /usr/local/bin/hearth inside the root"
output=$(libraries)
if grep -qE 'not a dynamic executable|statically linked' <<<"$output"; then
  fail "the binary is not dynamically linked: nothing to check ($output)"
fi
absent=$(missing)
if [ -n "$absent" ]; then
  printf 'missing in a root with only the base system and %s:\n' "${PACKAGES[*]}" >&2
  printf '  %s\n' $absent >&2
  if grep -q '^libswift' <<<"$absent"; then
    echo "(the Swift runtime: build with --static-swift-stdlib, as docs/deploying.md says)" >&2
  fi
  fail "the binary needs $(echo $absent) which the documented runtime packages do not provide: add the package that ships it to the table in docs/deploying.md (and the Dockerfile's run stage)"
fi
declare -A library_package=()
while read -r soname arrow path _; do
  [ -n "$soname" ] || continue
  [[ $soname == /* ]] && { path=$soname; soname=$(basename "$soname"); }
  [ "$arrow" = "=>" ] || path=""
  if [[ $path != /* ]]; then printf '   %-22s (the kernel)\n' "$soname"; continue; fi
  package=$(dpkg_owner "$ROOT" "$path") || fail "$path ($soname) belongs to no package in the root"
  library_package[$soname]=$package
  if grep -qx "$package" "$cached/base-packages"; then
    source="base system"
  elif [[ " $documented " == *" $package "* ]]; then
    source="runtime package"
  else
    source="brought by apt with a runtime package"
  fi
  printf '   %-22s %-45s %s (%s)\n' "$soname" "$path" "$package" "$source"
done <<<"$output"
for package in "${PACKAGES[@]}"; do
  used=no
  for soname in "${!library_package[@]}"; do [ "${library_package[$soname]}" = "$package" ] && used=yes; done
  [ "$used" = yes ] || echo "   note: $package provides none of the linked libraries (a runtime file, not a library)"
done

# ---- 4: run it --------------------------------------------------------------------------------
# The root as its own machine: a new mount and PID namespace with /proc (a static Swift
# binary reads its arguments from /proc), chrooted, as SERVICE_UID, with a bare environment.
# An array, not a function: `"${IN_ROOT[@]}" hearth serve &` makes $! unshare itself, whose
# one child is then hearth (setpriv and env exec into it).
IN_ROOT=(unshare --pid --fork --kill-child --mount-proc=/proc "--root=$ROOT" --wd=/
  setpriv "--reuid=$SERVICE_UID" "--regid=$SERVICE_UID" --clear-groups
  /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent)
phase "hearth --version inside the root"
version=$("${IN_ROOT[@]}" hearth --version 2>&1) || fail "hearth --version inside the root: $version"
echo "   $version"

phase "hearth serve --port 0 inside the root (uid $SERVICE_UID)"
mkdir -p "$ROOT/etc/hearth" "$ROOT/srv/hearth-data"
cp rules.json "$ROOT/etc/hearth/rules.json"
chown "$SERVICE_UID:$SERVICE_UID" "$ROOT/srv/hearth-data"
chmod 0700 "$ROOT/srv/hearth-data"
"${IN_ROOT[@]}" hearth serve --port 0 --data-dir /srv/hearth-data --rules /etc/hearth/rules.json >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
# hearth: unshare's child, PID 1 of its namespace.
HEARTH_PID=""
deadline=$((SECONDS + START_SECONDS))
until HEARTH_PID=$(cat "/proc/$SERVER_PID/task/$SERVER_PID/children" 2>/dev/null | awk '{print $1}'); [ -n "$HEARTH_PID" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "hearth serve did not start inside the root"
  sleep 0.1
done
url=""
deadline=$((SECONDS + START_SECONDS))
until url=$(sed -n 's/.*listening on \(http:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/serve.log" | head -n 1); [ -n "$url" ]; do
  kill -0 "$SERVER_PID" 2>/dev/null || fail "hearth serve exited inside the root before it listened"
  [ "$SECONDS" -lt "$deadline" ] || fail "no 'listening on' within $START_SECONDS s"
  sleep 0.1
done
echo "   listening on $url"
[ "$(cat "/proc/$HEARTH_PID/comm" 2>/dev/null)" = hearth ] || fail "unshare's child $HEARTH_PID is not hearth"
health=$(curl -sS "$url/healthz") || fail "GET /healthz"
[ "$health" = '{"status":"ok"}' ] || fail "GET /healthz answered $health"
echo "   GET /healthz: $health"
admin=$("${IN_ROOT[@]}" hearth token --admin --data-dir /srv/hearth-data) || fail "hearth token --admin inside the root"
status=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $admin" "$url/runtime-check.json" \
  -d '{"packages":"checked"}')
[ "$status" = 200 ] || fail "PUT /runtime-check.json with an admin token answered $status"
answer=$(curl -sS -H "Authorization: Bearer $admin" "$url/runtime-check/packages.json")
[ "$answer" = '"checked"' ] || fail "GET /runtime-check/packages.json answered $answer"
echo "   REST write and read with a token from hearth token: $answer"
stop_server TERM "$HEARTH_PID" "$SERVER_PID" "$STOP_SECONDS"
SERVER_PID=""
echo "   SIGTERM: exit 0"

# ---- 5: the library check can fail -------------------------------------------------------------
phase "each runtime package's libraries hidden in turn: ldd must name them missing"
for package in "${PACKAGES[@]}"; do
  sonames=()
  for soname in "${!library_package[@]}"; do [ "${library_package[$soname]}" = "$package" ] && sonames+=("$soname"); done
  [ "${#sonames[@]}" -gt 0 ] || continue
  mapfile -t files < <(chroot "$ROOT" dpkg -L "$package" | grep -E '/lib[^/]*\.so[.0-9]*$' || true)
  for file in "${files[@]}"; do if [ -e "$ROOT$file" ] || [ -L "$ROOT$file" ]; then mv "$ROOT$file" "$ROOT$file.hidden"; fi; done
  absent=" $(missing | sort -u | tr '\n' ' ')"
  for file in "${files[@]}"; do if [ -e "$ROOT$file.hidden" ] || [ -L "$ROOT$file.hidden" ]; then mv "$ROOT$file.hidden" "$ROOT$file"; fi; done
  for soname in "${sonames[@]}"; do
    [[ $absent == *" $soname "* ]] || fail "without $package's files, ldd did not report $soname missing (it reported:$absent)"
  done
  echo "   without $package: ldd reports${absent% } missing"
done
[ -z "$(missing)" ] || fail "the root is not whole again after hiding libraries"

phase "check-runtime-packages: OK"

#!/usr/bin/env bash
# Carries out the Dockerfile's steps without a Docker engine (none runs on CI's machines),
# so CI builds and runs what the image would contain:
#
#  1. build stage: checks that the packages its `apt-get install` adds are installed here,
#     copies the build context (minus .dockerignore) into a fresh WORKDIR, and runs its
#     other RUN lines as written (`swift package resolve`, `swift build -c release
#     --static-swift-stdlib ...`, the staging `install` line), the image's paths (WORKDIR,
#     /staging, the toolchain's /usr/libexec/swift) mapped to local ones;
#  2. run stage: debootstraps its base (debian:<suite>-slim -> `debootstrap --variant=minbase
#     <suite>`, the same package set), runs its RUN lines in that root with chroot (apt-get
#     install, the user), and copies in what COPY --from=build names;
#  3. checks the binaries' shared libraries inside that root: each resolves, is on the
#     allow list below, and belongs to a base package or to one the run stage installs;
#  4. runs ENTRYPOINT + CMD as `docker run -e HEARTH_PORT=<free port>` would: PID 1 of its
#     own PID namespace, chrooted, as USER, in WORKDIR, with only the image's ENV; then
#     probes the HEALTHCHECK command, signs up and writes through the API, mints a token
#     with `hearth token` the `docker exec` way, reloads the rules with SIGHUP, runs
#     the README's indexed query, then `hearth backup` and `hearth restore` into a new
#     directory the `docker exec` way (the image's SQLite), stops with
#     STOPSIGNAL (must exit 0 within 20 s), checks the health check now fails, starts again
#     on the same /data (the volume) and reads the write back.
#
# Dockerfile and script stay in step because every step comes from the Dockerfile: an
# instruction this script does not know fails the run rather than being skipped.
#
# Needs root (chroot, unshare), debootstrap, curl, python3, swift, and Debian's package
# mirror. Takes about 4 minutes, most of it the clean release build (2 cores).
#   DOCKER_STEPS_WORK=DIR   work in DIR (default: a new directory under /tmp)
#   DOCKER_STEPS_KEEP=1     keep the work directory (build, root, logs) afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
DOCKERFILE=$REPO/Dockerfile
# shellcheck source=scripts/debian-root.sh
source "$REPO/scripts/debian-root.sh"   # say, phase, fail, need_root_and, debian_mirror, apt_packages, dpkg_owner, kill_server, stop_server, remove_work

# Shared libraries the binaries may link, and where each comes from in the run image.
ALLOWED_LIBS=(
  linux-vdso.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 # the kernel, the loader (libc6)
  libc.so.6 libm.so.6                                        # libc6 (base image)
  libstdc++.so.6 libgcc_s.so.1                               # libstdc++6, libgcc-s1 (base image)
  libsqlite3.so.0                                            # libsqlite3-0 (run stage installs)
  libcrypto.so.3 libssl.so.3                                 # libssl3 (run stage installs)
  libpq.so.5                                                 # libpq5 (run stage installs; the PostgreSQL engine)
  # libpq5's own dependencies (Kerberos, LDAP, SASL, GnuTLS), installed with it:
  libgssapi_krb5.so.2 libkrb5.so.3 libk5crypto.so.3 libkrb5support.so.0 libcom_err.so.2 libkeyutils.so.1
  libldap-2.5.so.0 liblber-2.5.so.0 libsasl2.so.2 libresolv.so.2
  libgnutls.so.30 libp11-kit.so.0 libidn2.so.0 libunistring.so.2 libtasn1.so.6 libnettle.so.8 libhogweed.so.6
  libgmp.so.10 libffi.so.8
)
BASE_LIB_PACKAGES=(libc6 libstdc++6 libgcc-s1)
# The packages apt installs with libpq5 (its Depends, recursively) that own libraries above.
LIBPQ_DEPENDENCY_PACKAGES=(libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
  libldap-2.5-0 libsasl2-2 libgnutls30 libp11-kit0 libidn2-0 libunistring2 libtasn1-6 libnettle8 libhogweed6 libgmp10 libffi8)
STOP_TIMEOUT=20   # what docs/deploying.md tells `docker stop -t` / --stop-timeout

need_root_and debootstrap curl python3 swift unshare setpriv chroot

WORK=${DOCKER_STEPS_WORK:-}
if [ -z "$WORK" ]; then WORK=$(mktemp -d /tmp/hearth-docker-steps.XXXXXX); fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
chmod 0755 "$WORK"
ROOT=$WORK/rootfs
STAGE_DIR=$WORK/stage-build
rm -rf "$ROOT" "$STAGE_DIR" "$WORK"/run*.log
mkdir -p "$STAGE_DIR"

SERVER_PID=""
cleanup() {
  local status=$?
  kill_server "$SERVER_PID" "${PID1:-}"
  if [ "$status" != 0 ]; then
    for log in "$WORK"/run*.log; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  if [ "${DOCKER_STEPS_KEEP:-0}" = 1 ]; then
    echo "kept $WORK"
  else
    remove_work "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------
# The Dockerfile, as a list of shell calls `df_<instruction> LINE ARGS...`, one per
# instruction; unknown instructions, flags and forms are refused here.
# ---------------------------------------------------------------------------------------
python3 - "$DOCKERFILE" >"$WORK/steps.sh" <<'PY'
import json, shlex, sys

def fail(line, why):
    sys.exit(f"docker-steps: FAIL: Dockerfile line {line}: {why}")

def q(*words):
    return " ".join(shlex.quote(str(w)) for w in words)

def command_form(line, text):
    """JSON (exec) form -> ('exec', argv); anything else -> ('shell', text)."""
    text = text.strip()
    if text.startswith("["):
        try:
            argv = json.loads(text)
        except ValueError:
            fail(line, f"not a JSON array: {text}")
        if not all(isinstance(a, str) for a in argv):
            fail(line, "JSON array of strings expected")
        return ["exec", *argv]
    return ["shell", text]

instructions, buffer, start = [], "", None
for number, raw in enumerate(open(sys.argv[1], encoding="utf-8").read().splitlines(), 1):
    stripped = raw.strip()
    if stripped.startswith("#") or (not stripped and not buffer):
        continue            # comments (also inside continuations) and blank lines
    if start is None:
        start = number
    if raw.rstrip().endswith("\\"):
        buffer += raw.rstrip()[:-1] + " "
        continue
    buffer += raw
    instructions.append((start, buffer.strip()))
    buffer, start = "", None
if buffer:
    fail(start, "the file ends inside a continuation")

for line, text in instructions:
    keyword, _, rest = text.partition(" ")
    keyword, rest = keyword.upper(), rest.strip()
    if keyword == "FROM":
        words = rest.split()
        if len(words) == 3 and words[1].upper() == "AS":
            print(q("df_from", line, words[0], words[2]))
        elif len(words) == 1:
            print(q("df_from", line, words[0], ""))
        else:
            fail(line, f"FROM form not understood: {rest}")
    elif keyword in ("RUN", "ENTRYPOINT", "CMD"):
        if rest.startswith("--"):
            fail(line, f"{keyword} flags are not supported here")
        print(q(f"df_{keyword.lower()}", line, *command_form(line, rest)))
    elif keyword == "COPY":
        words = shlex.split(rest) if not rest.lstrip().startswith("[") else None
        flags = {}
        if words is None:
            fail(line, "COPY's JSON form is not supported here")
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            if name != "from":
                fail(line, f"COPY --{name} is not supported here")
            flags[name] = value
        if len(words) < 2:
            fail(line, "COPY needs a source and a destination")
        print(q("df_copy", line, flags.get("from", ""), words[-1], *words[:-1]))
    elif keyword == "ENV":
        words = shlex.split(rest)
        if words and "=" not in words[0]:
            words = [f"{words[0]}={rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ''}"]
        for word in words:
            name, equals, value = word.partition("=")
            if not equals:
                fail(line, f"ENV entry without '=': {word}")
            if "$" in value:
                fail(line, "ENV values with $substitutions are not supported here")
            print(q("df_env", line, name, value))
    elif keyword in ("WORKDIR", "USER", "STOPSIGNAL"):
        print(q(f"df_{keyword.lower()}", line, rest))
    elif keyword in ("VOLUME", "EXPOSE"):
        values = json.loads(rest) if rest.startswith("[") else rest.split()
        print(q(f"df_{keyword.lower()}", line, *values))
    elif keyword == "HEALTHCHECK":
        words = rest.split(None)
        options = {"interval": "30s", "timeout": "30s", "start-period": "0s", "retries": "3"}
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            if name not in options:
                fail(line, f"HEALTHCHECK --{name} is not supported here")
            options[name] = value
        if not words or words[0].upper() != "CMD":
            fail(line, "HEALTHCHECK NONE or without CMD: nothing to test")
        command = rest[rest.upper().index("CMD") + 3:]
        print(q("df_healthcheck", line, options["timeout"], options["start-period"],
                *command_form(line, command)))
    elif keyword == "LABEL":
        continue
    else:
        fail(line, f"{keyword} is not known to scripts/docker-steps.sh: teach it, or the image and CI part ways")
PY

# ---------------------------------------------------------------------------------------
# The instructions' meaning outside Docker.
# ---------------------------------------------------------------------------------------
BUILD_SECONDS=0      # time in the build stage's RUN lines (the Swift build)
STAGES=()            # aliases, in order
STAGE=""             # the stage being read: build or run
BUILD_ALIAS=""
BUILD_WORKDIR=/

ENV_NAMES=() ENV_VALUES=()
RUN_USER=root RUN_WORKDIR=/
RUN_APT_PACKAGES=()
VOLUMES=() EXPOSED=()
HEALTH=() HEALTH_TIMEOUT=30s HEALTH_START=0s
ENTRYPOINT=() CMD=()
STOP_SIGNAL=SIGTERM
TOOLCHAIN=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")  # /opt/swift

# A build-stage path as it is on this machine.
build_path() {
  local path=$1
  case $path in
    "$BUILD_WORKDIR"|"$BUILD_WORKDIR"/*) echo "$STAGE_DIR/src${path#"$BUILD_WORKDIR"}" ;;
    /staging|/staging/*) echo "$STAGE_DIR$path" ;;
    /usr/libexec/swift/*|/usr/lib/swift/*|/usr/lib/swift_static/*) echo "$TOOLCHAIN$path" ;;
    *) return 1 ;;
  esac
}

# A build-stage RUN command with the image's paths replaced by local ones; fails on any
# other absolute path, so nothing is written outside the work directory by accident.
map_build_command() {
  python3 - "$1" "$BUILD_WORKDIR" "$STAGE_DIR" "$TOOLCHAIN" <<'PY'
import re, sys
command, workdir, stage, toolchain = sys.argv[1:]
maps = [(workdir, stage + "/src"), ("/staging", stage + "/staging"),
        ("/usr/libexec/swift", toolchain + "/usr/libexec/swift"),
        ("/usr/lib/swift", toolchain + "/usr/lib/swift"),
        ("/usr/lib/swift_static", toolchain + "/usr/lib/swift_static")]
def replace(match):
    path = match.group(2)
    for image, local in maps:
        if path == image or path.startswith(image + "/"):
            return match.group(1) + local + path[len(image):]
    if path in ("/dev/null",):
        return match.group(0)
    sys.exit(f"docker-steps: FAIL: build RUN names {path}, which has no local place: map it in scripts/docker-steps.sh")
print(re.sub(r'(^|[\s"\'=(])(/[\w./+-]*)', replace, command))
PY
}

df_from() {
  local line=$1 image=$2 alias=$3
  STAGES+=("${alias:-stage${#STAGES[@]}}")
  if [ "${#STAGES[@]}" = 1 ]; then
    STAGE=build BUILD_ALIAS=$alias
    [ -n "$alias" ] || fail "Dockerfile line $line: the build stage needs a name (FROM ... AS build)"
    case $image in
      swift:*) ;;
      *) fail "Dockerfile line $line: the build stage is expected to be an official swift image" ;;
    esac
    local tag=${image#swift:} have
    have=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -n 1)
    if [ "${tag%%-*}" != "$have" ]; then
      echo "warning: the build stage uses $image, this machine has Swift $have: the check is only as good as they are alike" >&2
    fi
    say "build stage: $image (here: Swift $have, $TOOLCHAIN)"
  elif [ "${#STAGES[@]}" = 2 ]; then
    STAGE=run
    phase "run stage: $image"
    local suite
    case $image in
      debian:*) suite=${image#debian:}; suite=${suite%-slim} ;;
      *) fail "Dockerfile line $line: the run stage is expected to be debian:<suite>[-slim]" ;;
    esac
    local mirror
    mirror=$(debian_mirror)
    echo "debootstrap --variant=minbase $suite ($mirror)"
    debootstrap --variant=minbase "$suite" "$ROOT" "$mirror" >"$WORK/debootstrap.log" 2>&1 \
      || { tail -n 20 "$WORK/debootstrap.log"; fail "debootstrap failed"; }
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"   # as Docker gives a container the host's
  else
    fail "Dockerfile line $line: more than two stages; teach scripts/docker-steps.sh"
  fi
}

df_workdir() {
  local line=$1 dir=$2
  if [ "$STAGE" = build ]; then
    BUILD_WORKDIR=$dir
    mkdir -p "$STAGE_DIR/src"
  else
    RUN_WORKDIR=$dir
    mkdir -p "$ROOT$dir"
  fi
}

df_run() {
  local line=$1 form=$2; shift 2
  [ "$form" = shell ] || fail "Dockerfile line $line: RUN's exec form is not supported here"
  local command=$1
  if [ "$STAGE" = build ]; then
    if [[ $command == *"apt-get install"* ]]; then
      local packages
      read -r -a packages <<<"$(apt_packages "$command")"
      echo "build stage installs ${packages[*]}: checking they are installed here"
      dpkg -s "${packages[@]}" >/dev/null 2>&1 || fail "install ${packages[*]} first (.ci/run does)"
      return
    fi
    local mapped
    mapped=$(map_build_command "$command") || exit 1
    phase "build RUN (line $line): $command"
    [ "$mapped" = "$command" ] || echo "   as: $mapped"
    local started=$SECONDS
    mkdir -p "$WORK/tmp"   # SwiftPM leaves lock files in TMPDIR
    (cd "$STAGE_DIR/src" && TMPDIR=$WORK/tmp /bin/sh -c "$mapped") || fail "Dockerfile line $line failed"
    BUILD_SECONDS=$((BUILD_SECONDS + SECONDS - started))
  else
    [[ $command == *"apt-get install"* ]] && read -r -a RUN_APT_PACKAGES <<<"$(apt_packages "$command")"
    echo "run RUN (line $line) in the root: $command"
    local env_args=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root)
    local i
    for i in "${!ENV_NAMES[@]}"; do env_args+=("${ENV_NAMES[$i]}=${ENV_VALUES[$i]}"); done
    chroot "$ROOT" /usr/bin/env -i "${env_args[@]}" /bin/sh -c "cd '$RUN_WORKDIR' && $command" \
      >>"$WORK/run-stage.log" 2>&1 || { tail -n 20 "$WORK/run-stage.log"; fail "Dockerfile line $line failed in the root"; }
  fi
}

df_copy() {
  local line=$1 from=$2 dest=$3; shift 3
  if [ -z "$from" ]; then
    local target
    if [ "$STAGE" = build ]; then
      case $dest in /*) target=$(build_path "$dest") || fail "line $line: $dest" ;; *) target=$STAGE_DIR/src/$dest ;; esac
    else
      case $dest in /*) target=$ROOT$dest ;; *) target=$ROOT$RUN_WORKDIR/$dest ;; esac
    fi
    echo "COPY (line $line) from the context: $* -> $dest"
    python3 - "$REPO" "$target" "$@" <<'PY'
import fnmatch, glob, os, re, shutil, sys
context, target, sources = sys.argv[1], sys.argv[2], sys.argv[3:]

def pattern_regex(pattern):
    pattern = os.path.normpath(pattern.strip()).lstrip("/")
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3; continue
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2; continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)); i += 1
    return re.compile(out + r"\Z")

rules = []
ignore = os.path.join(context, ".dockerignore")
if os.path.exists(ignore):
    for raw in open(ignore, encoding="utf-8"):
        raw = raw.strip()
        if raw and not raw.startswith("#"):
            negate = raw.startswith("!")
            rules.append((pattern_regex(raw[1:] if negate else raw), negate))

def ignored(relative):
    parts = relative.split("/")
    candidates = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    result = False
    for regex, negate in rules:
        if any(regex.match(c) for c in candidates):
            result = not negate
    return result

def copy_file(source, destination):
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    if os.path.islink(source):
        if os.path.lexists(destination):
            os.unlink(destination)
        os.symlink(os.readlink(source), destination)
    else:
        shutil.copy2(source, destination)

def copy_tree(source_dir, destination_dir):
    count = 0
    for dirpath, dirnames, filenames in os.walk(source_dir):
        relative_dir = os.path.relpath(dirpath, context)
        relative_dir = "" if relative_dir == "." else relative_dir + "/"
        dirnames[:] = [d for d in dirnames if not ignored(relative_dir + d)]
        for name in filenames:
            if ignored(relative_dir + name):
                continue
            source = os.path.join(dirpath, name)
            copy_file(source, os.path.join(destination_dir, os.path.relpath(source, source_dir)))
            count += 1
    return count

copied = 0
for pattern in sources:
    matches = sorted(glob.glob(os.path.join(context, pattern)))
    matches = [m for m in matches if os.path.relpath(m, context) == "." or not ignored(os.path.relpath(m, context))]
    if not matches:
        sys.exit(f"docker-steps: FAIL: COPY source {pattern} matches nothing in the context (or only ignored files)")
    for match in matches:
        if os.path.isdir(match) and not os.path.islink(match):
            copied += copy_tree(match, target)
        else:
            into_dir = target.endswith("/") or os.path.isdir(target) or len(sources) > 1
            copy_file(match, os.path.join(target, os.path.basename(match)) if into_dir else target)
            copied += 1
print(f"   {copied} files")
PY
  else
    [ "$from" = "$BUILD_ALIAS" ] || fail "Dockerfile line $line: COPY --from=$from: only the build stage is known"
    local source
    for source in "$@"; do
      local local_source
      local_source=$(build_path "${source%/}") || fail "Dockerfile line $line: $source has no local place"
      echo "COPY (line $line) --from=$from $source -> $dest"
      [ -e "$local_source" ] || fail "Dockerfile line $line: the build stage made no $source"
      if [ -d "$local_source" ]; then
        mkdir -p "$ROOT$dest"
        cp -a "$local_source/." "$ROOT$dest/"
      elif [[ $dest == */ ]]; then
        mkdir -p "$ROOT$dest"
        cp -a "$local_source" "$ROOT$dest"
      else
        mkdir -p "$(dirname "$ROOT$dest")"
        cp -a "$local_source" "$ROOT$dest"
      fi
    done
  fi
}

df_env() {
  [ "$STAGE" = run ] || return 0   # the build stage's environment is this machine's
  ENV_NAMES+=("$2") ENV_VALUES+=("$3")
}
df_user() { RUN_USER=$2; }
df_volume() { shift; VOLUMES+=("$@"); }
df_expose() { shift; EXPOSED+=("$@"); }
df_stopsignal() { STOP_SIGNAL=$2; }
df_healthcheck() { HEALTH_TIMEOUT=$2 HEALTH_START=$3; shift 3; HEALTH=("$@"); }
df_entrypoint() {
  shift
  if [ "$1" = exec ]; then shift; ENTRYPOINT=("$@"); else ENTRYPOINT=(/bin/sh -c "$2"); fi
}
df_cmd() {
  shift
  if [ "$1" = exec ]; then shift; CMD=("$@"); else CMD=(/bin/sh -c "$2"); fi
}

# ---------------------------------------------------------------------------------------
# 1 + 2: the build and the run stage.
# ---------------------------------------------------------------------------------------
phase "reading $DOCKERFILE"
# shellcheck source=/dev/null
source "$WORK/steps.sh"
[ "${#STAGES[@]}" = 2 ] || fail "expected a build and a run stage"
[ "${#ENTRYPOINT[@]}" -gt 0 ] || fail "the run stage has no ENTRYPOINT"
[ "${#HEALTH[@]}" -gt 0 ] || fail "the run stage has no HEALTHCHECK"
[ "${#VOLUMES[@]}" -gt 0 ] || fail "the run stage declares no VOLUME"

# The run stage's user, as Docker resolves USER: names from the image's /etc/passwd.
run_user=${RUN_USER%%:*} run_group=${RUN_USER#*:}
[ "$run_group" != "$RUN_USER" ] || run_group=""
UID_NUMBER=$(chroot "$ROOT" id -u "$run_user") || fail "USER $run_user does not exist in the image"
if [ -n "$run_group" ]; then
  GID_NUMBER=$(chroot "$ROOT" getent group "$run_group" | cut -d: -f3)
else
  GID_NUMBER=$(chroot "$ROOT" id -g "$run_user")
fi
[ -n "$GID_NUMBER" ] || fail "USER's group $run_group does not exist in the image"
[ "$UID_NUMBER" != 0 ] || fail "the image runs as root"
RUN_HOME=$(chroot "$ROOT" getent passwd "$run_user" | cut -d: -f6)
echo "USER $RUN_USER = $UID_NUMBER:$GID_NUMBER, home $RUN_HOME; VOLUME ${VOLUMES[*]}; EXPOSE ${EXPOSED[*]}"
for volume in "${VOLUMES[@]}"; do
  [ "$(stat -c %u "$ROOT$volume")" = "$UID_NUMBER" ] || fail "VOLUME $volume does not belong to $RUN_USER: a new named volume could not be written"
done

# ---------------------------------------------------------------------------------------
# 3: shared libraries.
# ---------------------------------------------------------------------------------------
phase "shared libraries (ldd inside the run image)"
allowed_packages=("${BASE_LIB_PACKAGES[@]}" "${RUN_APT_PACKAGES[@]}" "${LIBPQ_DEPENDENCY_PACKAGES[@]}")
checked=0
while IFS= read -r -d '' binary; do
  if ! head -c 4 "$binary" | grep -q $'\x7fELF'; then continue; fi
  output=$(chroot "$ROOT" ldd "${binary#"$ROOT"}" 2>&1 || true)
  if grep -qE 'not a dynamic executable|statically linked' <<<"$output"; then
    echo "${binary#"$ROOT"}: statically linked"
    continue
  fi
  echo "${binary#"$ROOT"}:"
  while read -r soname arrow path _; do
    [ -n "$soname" ] || continue
    [[ $soname == /* ]] && { path=$soname; soname=$(basename "$soname"); }
    [ "$arrow" = "=>" ] || [ "$arrow" = "" ] || [[ $arrow == \(* ]] || path=$arrow
    [ "$path" != "not" ] || fail "$soname is not found in the run image"
    allowed=no
    for name in "${ALLOWED_LIBS[@]}"; do [ "$name" = "$soname" ] && allowed=yes; done
    [ "$allowed" = yes ] || fail "$soname is not on the allow list (scripts/docker-steps.sh ALLOWED_LIBS): the run stage must install it, or the link must go"
    if [[ $path == /* ]]; then
      owner=$(dpkg_owner "$ROOT" "$path") || fail "$path ($soname) belongs to no package in the run image"
      ok=no
      for package in "${allowed_packages[@]}"; do [ "$package" = "$owner" ] && ok=yes; done
      [ "$ok" = yes ] || fail "$soname comes from $owner, which is neither a base package (${BASE_LIB_PACKAGES[*]}) nor one the run stage installs (${RUN_APT_PACKAGES[*]})"
      printf '  %-22s %s (%s)\n' "$soname" "$path" "$owner"
    else
      printf '  %-22s (kernel)\n' "$soname"
    fi
  done <<<"$output"
  checked=$((checked + 1))
done < <(find "$ROOT/usr/local" -type f -perm -u+x -print0)
[ "$checked" -gt 0 ] || fail "no dynamically linked binary under /usr/local: nothing checked"

# ---------------------------------------------------------------------------------------
# 4: run it as the image would.
# ---------------------------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOSTNAME=hearth-docker-steps "HOME=$RUN_HOME")
for i in "${!ENV_NAMES[@]}"; do container_env+=("${ENV_NAMES[$i]}=${ENV_VALUES[$i]}"); done
container_env+=("HEARTH_PORT=$PORT")   # docker run -e HEARTH_PORT=...: CI may have 9000 taken
signal_name=${STOP_SIGNAL#SIG}
env_value() {   # a variable as the container sees it (the last assignment wins)
  local entry value=""
  for entry in "${container_env[@]}"; do [[ $entry == "$1="* ]] && value=${entry#*=}; done
  echo "$value"
}

start_container() {   # docker run: PID 1 of a new PID namespace, chrooted, as USER
  local log=$1
  unshare --pid --fork --kill-child --mount-proc=/proc --root="$ROOT" --wd="$RUN_WORKDIR" \
    setpriv --reuid="$UID_NUMBER" --regid="$GID_NUMBER" --clear-groups \
    /usr/bin/env -i "${container_env[@]}" "${ENTRYPOINT[@]}" "${CMD[@]}" >"$log" 2>&1 &
  SERVER_PID=$!
  PID1=""
  for _ in $(seq 50); do
    PID1=$(cat "/proc/$SERVER_PID/task/$SERVER_PID/children" 2>/dev/null | awk '{print $1}')
    [ -n "$PID1" ] && break
    sleep 0.1
  done
  [ -n "$PID1" ] || fail "the container's PID 1 did not start (see $log)"
}
# docker exec: the image's root, user, environment and working directory, with /proc
# mounted as in any container (without /proc a static Swift binary sees no arguments).
container_exec() {
  unshare --pid --fork --kill-child --mount-proc=/proc --root="$ROOT" --wd="$RUN_WORKDIR" \
    setpriv --reuid="$UID_NUMBER" --regid="$GID_NUMBER" --clear-groups \
    /usr/bin/env -i "${container_env[@]}" "$@"
}
healthcheck() {   # HEALTHCHECK's command, killed after its --timeout as Docker does
  if [ "${HEALTH[0]}" = exec ]; then
    container_exec timeout "${HEALTH_TIMEOUT%s}" "${HEALTH[@]:1}"
  else
    container_exec timeout "${HEALTH_TIMEOUT%s}" /bin/sh -c "${HEALTH[1]}"
  fi
}
wait_healthy() {
  local deadline=$((SECONDS + ${HEALTH_START%s} + 20))
  until healthcheck 2>/dev/null; do
    kill -0 "$SERVER_PID" 2>/dev/null || fail "the server exited before it was healthy"
    [ "$SECONDS" -lt "$deadline" ] || fail "HEALTHCHECK never passed"
    sleep 0.3
  done
}
stop_container() {    # docker stop: STOPSIGNAL to PID 1, wait, expect exit 0
  local log=$1 started=$SECONDS
  stop_server "$signal_name" "$PID1" "$SERVER_PID" "$STOP_TIMEOUT"
  SERVER_PID=""
  grep -q "received signal" "$log" || fail "no 'received signal' in $log"
  echo "   $STOP_SIGNAL -> exit 0 after $((SECONDS - started)) s"
}
url=http://127.0.0.1:$PORT
body='{"id":"f1","name":"Oslo","createdAt":1,"createdBy":"UID","latitude":59.91,"longitude":10.75}'

phase "docker run: ${ENTRYPOINT[*]} ${CMD[*]} (PID 1, uid $UID_NUMBER, port $PORT)"
start_container "$WORK/run1.log"
wait_healthy
grep -q "listening on http://0.0.0.0:$PORT" "$WORK/run1.log" || fail "no 'listening on http://0.0.0.0:$PORT' line"
echo "   HEALTHCHECK ${HEALTH[*]:1} passes"
[ "$(curl -sS "$url/healthz")" = '{"status":"ok"}' ] || fail "GET /healthz from outside"
signup=$(curl -sS -X POST "$url/v1/accounts:signUp" -d '{"returnSecureToken":true}')
user_id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["localId"])' "$signup") \
  || fail "anonymous sign-up: $signup"
token=$(container_exec hearth token --uid "$user_id") || fail "docker exec ... hearth token"
status=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT "$url/users/$user_id/favorites/f1.json?auth=$token" \
  -d "${body//UID/$user_id}")
[ "$status" = 200 ] || fail "PUT with the token from hearth token answered $status"
status=$(curl -sS -o /dev/null -w '%{http_code}' "$url/users/$user_id/favorites.json")
[ "$status" = 401 ] || fail "the image's default rules let a signed-out read through ($status)"
echo "   signed up, wrote with a token from 'docker exec ... hearth token', rules refuse the anonymous read"
kill -HUP "$PID1"
for _ in $(seq 50); do grep -q "rules reloaded" "$WORK/run1.log" && break; sleep 0.1; done
grep -q "rules reloaded from $(env_value HEARTH_RULES)" "$WORK/run1.log" || fail "SIGHUP did not reload the rules"
echo "   SIGHUP reloaded the rules"
# The README's indexed query, then a backup and a restore inside the image's libraries
# (Debian 12's SQLite 3.40.1 failed the backup's integrity check once an index
# existed). A write acknowledged after the query comes from the same serial writer that
# built the index, so the backup holds it.
answer=$(curl -sS "$url/users/$user_id/favorites.json?orderBy=%22createdAt%22&limitToLast=10&auth=$token")
[[ $answer == *'"name":"Oslo"'* ]] || fail "the indexed query answered $answer"
admin=$(container_exec hearth token --admin) || fail "docker exec ... hearth token --admin"
status=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $admin" "$url/marker.json" -d 1)
[ "$status" = 200 ] || fail "PUT as admin answered $status"
container_exec hearth backup "${VOLUMES[0]}/backup-1" >"$WORK/backup.log" 2>&1 \
  || fail "hearth backup inside the image: $(cat "$WORK/backup.log")"
rows=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM query_index").fetchone()[0])' \
  "$ROOT${VOLUMES[0]}/backup-1/hearth.sqlite")
[ "$rows" -ge 1 ] || fail "the backup holds no query index rows ($rows): the index was not exercised"
container_exec hearth restore "${VOLUMES[0]}/backup-1" --data-dir "${VOLUMES[0]}/restored" >"$WORK/restore.log" 2>&1 \
  || fail "hearth restore into a new directory inside the image: $(cat "$WORK/restore.log")"
[ "$(stat -c %a "$ROOT${VOLUMES[0]}/restored")" = 700 ] || fail "the restored data directory is not 0700"
restored=$(container_exec hearth export --path "/users/$user_id/favorites" --data-dir "${VOLUMES[0]}/restored") \
  || fail "hearth export of the restored directory"
[[ $restored == *'"name":"Oslo"'* ]] || fail "the restored directory lacks the write: $restored"
echo "   indexed query, then backup ($rows index rows) and restore into a new directory inside the image"
stop_container "$WORK/run1.log"
if healthcheck 2>/dev/null; then fail "HEALTHCHECK passes with the server stopped"; fi
echo "   HEALTHCHECK fails once it is stopped"
for file in "$ROOT${VOLUMES[0]}"/*; do
  [ "$(stat -c %u "$file")" = "$UID_NUMBER" ] || fail "$file in the volume is not owned by uid $UID_NUMBER"
done

phase "docker run again on the same ${VOLUMES[0]}"
start_container "$WORK/run2.log"
wait_healthy
answer=$(curl -sS "$url/users/$user_id/favorites/f1/name.json?auth=$token")
[ "$answer" = '"Oslo"' ] || fail "the write did not survive the restart: $answer"
echo "   the write and the signing key survived the restart"
stop_container "$WORK/run2.log"

size=$(du -sh "$ROOT/usr/local/bin/hearth" | cut -f1)
phase "docker-steps: OK (build stage RUN lines $BUILD_SECONDS s, binary $size)"

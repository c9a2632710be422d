#!/usr/bin/env bash
# Checks that the install lines in the docs work as written both as root on a machine
# without sudo (a container, a fresh VM) and as a user with sudo. The convention (README,
# "Run it"): a command that needs root begins with `$(command -v sudo)`, which is `sudo`
# for a user and nothing for root without sudo; a command run as another user is
# `$(command -v sudo) runuser -u USER -- ...`.
#
#  1. no doc (every tracked *.md) has a bare sudo: not in a code block, and no inline
#     code span begins with it. The scripts (scripts/, .ci/) never run sudo at all: a
#     line there may only print the convention (`\$(command -v sudo)` in a message);
#  2. in every shell code block (```sh, ```bash, ```shell), a command that needs root
#     (apt-get, useradd, runuser, systemctl, certbot, or install/cp/tee/ln/mkdir/chown...
#     on a system path) begins with the prefix;
#  3. every block that uses the prefix (an install block) passes `bash -n`, and writes no
#     file by a redirection to a system path (a redirection is the calling shell's, sudo
#     does not reach it: `| $(command -v sudo) tee FILE` does);
#  4. every install block is run twice with every external command stubbed (PATH holds
#     nothing, bash's command_not_found_handle records each command instead of running
#     it): as root without sudo, the commands must run as written with no sudo in front;
#     as a user, with a recording `sudo` on PATH, the same commands, each prefixed one
#     through sudo.
#
# Usage: scripts/check-install-lines.sh [DIR]   (DIR: the tree to check, default this
# repository; scripts/check-install-lines-test.sh gives it made-up ones). No root, no
# network: CI runs it from .ci/run.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
PREFIX='$(command -v sudo)'
problems=0
problem() { printf 'check-install-lines: %s\n' "$*" >&2; problems=$((problems + 1)); }

WORK=$(mktemp -d /tmp/hearth-check-install-lines.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; then
  mapfile -t docs < <(git ls-files '*.md')
  mapfile -t scripts < <(git ls-files scripts .ci | grep -v '\.md$')
else
  mapfile -t docs < <(find . -name '*.md' -not -path './.build*' -printf '%P\n' | sort)
  mapfile -t scripts < <(find scripts .ci -type f -not -name '*.md' 2>/dev/null | sort)
fi
[ "${#docs[@]}" -gt 0 ] || { echo "check-install-lines: no docs found" >&2; exit 1; }

# ---- 1: scripts never run sudo -------------------------------------------------------------
# FILE ALLOWED: the lines of FILE that still name sudo once every ALLOWED is taken out,
# as NUMBER:TEXT.
bare_sudo() {
  local number text
  while IFS=: read -r number text; do
    if grep -qwE 'sudo|sudoedit' <<<"${text//"$2"/}"; then printf '%s:%s\n' "$number" "$text"; fi
  done < <(grep -InwE 'sudo|sudoedit' "$1" || true)
}
for file in "${scripts[@]}"; do
  case $file in   # the check and its test name what they look for
    scripts/check-install-lines.sh | scripts/check-install-lines-test.sh) continue ;;
  esac
  while IFS=: read -r number text; do
    problem "$file:$number runs sudo (scripts run as the user who started them; print \\$PREFIX in a message instead): $text"
  done < <(bare_sudo "$file" "\\$PREFIX")
done

# ---- the docs' code blocks ---------------------------------------------------------------------
# Each fenced block becomes a file under $WORK/blocks, its fence's indentation removed,
# named after its document and first line; prose lines go to $WORK/prose as FILE:LINE:TEXT.
mkdir -p "$WORK/blocks"
: >"$WORK/prose"
for doc in "${docs[@]}"; do
  awk -v doc="$doc" -v dir="$WORK/blocks" -v prose="$WORK/prose" '
    !inside && match($0, /^[ \t]*```/) {
      indent = RLENGTH - 3
      lang = substr($0, RLENGTH + 1); gsub(/[ \t]/, "", lang)
      name = doc; gsub(/\//, "%", name)
      out = sprintf("%s/%s@%d.%s", dir, name, NR + 1, lang == "" ? "text" : lang)
      printf "" > out
      inside = 1; next
    }
    inside && /^[ \t]*```[ \t]*$/ { close(out); inside = 0; next }
    inside { print substr($0, indent + 1) > out; next }
    { print doc ":" NR ":" $0 >> prose }
  ' "$doc"
done

# ---- 1: no bare sudo in the docs ----------------------------------------------------------------
while IFS= read -r entry; do
  text=${entry#*:*:}
  spans=$(grep -oE '`[^`]*`' <<<"$text" || true)
  if grep -qE '^`[[:space:]]*(sudo|sudoedit)[[:space:]]' <<<"$spans"; then
    problem "${entry%":$text"} has a command beginning with bare sudo: write $PREFIX instead: $text"
  fi
done < <(grep -wE 'sudo|sudoedit' "$WORK/prose" || true)
# BLOCK: the document and line a block begins at, as DOC LINE.
block_place() {
  local name
  name=$(basename "$1"); name=${name%.*}; name=${name//%//}
  echo "${name%@*} ${name##*@}"
}
for block in "$WORK"/blocks/*; do
  read -r doc first < <(block_place "$block")
  while IFS=: read -r number text; do
    problem "$doc:$((first + number - 1)) has a bare sudo: write $PREFIX instead: $text"
  done < <(bare_sudo "$block" "$PREFIX")
done

# ---- 2: root commands carry the prefix ----------------------------------------------------------
root_commands='apt-get|apt|dpkg|useradd|groupadd|usermod|userdel|runuser|systemctl|certbot'
system_path=' /(etc|usr|srv|var|opt|lib)/'
file_commands='install|cp|mv|ln|tee|mkdir|chown|chmod|rm'
shell_blocks=()
for block in "$WORK"/blocks/*.sh "$WORK"/blocks/*.bash "$WORK"/blocks/*.shell; do
  [ -e "$block" ] && shell_blocks+=("$block")
done
[ "${#shell_blocks[@]}" -gt 0 ] || problem "no shell code blocks found in the docs: nothing checked"
# BLOCK: each command of the block as LINE<TAB>COMMAND, its line split at && || ; | $( and
# the prefix taken off (ASSIGNMENT= words stay); comments and here-document bodies skipped.
commands_of() {
  local number=0 heredoc="" line code segment
  while IFS= read -r line; do
    number=$((number + 1))
    if [ -n "$heredoc" ]; then [ "$line" = "$heredoc" ] && heredoc=""; continue; fi
    if [[ $line =~ \<\<-?\'?([A-Za-z_]+)\'? ]]; then heredoc=${BASH_REMATCH[1]}; fi
    code=${line%%[[:space:]]#*}; [[ $code == \#* ]] && continue
    code=${code//"$PREFIX"/@PREFIX@}   # kept whole through the split
    while IFS= read -r segment; do
      segment=${segment#"${segment%%[![:space:]]*}"}
      [ -n "$segment" ] && printf '%d\t%s\n' "$number" "${segment//@PREFIX@/$PREFIX}"
    done < <(sed -e 's/&&/\n/g; s/||/\n/g; s/;/\n/g; s/|/\n/g; s/\$(/\n/g' <<<"$code")
  done <"$1"
}
install_blocks=()
for block in "${shell_blocks[@]}"; do
  read -r where first < <(block_place "$block")
  while IFS=$'\t' read -r number segment; do
    [[ $segment == "$PREFIX "* ]] && continue
    if [[ $segment =~ ^($root_commands)([[:space:]]|$) ]] \
      || { [[ $segment =~ ^($file_commands)[[:space:]] ]] && [[ " $segment" =~ $system_path ]]; }; then
      problem "$where:$((first + number - 1)) needs root but does not begin with $PREFIX: $segment"
    fi
  done < <(commands_of "$block")
  grep -qF "$PREFIX" "$block" && install_blocks+=("$block")
done
[ "${#install_blocks[@]}" -gt 0 ] || problem "no install block (a shell block using $PREFIX) found: nothing to run"

# ---- 3 + 4: the install blocks, parsed and run with stubs --------------------------------------
empty=$WORK/empty-path            # PATH for the root run: no sudo, no other command
with_sudo=$WORK/sudo-path         # PATH for the user run: only a recording sudo
mkdir -p "$empty" "$with_sudo"
cat >"$with_sudo/sudo" <<'SH'
#!/bin/bash
printf 'sudo %s\n' "${*//"$STUBS"/}" >>"$COMMANDS"
SH
chmod +x "$with_sudo/sudo"
# Before the block: every command not found (all of them) is recorded, not run.
cat >"$WORK/prelude.sh" <<'SH'
command_not_found_handle() { printf '%s\n' "$*" >>"$COMMANDS"; return 0; }
SH
# A command named by a path (scripts/test.sh, /srv/.../bin/pip) is run by bash without a
# look-up, so the handler never sees it: a recording stub stands in its place, relative
# ones in the scratch directory, absolute ones under $WORK/stubs with the block's copy
# naming them there. Each stub records the name the block gives it.
run_block() {   # BLOCK PATH LOG: the block in a bare bash, in a scratch directory
  local scratch copy name stub
  scratch=$(mktemp -d "$WORK/cwd.XXXXXX")
  copy=$scratch.sh
  cp "$1" "$copy"
  while IFS=$'\t' read -r _ name; do
    name=${name#"$PREFIX "}
    while [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*[[:space:]]+(.*)$ ]]; do name=${BASH_REMATCH[1]}; done
    name=${name%%[[:space:]]*}
    [[ $name == */* ]] || continue
    case $name in
      /*) stub=$WORK/stubs$name; sed -i "s#$name#$stub#g" "$copy" ;;
      *) stub=$scratch/$name ;;
    esac
    mkdir -p "$(dirname "$stub")"
    printf '#!/bin/bash\nprintf "%%s\\n" "%s $*" >>"$COMMANDS"\n' "$name" >"$stub"
    chmod +x "$stub"
  done < <(commands_of "$1")
  (cd "$scratch" && env -i PATH="$2" HOME="$scratch" COMMANDS="$3" STUBS="$WORK/stubs" /bin/bash --norc --noprofile \
    -c 'source "$1"; source "$2"' run "$WORK/prelude.sh" "$copy") >"$3.out" 2>&1
}
ran=0
for block in "${install_blocks[@]}"; do
  read -r doc first < <(block_place "$block")
  where=$doc:$first
  if ! errors=$(/bin/bash -n "$block" 2>&1); then
    problem "$where: the install block does not parse: $errors"
    continue
  fi
  redirect=$(grep -nE '(^|[^0-9&])>>?[[:space:]]*/' "$block" | grep -vE '>>?[[:space:]]*/dev/null' || true)
  if [ -n "$redirect" ]; then
    problem "$where: the install block writes a system path by redirection, which sudo does not reach (use | $PREFIX tee FILE): $redirect"
    continue
  fi
  root_log=$WORK/root.log user_log=$WORK/user.log
  : >"$root_log"; : >"$user_log"
  run_block "$block" "$empty" "$root_log" || problem "$where: the block failed as root without sudo: $(tail -n 3 "$root_log.out")"
  run_block "$block" "$with_sudo" "$user_log" || problem "$where: the block failed as a user with sudo: $(tail -n 3 "$user_log.out")"
  if grep -q '^sudo' "$root_log"; then
    problem "$where: as root without sudo, sudo was still called: $(grep '^sudo' "$root_log" | head -n 1)"
  fi
  prefixes=$(grep -oF "$PREFIX" "$block" | wc -l)
  through_sudo=$(grep -c '^sudo ' "$user_log" || true)
  if [ "$through_sudo" != "$prefixes" ]; then
    problem "$where: as a user, $through_sudo commands went through sudo, the block prefixes $prefixes"
  fi
  if ! diff <(sed 's/^sudo //' "$user_log") "$root_log" >"$WORK/diff"; then
    problem "$where: as root and as a user the block runs different commands: $(head -n 5 "$WORK/diff")"
  fi
  [ "$prefixes" -gt 0 ] && [ -s "$root_log" ] || problem "$where: the block ran no command"
  ran=$((ran + 1))
  printf '   %-40s %2d commands, %2d through sudo as a user, none as root\n' "$where" "$(wc -l <"$root_log")" "$through_sudo"
done

if [ "$problems" -gt 0 ]; then
  echo "check-install-lines: FAIL: $problems problems" >&2
  exit 1
fi
echo "check-install-lines: OK (${#docs[@]} docs, ${#shell_blocks[@]} shell blocks, $ran install blocks run as root and as a user, ${#scripts[@]} scripts without sudo)"

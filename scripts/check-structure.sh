#!/usr/bin/env bash
# The repository's structure, checked in CI (scripts/test.sh runs it before the build):
#   --lines    no Swift file under Sources/ is longer than MAX_LINES lines (the console's
#              page assets, Sources/HearthServer/Console/*Assets*.swift, aside: they are
#              the pages' HTML, CSS and JavaScript as strings);
#   --imports  at most MAX_STORE_IMPORTERS files under Sources/HearthServer import
#              HearthStore (the wiring that opens stores; everything else reaches data
#              through the database core).
# No option: both. ROOT (default: the repository) is the tree to check, so the check can be
# tried on a made-up tree (scripts/check-structure-test.sh). Exits 1 naming every
# offender, 2 on a usage error.
set -euo pipefail

# The longest a source file may be, in lines.
MAX_LINES=500
# How many HearthServer files may import HearthStore.
MAX_STORE_IMPORTERS=3

usage() { echo "usage: $0 [--lines] [--imports] [ROOT]" >&2; exit 2; }

checks=()
root=""
for argument in "$@"; do
  case "$argument" in
    --lines|--imports) checks+=("${argument#--}") ;;
    -*) usage ;;
    *) [ -z "$root" ] || usage; root="$argument" ;;
  esac
done
[ "${#checks[@]}" -gt 0 ] || checks=(lines imports)
root=${root:-"$(dirname "$0")/.."}
[ -d "$root/Sources" ] || { echo "check-structure: no Sources/ in $root" >&2; exit 2; }
cd "$root"

failed=0

check_lines() {
  local offenders=() file count
  while IFS= read -r -d '' file; do
    case "$file" in Sources/HearthServer/Console/*Assets*.swift) continue ;; esac
    count=$(awk 'END { print NR }' "$file")
    if [ "$count" -gt "$MAX_LINES" ]; then offenders+=("$file ($count lines)"); fi
  done < <(find Sources -type f -name '*.swift' -print0 | sort -z)
  if [ "${#offenders[@]}" -gt 0 ]; then
    echo "check-structure: ${#offenders[@]} Swift file(s) under Sources/ longer than $MAX_LINES lines; split each by idea:" >&2
    printf '  %s\n' "${offenders[@]}" >&2
    failed=1
  else
    echo "check-structure: no Swift file under Sources/ is longer than $MAX_LINES lines"
  fi
}

check_imports() {
  local importers=()
  if [ -d Sources/HearthServer ]; then
    # `import HearthStore`, also `@testable`/`@_exported` or `import struct HearthStore.X`;
    # not a module whose name only begins so.
    mapfile -t importers < <(grep -rlE --include='*.swift' \
      '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*import[[:space:]]+([a-z]+[[:space:]]+)?HearthStore([[:space:].]|$)' \
      Sources/HearthServer | sort)
  fi
  if [ "${#importers[@]}" -gt "$MAX_STORE_IMPORTERS" ]; then
    echo "check-structure: ${#importers[@]} files under Sources/HearthServer import HearthStore (at most $MAX_STORE_IMPORTERS, the wiring):" >&2
    printf '  %s\n' "${importers[@]}" >&2
    failed=1
  else
    echo "check-structure: ${#importers[@]} file(s) under Sources/HearthServer import HearthStore (at most $MAX_STORE_IMPORTERS)"
  fi
}

for check in "${checks[@]}"; do "check_$check"; done
exit "$failed"

#!/usr/bin/env bash
# Tries scripts/check-structure.sh on made-up trees: it must fail on a 501-line source file
# and on a fourth HearthServer file importing HearthStore, naming them, and pass at the
# limits (500 lines; three importers; the console's page assets of any length; a module
# whose name only begins with HearthStore). scripts/test.sh runs it before the check itself.
set -euo pipefail
check="$(cd "$(dirname "$0")" && pwd)/check-structure.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
failures=0

# expect STATUS NEEDLE ARGS...: the check exits STATUS and its output holds NEEDLE.
expect() {
  local status=$1 needle=$2 output actual
  shift 2
  set +e
  output=$("$check" "$@" 2>&1)
  actual=$?
  set -e
  if [ "$actual" -ne "$status" ] || [[ "$output" != *"$needle"* ]]; then
    echo "check-structure-test: FAILED: $* exited $actual (expected $status), output without \"$needle\":" >&2
    echo "$output" >&2
    failures=$((failures + 1))
  fi
}

lines() { local n=$1 file=$2; mkdir -p "$(dirname "$file")"; for ((i = 0; i < n; i++)); do echo "// $i"; done > "$file"; }

mkdir -p "$tree/Sources/HearthServer/Console" "$tree/Sources/Other"
lines 500 "$tree/Sources/Other/AtTheLimit.swift"
lines 1200 "$tree/Sources/HearthServer/Console/PageAssets.swift"
for name in A B C; do echo "import HearthStore" > "$tree/Sources/HearthServer/$name.swift"; done
echo "import HearthStoreFixtures" > "$tree/Sources/HearthServer/D.swift"
echo "import HearthStore" > "$tree/Sources/Other/Elsewhere.swift"
expect 0 "no Swift file under Sources/ is longer than 500 lines" --lines "$tree"
expect 0 "3 file(s) under Sources/HearthServer import HearthStore" --imports "$tree"
expect 0 "" "$tree"

lines 501 "$tree/Sources/Other/Deep/TooLong.swift"
expect 1 "Sources/Other/Deep/TooLong.swift (501 lines)" --lines "$tree"
expect 1 "Sources/Other/Deep/TooLong.swift" "$tree"
expect 0 "" --imports "$tree"
rm "$tree/Sources/Other/Deep/TooLong.swift"

mkdir -p "$tree/Sources/HearthServer/Nested"
printf 'import Foundation\n@testable import struct HearthStore.StoreError\n' > "$tree/Sources/HearthServer/Nested/E.swift"
expect 1 "Sources/HearthServer/Nested/E.swift" --imports "$tree"
expect 1 "4 files under Sources/HearthServer import HearthStore" "$tree"
expect 0 "" --lines "$tree"

expect 2 "usage" --bogus "$tree"
expect 2 "no Sources/" "$tree/Sources/Other"

if [ "$failures" -gt 0 ]; then exit 1; fi
echo "check-structure-test: the structure check passes at its limits and fails past them"

#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs each for FUZZ_SECONDS
# (default 60) on a scratch copy of its seed corpus in Fuzz/corpus/<name>/.
# Exits non-zero on any crash, leak or timeout, printing the fuzzer's report.
# Usage: scripts/fuzz.sh [TARGET...]   (default: every target below)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(FuzzHTTPParser FuzzJSONParser FuzzRules)
scratch=.build-fuzz
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for target in "${targets[@]}"; do
  if ! swift build -c debug --scratch-path "$scratch" --sanitize=fuzzer \
       -Xswiftc -sanitize=fuzzer,address --product "$target" >"$log" 2>&1; then
    grep -v "Cannot export local symbol" "$log" | tail -n 40
    echo "building $target failed"; exit 1
  fi
done

for target in "${targets[@]}"; do
  name=${target#Fuzz}; name=${name%Parser}; name=$(echo "$name" | tr '[:upper:]' '[:lower:]')
  work=$(mktemp -d)
  cp -r "Fuzz/corpus/$name/." "$work/"
  echo "== $target for ${SECONDS_EACH}s (seed corpus Fuzz/corpus/$name)"
  status=0
  # Crash reproducers land in the scratch folder, not in the repository.
  (cd "$work" && "$OLDPWD/$scratch/debug/$target" -max_total_time="$SECONDS_EACH" \
      -print_final_stats=1 -artifact_prefix="$work/" "$work") >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "$target FAILED (exit $status); reproducer in $work"; exit "$status"
  fi
  grep -E "number_of_executed_units|new_units_added" "$log" | sed 's/^/   /'
  rm -rf "$work"
done
echo "fuzz smoke run: no crashes"

#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs each for FUZZ_SECONDS
# (default 60) on a copy of its seed corpus. Exits non-zero on any crash.
# Usage: scripts/fuzz.sh [TARGET...]   (default: every target below)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(FuzzHTTPParser FuzzJSONParser)
scratch=.build-fuzz
for target in "${targets[@]}"; do
  swift build -c debug --scratch-path "$scratch" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product "$target"
done
for target in "${targets[@]}"; do
  corpus_name=$(echo "${target#Fuzz}" | sed 's/Parser$//' | tr '[:upper:]' '[:lower:]')
  work=$(mktemp -d)
  cp -r "Fuzz/corpus/$corpus_name/." "$work/"
  echo "== $target for ${SECONDS_EACH}s (corpus Fuzz/corpus/$corpus_name)"
  "$scratch/debug/$target" -max_total_time="$SECONDS_EACH" -print_final_stats=1 "$work" 2>&1 | tail -n 5
  status=${PIPESTATUS[0]}
  rm -rf "$work"
  if [ "$status" -ne 0 ]; then echo "$target failed (exit $status)"; exit "$status"; fi
done

#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs each on a scratch copy of
# its seed corpus in Fuzz/corpus/<name>/. Exits non-zero on any crash, leak or timeout,
# printing the fuzzer's report.
#
#   scripts/fuzz.sh [TARGET...]              smoke run (CI): each target for FUZZ_SECONDS (60), one after another
#   FUZZ_MODE=long scripts/fuzz.sh [TARGET...]   long run: every target at once, under nice, for
#                                            FUZZ_SECONDS (default 1800); each target's final line
#                                            (execs, exec/s, cov, ft, corpus) is appended to
#                                            FUZZ_RESULTS (default .build-fuzz/fuzz-results.txt)
#   FUZZ_MERGE=1 (long mode)                 afterwards, inputs that add coverage are merged into
#                                            Fuzz/corpus/<name>/ (libFuzzer -merge=1: only inputs
#                                            with new features are copied; review and commit them)
# Targets: FuzzHTTPParser, FuzzWebSocketParser, FuzzJSONParser, FuzzRules.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${FUZZ_MODE:-smoke}
case "$MODE" in
  smoke) SECONDS_EACH=${FUZZ_SECONDS:-60} ;;
  long) SECONDS_EACH=${FUZZ_SECONDS:-1800} ;;
  *) echo "FUZZ_MODE must be smoke or long" >&2; exit 2 ;;
esac
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(FuzzHTTPParser FuzzWebSocketParser FuzzJSONParser FuzzRules)
scratch=.build-fuzz
RESULTS=${FUZZ_RESULTS:-$scratch/fuzz-results.txt}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for target in "${targets[@]}"; do
  if ! swift build -c debug --scratch-path "$scratch" --sanitize=fuzzer \
       -Xswiftc -sanitize=fuzzer,address --product "$target" >"$log" 2>&1; then
    grep -v "Cannot export local symbol" "$log" | tail -n 40
    echo "building $target failed"; exit 1
  fi
done

corpus_name() {
  local name=${1#Fuzz}; name=${name%Parser}
  echo "$name" | tr '[:upper:]' '[:lower:]'
}

if [ "$MODE" = smoke ]; then
  for target in "${targets[@]}"; do
    name=$(corpus_name "$target")
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
  exit 0
fi

# Long mode: all targets at once, niced so builds and tests on the machine go first.
mkdir -p "$(dirname "$RESULTS")"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
declare -A pids works logs
for target in "${targets[@]}"; do
  name=$(corpus_name "$target")
  works[$target]=$(mktemp -d)
  logs[$target]=$(mktemp)
  cp -r "Fuzz/corpus/$name/." "${works[$target]}/"
  echo "== $target for ${SECONDS_EACH}s at nice 19 (seed corpus Fuzz/corpus/$name, log ${logs[$target]})"
  (cd "${works[$target]}" && exec nice -n 19 "$OLDPWD/$scratch/debug/$target" -max_total_time="$SECONDS_EACH" \
      -print_final_stats=1 -artifact_prefix="${works[$target]}/" "${works[$target]}") >"${logs[$target]}" 2>&1 &
  pids[$target]=$!
done
failed=0
for target in "${targets[@]}"; do
  status=0
  wait "${pids[$target]}" || status=$?
  name=$(corpus_name "$target")
  final=$(grep -E "^#[0-9]+[[:space:]]+DONE" "${logs[$target]}" | tail -n 1 || true)
  execs=$(grep -E "stat::number_of_executed_units" "${logs[$target]}" | awk '{print $2}')
  {
    echo "$(date -u '+%Y-%m-%d %H:%M UTC') $target commit=$commit seconds=$SECONDS_EACH exit=$status execs=${execs:-?}"
    echo "    ${final:-no DONE line}"
  } >>"$RESULTS"
  if [ "$status" -ne 0 ]; then
    tail -n 60 "${logs[$target]}"
    echo "$target FAILED (exit $status); reproducer in ${works[$target]}"
    failed=1
    continue
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$scratch/debug/$target" -merge=1 "Fuzz/corpus/$name" "${works[$target]}" >/dev/null 2>&1
    echo "   merged into Fuzz/corpus/$name: $(ls "Fuzz/corpus/$name" | wc -l) files"
  fi
  rm -rf "${works[$target]}"
done
cat "$RESULTS"
[ "$failed" = 0 ] && echo "fuzz long run: no crashes"
exit "$failed"

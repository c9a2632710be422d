#!/usr/bin/env bash
# Runs the built test binary as several processes at once, one per shard, and fails when any
# shard fails. Usage: scripts/test-shards.sh BINARY WIDTH [--subset] [--skip REGEX]... SHARD...
#   BINARY   the test binary `swift build --build-tests` made (HearthPackageTests.xctest)
#   WIDTH    at most this many tests under way at once in each shard; 0: no bound
#   --subset the shards need not cover every test (a second pass over some suites)
#   --skip   leaves the tests matching REGEX out of every shard
#   SHARD    `filter:REGEX` (the tests whose id matches REGEX) or `rest` (the tests no other
#            shard takes); a shard's output is printed whole when it ends
#
# Why processes: most tests wait (for a spawned server, a curl, a stream) on a thread of the
# Swift concurrency pool, which has one thread per core, so one process runs about two
# tests at a time however idle the machine is. Several processes run several times as many.
#
# Before anything runs, every test the binary lists must fall into exactly one shard (at
# most one with --subset), so no test is skipped or run twice whatever suites are added later.
set -euo pipefail
binary=$1 width=$2
shift 2
subset=false
skips=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --subset) subset=true; shift ;;
    --skip) skips+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
[ "$#" -gt 0 ] || { echo "test-shards: no shards" >&2; exit 2; }

work=$(mktemp -d /tmp/hearth-test-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$binary" --testing-library swift-testing --list-tests > "$work/all" 2>/dev/null
total=$(wc -l < "$work/all")
[ "$total" -gt 0 ] || { echo "test-shards: $binary lists no tests" >&2; exit 1; }

# Which shard each listed test falls in: a count per test of the filters it matches.
filters=()
for shard in "$@"; do
  case "$shard" in
    filter:*) filters+=("${shard#filter:}") ;;
    rest) ;;
    *) echo "test-shards: unknown shard '$shard'" >&2; exit 2 ;;
  esac
done
: > "$work/matched"
for regex in "${filters[@]}"; do grep -E -- "$regex" "$work/all" >> "$work/matched" || true; done
twice=$(sort "$work/matched" | uniq -d)
if [ -n "$twice" ]; then
  echo "test-shards: these tests match more than one shard's filter:" >&2
  echo "$twice" >&2
  exit 1
fi
has_rest=false
for shard in "$@"; do [ "$shard" = rest ] && has_rest=true; done
if ! $has_rest && ! $subset; then
  missing=$(sort "$work/matched" | comm -13 - <(sort "$work/all"))
  if [ -n "$missing" ]; then
    echo "test-shards: these tests are in no shard:" >&2
    echo "$missing" >&2
    exit 1
  fi
fi

widthArgs=()
[ "$width" -gt 0 ] && widthArgs=(--experimental-maximum-parallelization-width "$width")
index=0
pids=()
names=()
for shard in "$@"; do
  index=$((index + 1))
  args=(--testing-library swift-testing "${widthArgs[@]}")
  for regex in "${skips[@]}"; do args+=(--skip "$regex"); done
  if [ "$shard" = rest ]; then
    for regex in "${filters[@]}"; do args+=(--skip "$regex"); done
  else
    args+=(--filter "${shard#filter:}")
  fi
  "$binary" "${args[@]}" > "$work/$index.log" 2>&1 &
  pids+=($!)
  names+=("$shard")
done

failed=()
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then failed+=("${names[$i]}"); fi
  echo "== shard $((i + 1)) of ${#pids[@]}: ${names[$i]}"
  cat "$work/$((i + 1)).log"
done
echo "== ${#pids[@]} shards ended (the binary lists $total tests)"
if [ "${#failed[@]}" -gt 0 ]; then
  # The failing tests and their recorded issues again, last: a CI log is often read from
  # its tail, and a shard's whole output can run to thousands of lines.
  echo "== what failed"
  for i in "${!pids[@]}"; do
    for name in "${failed[@]}"; do
      [ "$name" = "${names[$i]}" ] || continue
      echo "-- ${names[$i]}"
      grep -a -E '✘|recorded an issue|Fatal error|Crash|signal [0-9]+' "$work/$((i + 1)).log" | head -n 60 || echo "(no failing test named: the process itself failed; its log is above)"
    done
  done
  echo "test-shards: failed: ${failed[*]}" >&2
  exit 1
fi

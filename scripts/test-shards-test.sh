#!/usr/bin/env bash
# The shard runner's own test, over a made-up test binary (a script answering
# --list-tests, and failing when asked to run a test named "broken"): a test in two shards
# or in none stops the run before anything runs, a failed shard fails the run after every
# shard's output is printed and its failing lines are repeated at the end, and --subset and
# --skip do what they say.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/hearth-test-shards-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/tests" <<'EOF'
#!/usr/bin/env bash
# Lists four tests; run with --filter/--skip, says which it ran and fails on "broken".
all=("E2E.Alpha/a()" "E2E.Beta/b()" "Server.Gamma/c()" "Unit.Delta/broken()")
filters=() skips=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --list-tests) printf '%s\n' "${all[@]}"; exit 0 ;;
    --filter) filters+=("$2"); shift 2 ;;
    --skip) skips+=("$2"); shift 2 ;;
    *) shift ;;
  esac
done
status=0
for t in "${all[@]}"; do
  keep=true
  if [ "${#filters[@]}" -gt 0 ]; then keep=false; for f in "${filters[@]}"; do [[ $t =~ $f ]] && keep=true; done; fi
  for s in "${skips[@]}"; do [[ $t =~ $s ]] && keep=false; done
  if $keep; then
    echo "ran $t"
    if [[ $t == *broken* ]]; then echo "✘ Test broken() recorded an issue"; status=1; fi
  fi
done
exit $status
EOF
chmod +x "$work/tests"
fails=0
expect() {  # expect STATUS TEXT -- ARGS...: the runner exits STATUS and prints TEXT
  local want=$1 text=$2
  shift 3
  local got=0
  scripts/test-shards.sh "$work/tests" 0 "$@" > "$work/out" 2>&1 || got=$?
  if [ "$got" != "$want" ] || ! grep -qF -- "$text" "$work/out"; then
    echo "test-shards-test: FAIL: $* exited $got (wanted $want) or did not print '$text':" >&2
    cat "$work/out" >&2
    fails=$((fails + 1))
  fi
}
expect 1 "match more than one shard" -- 'filter:E2E' 'filter:Alpha' rest
expect 1 "are in no shard" -- 'filter:E2E' 'filter:Server'
expect 1 "failed: rest" -- 'filter:E2E' 'filter:Server' rest
grep -qF "ran E2E.Alpha/a()" "$work/out" || { echo "test-shards-test: FAIL: a passing shard's output was not printed" >&2; fails=$((fails + 1)); }
# After every shard's output, the failed shard's failing lines once more, at the end.
sed -n '/^== what failed/,$p' "$work/out" | grep -qF "✘ Test broken() recorded an issue" || { echo "test-shards-test: FAIL: the failing test was not repeated after '== what failed'" >&2; fails=$((fails + 1)); }
expect 0 "ran Server.Gamma/c()" -- --subset 'filter:E2E' 'filter:Server'
expect 0 "4 tests" -- --skip broken 'filter:E2E' 'filter:Server' rest
if grep -qF "ran Unit.Delta/broken()" "$work/out"; then echo "test-shards-test: FAIL: --skip did not leave the test out" >&2; fails=$((fails + 1)); fi
[ "$fails" -eq 0 ] || exit 1
echo "test-shards-test: the shard runner refuses overlaps and gaps, and fails with a failed shard"

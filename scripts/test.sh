#!/usr/bin/env bash
# The test command: prepares what the end-to-end tests talk to (the official Python
# firebase-admin SDK in a virtualenv; nginx for the reverse-proxy tests and PostgreSQL for
# the multi-node tests must be installed, see README), builds once, and runs every test.
# With arguments it is `swift test ARGS` (one suite, a filter). Without, the tests run in
# shards, several processes at once (scripts/test-shards.sh): the end-to-end suites in five
# shards by their names' first letters, the in-process server suites, and the rest.
# Then the in-process REST, SSE, wire and accounts suites (HearthServerTests) and the REST,
# SSE, triggers, emulator-mode (two namespaces side by side) and rules coverage end-to-end suites run a
# second time with every server on PostgreSQL, in two shards of at most
# PG_PARALLEL_WIDTH tests each (each server holds several connections); without PostgreSQL
# installed (and CI unset) that pass is skipped. ObservabilityLiveTests stays on SQLite:
# it counts read-cache hits, and a PostgreSQL node keeps no read cache.
set -euo pipefail
cd "$(dirname "$0")/.."
# The structure first (seconds, before the build): the check's own test, then source files
# no longer than 500 lines and at most 3 HearthServer files importing HearthStore.
scripts/check-structure-test.sh
scripts/check-structure.sh --lines
scripts/check-structure.sh --imports
# Then the references: the check's own test, then every cited file and section is in the
# repository and nothing cites notes kept outside it or tells history as "issue N".
scripts/check-references-test.sh
scripts/check-references.sh
# The shard runner's own test (a made-up test binary; seconds).
scripts/test-shards-test.sh
HEARTH_PYTHON=$(scripts/python-env.sh)
export HEARTH_PYTHON
# Every test is a Swift Testing test. XCTest's runner, with nothing to run, would only print
# "Executed 0 tests" lines ahead of the real summary, so it is left out; a test file that
# imports XCTest turns it back on, so no XCTest case can be skipped unnoticed.
xctest=--disable-xctest
if grep -rqs --include='*.swift' '^import XCTest' Tests; then xctest=--enable-xctest; fi
# Tests under way at once in each PostgreSQL shard: unbounded, the hundreds of servers
# starting together took more than the cluster's 1,000 connections.
PG_PARALLEL_WIDTH=8
if [ "$#" -gt 0 ]; then
  swift build
  swift test "$xctest" "$@"
  exit
fi
swift build --build-tests
binary="$(swift build --show-bin-path)/HearthPackageTests.xctest"
if [ "$xctest" = --enable-xctest ]; then
  # The shards run Swift Testing's tests; XCTest cases need swift test's own runner.
  swift test --skip-build --enable-xctest
else
  scripts/test-shards.sh "$binary" 0 \
    'filter:EndToEndTests\.[A-L]' 'filter:EndToEndTests\.[M-O]' 'filter:EndToEndTests\.[P-S]' \
    'filter:EndToEndTests\.T' 'filter:EndToEndTests\.[U-Z]' 'filter:HearthServerTests' rest
fi
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ -n "${HEARTH_PG_BINDIR:-}" ] || [ "${CI:-}" = "true" ]; then
  echo "== the server suites and the REST, SSE, wire-protocol and triggers end-to-end suites again, on PostgreSQL"
  HEARTH_TEST_STORE=postgres scripts/test-shards.sh "$binary" "$PG_PARALLEL_WIDTH" --subset --skip 'ObservabilityLiveTests' \
    'filter:HearthServerTests' \
    'filter:EndToEndTests\.(RESTEndToEndTests|StreamEndToEndTests|WireProtocolEndToEndTests|TriggersEndToEndTests|TriggersNamespaceEndToEndTests|EmulatorEndToEndTests|CoverageEndToEndTests)'
else
  echo "== PostgreSQL is not installed: the server, REST, SSE, wire-protocol and triggers suites on PostgreSQL are skipped"
fi

#!/usr/bin/env bash
# The test command: prepares what the end-to-end tests talk to (the official Python
# firebase-admin SDK in a virtualenv; nginx for the reverse-proxy tests and PostgreSQL for
# the multi-node tests must be installed, see README), then builds and runs every test.
# Then the in-process REST, SSE, wire and accounts suites (HearthServerTests) and the REST,
# SSE, triggers and emulator-mode (two namespaces side by side) end-to-end suites run a
# second time with every server on PostgreSQL, one test at a time (each server holds several
# connections); without PostgreSQL installed (and CI unset) that pass is skipped. ObservabilityLiveTests stays on SQLite:
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
HEARTH_PYTHON=$(scripts/python-env.sh)
export HEARTH_PYTHON
# Every test is a Swift Testing test. XCTest's runner, with nothing to run, would only print
# "Executed 0 tests" lines ahead of the real summary, so it is left out; a test file that
# imports XCTest turns it back on, so no XCTest case can be skipped unnoticed.
xctest=--disable-xctest
if grep -rqs --include='*.swift' '^import XCTest' Tests; then xctest=--enable-xctest; fi
swift build
swift test "$xctest" "$@"
if [ "$#" -eq 0 ]; then
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ -n "${HEARTH_PG_BINDIR:-}" ] || [ "${CI:-}" = "true" ]; then
    echo "== the server suites and the REST, SSE and triggers end-to-end suites again, on PostgreSQL"
    HEARTH_TEST_STORE=postgres swift test "$xctest" --skip-build --no-parallel \
      --filter 'HearthServerTests' --filter 'EndToEndTests\.(RESTEndToEndTests|StreamEndToEndTests|TriggersEndToEndTests|TriggersNamespaceEndToEndTests|EmulatorEndToEndTests)' \
      --skip 'ObservabilityLiveTests'
  else
    echo "== PostgreSQL is not installed: the server, REST, SSE and triggers suites on PostgreSQL are skipped"
  fi
fi

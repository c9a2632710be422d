#!/usr/bin/env bash
# The test command: prepares what the end-to-end tests talk to (the official Python
# firebase-admin SDK in a virtualenv; nginx for the reverse-proxy tests must be installed,
# see README), then builds and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
HEARTH_PYTHON=$(scripts/python-env.sh)
export HEARTH_PYTHON
swift build
swift test "$@"

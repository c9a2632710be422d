#!/usr/bin/env bash
# Compound hashes: the reconnect of a client holding N cached
# favourites (default 10,000), K (default 10) changed while it was away: bytes the server
# sends for its re-listen and the time from the listen to its `ok` (in sync), without
# `ch` (today's JS clients, and any client of a server without compound hashes: the whole
# value as `d`) and
# with `ch` (iOS and Android: only the changed ranges, as `rm`). One fresh Hearth (release
# build, open rules, synchronous=full), RUNS runs alternating the two modes on the same
# data; medians, with the load before and the server's and the client's CPU. The client is
# compound.py in the test virtualenv (scripts/python-env.sh).
#
# Knobs (env): FAVOURITES (10000) CHANGED (10) RUNS (7) HEARTH_BIN SKIP_BUILD=1 KEEP_WORK=1
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bench_init compound
RUNS=${RUNS:-7}
FAVOURITES=${FAVOURITES:-10000}
CHANGED=${CHANGED:-10}
PYTHON=$("$REPO/scripts/python-env.sh")
build_hearth
machine_facts
printf '%s\n' '{"rules": {".read": true, ".write": true}}' >"$WORK/open-rules.json"
HEARTH_RULES_FILE=$WORK/open-rules.json start_hearth "$WORK/data"
"$PYTHON" "$BENCH_DIR/compound.py" "$HEARTH_URL" "$FAVOURITES" "$CHANGED" "$RUNS" "$HEARTH_PID" | tee -a "$RESULTS"
stop_hearth
echo "results: $RESULTS" >&2

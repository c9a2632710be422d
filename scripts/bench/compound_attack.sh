#!/usr/bin/env bash
# Compound-hash cut points all under one child: a value {"a": {N children}} and one wire
# listen with a cut at each child (every range differing), N = 1,000, 10,000 and 100,000
# by default. Per N: the server's CPU time for the answer and how late another client's
# push (written right after the listen) arrives, since the answer runs on the namespace's
# fan-out queue. One fresh Hearth (release build, open rules); the client is
# compound_attack.py in the test virtualenv (scripts/python-env.sh).
#
# LARGE (e.g. "100000 400000"): also values that large listened to without and with
# one cut (what the work budget lets through).
#
# Knobs (env): CUTS ("1000 10000 100000") LARGE ("") HEARTH_BIN HEARTH_REV SKIP_BUILD=1 KEEP_WORK=1
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bench_init compound_attack
read -r -a COUNTS <<<"${CUTS:-1000 10000 100000}"
PYTHON=$("$REPO/scripts/python-env.sh")
build_hearth
machine_facts
printf '%s\n' '{"rules": {".read": true, ".write": true}}' >"$WORK/open-rules.json"
HEARTH_RULES_FILE=$WORK/open-rules.json start_hearth "$WORK/data"
"$PYTHON" "$BENCH_DIR/compound_attack.py" "$HEARTH_URL" "$HEARTH_PID" "${COUNTS[@]}" | tee -a "$RESULTS"
stop_hearth
echo "results: $RESULTS" >&2

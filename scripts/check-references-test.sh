#!/usr/bin/env bash
# Tries scripts/check-references.sh on made-up trees: a tree whose citations all resolve
# passes; in a tree with planted bad citations beside good ones, exactly the bad lines are
# reported (a missing file, a section with no heading, each forbidden form, "issue N" in a
# `--help` string), and the good ones are not (a cited file and its numbered headings, a
# path in code rather than a comment, a path pattern with a placeholder).
# scripts/test.sh runs it before the check itself.
set -euo pipefail
export LC_ALL=C
check="$(cd "$(dirname "$0")" && pwd)/check-references.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
failures=0

fail() {
  echo "check-references-test: FAILED: $1" >&2
  failures=$((failures + 1))
}

# run: the check's output in $output, its exit status in $status.
run() {
  set +e
  output=$("$check" "$@" 2>&1)
  status=$?
  set -e
}

mkdir -p "$tree/docs/protocol" "$tree/Sources/Mod" "$tree/scripts" "$tree/Tests/Py"
cat > "$tree/docs/design.md" <<'EOF'
# Design
## 4. Storage
## 10. The wire protocol
EOF
cat > "$tree/docs/protocol/rest.md" <<'EOF'
# REST
### 1.3 Query parameters
### 1.5 Server values
EOF
cat > "$tree/Sources/Mod/Good.swift" <<'EOF'
/// Query indexes (docs/protocol/rest.md §1.3, §1.5; docs/design.md §4, §10).
/// The chart goes to docs/bench/ratios-<date>.png; the structure check is scripts/check.sh.
let fixture = "Sources/Nowhere/Planted.swift" // a path in code, not a citation
/// The REST part as a whole (docs/protocol/rest.md §1): its subsections are its headings.
EOF
echo "#!/bin/sh" > "$tree/scripts/check.sh"
cat > "$tree/README.md" <<'EOF'
See docs/design.md §4 and [the REST notes](docs/protocol/rest.md) and `Sources/Mod/`.
EOF

run "$tree"
[ "$status" -eq 0 ] || fail "a tree whose citations resolve exited $status: $output"
[[ "$output" == *"every citation points into the repository"* ]] || fail "no success line: $output"

cat > "$tree/Sources/Mod/Bad.swift" <<'EOF'
/// Good: docs/protocol/rest.md §1.3.
/// Bad: no such section (docs/protocol/rest.md §1.4).
// Bad: the range ends past the headings (docs/design.md §4–§5).
// Bad: no such file (docs/missing.md).
// Bad: (DESIGN.md §4).
let usage = """
  --force   overwrite (issue 12)
  """
// Bad: (spec §1.3).
// Bad: a part with no heading at all (docs/protocol/rest.md §2).
EOF
cat > "$tree/Tests/Py/client.py" <<'EOF'
"""A client (Good: docs/design.md §10).

Bad: written from examples/none/main.py.
"""
x = "scripts/not-a-citation.sh"
# Bad: LINUX-SWIFT-NOTES pitfall 4
EOF
cat > "$tree/scripts/run.sh" <<'EOF'
#!/bin/sh
# Bad: copied from the shared kit.
echo docs/missing-but-in-code.md
EOF
expected="Sources/Mod/Bad.swift:2
Sources/Mod/Bad.swift:3
Sources/Mod/Bad.swift:4
Sources/Mod/Bad.swift:5
Sources/Mod/Bad.swift:7
Sources/Mod/Bad.swift:9
Sources/Mod/Bad.swift:10
Tests/Py/client.py:3
Tests/Py/client.py:6
scripts/run.sh:2"

run "$tree"
[ "$status" -eq 1 ] || fail "a tree with bad citations exited $status (expected 1): $output"
reported=$(grep -E '^[^ :]+:[0-9]+: ' <<< "$output" | cut -d: -f1,2 | sort -u | sort -t: -k1,1 -k2,2n)
if [ "$reported" != "$expected" ]; then
  fail "reported lines differ from the planted bad ones:"
  diff <(echo "$expected") <(echo "$reported") >&2 || true
  echo "$output" >&2
fi
grep -q '^Sources/Mod/Bad.swift:2: cites docs/protocol/rest.md §1.4, which has no heading numbered 1.4$' <<< "$output" \
  || fail "the missing section is not named: $output"
grep -q '^Sources/Mod/Bad.swift:4: cites docs/missing.md, which is not in the repository$' <<< "$output" \
  || fail "the missing file is not named: $output"
grep -q '^Sources/Mod/Bad.swift:7: tells history' <<< "$output" || fail "issue N in a help text is not named: $output"

run --bogus "$tree"
[ "$status" -eq 2 ] || fail "an unknown option exited $status (expected 2)"
run "$tree/nowhere"
[ "$status" -eq 2 ] || fail "a missing root exited $status (expected 2)"

if [ "$failures" -gt 0 ]; then exit 1; fi
echo "check-references-test: the reference check reports exactly the planted bad citations"

#!/usr/bin/env bash
# The repository stands alone: every document it cites is in it. Checked in CI (scripts/test.sh
# runs it before the build, beside scripts/check-structure.sh).
#   forbidden   no reference to a note kept outside the repository (the design notes, the
#               Firebase contract, the wire protocol and firebase-admin traces, the Linux
#               notes and the style guide under their outside names, "spec §", the team's
#               shared bench kit or an absolute /work/ path), and no history told as
#               "issue N" in code, tests, scripts, docs or `--help` texts (git keeps the
#               history; a comment says what the code does and why).
#   paths       every repository path cited in a comment or a document (`docs/x.md`,
#               `scripts/...`, `examples/...`, `Sources/...`, `Tests/...`, `Fuzz/...`)
#               exists; a `§N` after docs/design.md or docs/protocol/*.md names a numbered
#               heading of that file (`## N.` or `### N ...`; a part cited whole, `§3`,
#               may have only its subsections, `## 3.1`).
# Scanned: Sources, Tests, scripts, docs, examples, Fuzz (its fuzzing inputs aside), .ci,
# README.md, BENCHMARKS.md, Package.swift, Dockerfile. Comments are what follows `//` in
# Swift and C, `#` in shell, Python, configuration and Dockerfiles, `--` in Lua, and
# Python's triple-quoted docstrings; Markdown, JSON and text files are read whole.
#
# ROOT (default: the repository) is the tree to check, so the check can be tried on a
# made-up tree (scripts/check-references-test.sh). Prints each offence as
# `file:line: reason` and exits 1 if there is any, 2 on a usage error.
set -euo pipefail
# Bytes, not characters: the same matches and order in every locale.
export LC_ALL=C

usage() { echo "usage: $0 [ROOT]" >&2; exit 2; }

root=""
for argument in "$@"; do
  case "$argument" in
    -*) usage ;;
    *) [ -z "$root" ] || usage; root="$argument" ;;
  esac
done
root=${root:-"$(dirname "$0")/.."}
[ -d "$root" ] || { echo "check-references: no directory $root" >&2; exit 2; }
cd "$root"

# Both scripts name the forbidden forms to describe and test them.
SELF="scripts/check-references.sh scripts/check-references-test.sh"

# What may never be cited, as extended regular expressions, each with its reason.
FORBIDDEN=(
  'DESIGN(\.md)? §|DESIGN\.md'                    'cites DESIGN.md, which is not in the repository: cite docs/design.md §N'
  'spec §|spec/firebase|firebase-protocol\.md'     'cites the Firebase contract outside the repository: cite docs/protocol/<part>.md §N'
  'firebase-wire-protocol(\.md)?'                  'cites the wire protocol notes outside the repository: cite docs/protocol/wire.md §N'
  'firebase-admin-wire(\.md)?'                     'cites the firebase-admin traces outside the repository: cite docs/protocol/admin-client.md §N'
  'LINUX-SWIFT-NOTES'                              'cites LINUX-SWIFT-NOTES, which is not in the repository: cite docs/linux-notes.md'
  'STYLE habit|STYLE\.md'                          'cites the style guide under its outside name: cite docs/style.md habit N'
  'corpus README'                                  'cites the conformance corpus README, which is not in the repository'
  '[Ss]hared (bench )?kit|shared/bench|shared/conformance' 'cites the shared kit: say what the file is without a path outside the repository'
  '/work/'                                         'names a path outside the repository'
  '\b[Ii]ssues? #?[0-9]+|#[0-9]+ issue\b'          'tells history ("issue N"): say what the code does and why; git keeps the history'
)

# Text files to scan, relative to the root, without the fuzzing inputs and build products.
list_files() {
  local top
  for top in Sources Tests scripts docs examples Fuzz .ci README.md BENCHMARKS.md Package.swift Dockerfile; do
    [ -e "$top" ] || continue
    find "$top" \( -name .build -o -name .git -o -name node_modules -o -name venv -o -name .venv \
      -o -name __pycache__ -o -path Fuzz/corpus \) -prune -o -type f -print
  done | sort | while IFS= read -r file; do
    case " $SELF " in *" $file "*) continue ;; esac
    printf '%s\0' "$file"
  done | xargs -0 -r grep -Il '' 2>/dev/null || true
}

mapfile -t files < <(list_files)
offences=$(mktemp)
trap 'rm -f "$offences"' EXIT

if [ "${#files[@]}" -gt 0 ]; then
  # forbidden: every line of every file (`--help` texts are string literals).
  for ((i = 0; i < ${#FORBIDDEN[@]}; i += 2)); do
    pattern=${FORBIDDEN[i]} reason=${FORBIDDEN[i + 1]}
    grep -nHE -- "$pattern" "${files[@]}" 2>/dev/null | cut -d: -f1,2 | sed "s|\$|: $reason|" >> "$offences" || true
  done

  # paths: the comments of code files and the whole of documents, as "file<TAB>line<TAB>text".
  awk '
    FNR == 1 {
      name = FILENAME; base = name; sub(/.*\//, "", base)
      kind = "hash"; docstring = 0
      if (base ~ /\.(md|json|txt)$/) kind = "whole"
      else if (base ~ /\.(swift|c|h|js|css)$/) kind = "slash"
      else if (base ~ /\.lua$/) kind = "dash"
      else if (base ~ /\.py$/) kind = "python"
    }
    {
      text = ""
      if (kind == "whole") text = $0
      else if (kind == "slash") { at = index($0, "//"); if (at) text = substr($0, at) }
      else if (kind == "dash") { at = index($0, "--"); if (at) text = substr($0, at) }
      else {
        quotes = gsub(/"""/, "&")
        if (kind == "python" && (docstring || quotes > 0)) text = $0
        else { at = index($0, "#"); if (at) text = substr($0, at) }
        if (kind == "python" && quotes % 2 == 1) docstring = !docstring
      }
      if (text != "") printf "%s\t%d\t%s\n", name, FNR, text
    }
  ' "${files[@]}" | awk -F'\t' '
    # Each cited path with the section numbers written right after it, as
    # "file<TAB>line<TAB>path<TAB>N N ...". A path running into a placeholder or a glob
    # (`<`, `*`, `{`, `$`) is a pattern, not a citation.
    {
      text = $3
      while (match(text, /(^|[^A-Za-z0-9_.\/~-])(docs|scripts|examples|Sources|Tests|Fuzz)\/[A-Za-z0-9_.@+\/-]*[A-Za-z0-9_\/]/)) {
        start = RSTART; len = RLENGTH
        cited = substr(text, start, len); sub(/^[^A-Za-z]/, "", cited)
        rest = substr(text, start + len)
        text = rest
        if (rest ~ /^[-.]*[<*{$\[]/) continue
        sections = ""
        if (match(rest, /^[ ]+§[0-9]+(\.[0-9]+)*(([ ]*(,|–|-|and)[ ]*|,? )§[0-9]+(\.[0-9]+)*)*/)) {
          run = substr(rest, 1, RLENGTH)
          while (match(run, /§[0-9]+(\.[0-9]+)*/)) {
            number = substr(run, RSTART, RLENGTH); sub(/^[^0-9]+/, "", number)
            sections = sections " " number
            run = substr(run, RSTART + RLENGTH)
          }
        }
        printf "%s\t%s\t%s\t%s\n", $1, $2, cited, sections
      }
    }
  ' | while IFS=$'\t' read -r file line cited sections; do
    target=${cited%/}
    if [ ! -e "$target" ]; then
      echo "$file:$line: cites $cited, which is not in the repository" >> "$offences"
      continue
    fi
    case "$target" in docs/design.md|docs/protocol/*.md) ;; *) continue ;; esac
    for section in $sections; do
      escaped=${section//./\\.}
      # The numbered heading itself, or for a part cited whole (§3) its first subsection (3.1).
      if ! grep -qE "^#+[[:space:]]+(§[[:space:]]*)?${escaped}(\.?([[:space:]]|\$)|[):]|\.[0-9])" "$target"; then
        echo "$file:$line: cites $target §$section, which has no heading numbered $section" >> "$offences"
      fi
    done
  done
fi

if [ -s "$offences" ]; then
  sort -u "$offences" | sort -s -t: -k1,1 -k2,2n
  echo "check-references: $(sort -u "$offences" | wc -l) offence(s): the repository cites what it does not contain" >&2
  exit 1
fi
echo "check-references: every citation points into the repository (${#files[@]} files)"

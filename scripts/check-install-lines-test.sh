#!/usr/bin/env bash
# Tries scripts/check-install-lines.sh on made-up trees: it must pass a tree that follows
# the convention, and fail, naming the problem, on each way of breaking it (a bare sudo in
# a block, in an inline command, in a script; a root command without the prefix; an
# install block that does not parse, that writes a system file by redirection, or that
# runs other commands for a user than for root). .ci/run runs it before the check itself.
set -euo pipefail
check="$(cd "$(dirname "$0")" && pwd)/check-install-lines.sh"
work=$(mktemp -d /tmp/hearth-check-install-lines-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
tree=""

# tree: a fresh made-up repository with a README holding BLOCK (a shell code block) and
# PROSE after it, and a script that prints the convention in a message.
new_tree() {   # NAME BLOCK [PROSE]
  tree=$work/$1
  mkdir -p "$tree/scripts"
  printf '# Made up\n\n```sh\n%s\n```\n\n%s\n' "$2" "${3:-}" >"$tree/README.md"
  printf '#!/bin/sh\necho "please install: \\$(command -v sudo) apt-get install -y curl"\n' >"$tree/scripts/setup.sh"
}
# expect STATUS NEEDLE: the check on $tree exits STATUS and its output holds NEEDLE.
expect() {
  local status=$1 needle=$2 output actual
  set +e
  output=$("$check" "$tree" 2>&1)
  actual=$?
  set -e
  if [ "$actual" -ne "$status" ] || [[ "$output" != *"$needle"* ]]; then
    echo "check-install-lines-test: FAILED: $(basename "$tree") exited $actual (expected $status), output without \"$needle\":" >&2
    echo "$output" >&2
    failures=$((failures + 1))
  fi
}

good='$(command -v sudo) apt-get update && $(command -v sudo) apt-get install -y curl
$(command -v sudo) install -m 0755 .build/release/hearth /usr/local/bin/hearth
echo "KEY=value" | $(command -v sudo) tee /etc/hearth/hearth.env
$(command -v sudo) /srv/venv/bin/pip install -r requirements.txt
$(command -v sudo) runuser -u hearth -- hearth users list --data-dir /var/lib/hearth
scripts/run.sh --fast
curl http://127.0.0.1:9000/healthz'

new_tree follows-the-convention "$good" 'Then `$(command -v sudo) systemctl restart hearth`; a user that is `sudo`.'
expect 0 "1 install blocks run as root and as a user"
expect 0 "8 commands,  6 through sudo as a user, none as root"

new_tree bare-sudo-in-a-block "$good
sudo systemctl enable --now hearth"
expect 1 "README.md:11 has a bare sudo"

new_tree bare-sudo-in-prose "$good" 'Then `sudo chown -R 10001:10001 /srv/hearth-data`.'
expect 1 "README.md:13 has a command beginning with bare sudo"

new_tree root-command-without-prefix "$good
apt-get install -y nginx-light"
expect 1 "README.md:11 needs root but does not begin with \$(command -v sudo): apt-get install -y nginx-light"

new_tree system-file-without-prefix "$good
echo x | tee /etc/hearth/other.env"
expect 1 "needs root but does not begin with \$(command -v sudo): tee /etc/hearth/other.env"

new_tree install-block-does-not-parse "$good
\$(command -v sudo) systemctl enable --now hearth && ("
expect 1 "README.md:4: the install block does not parse"

new_tree redirection-to-a-system-file "$good
\$(command -v sudo) echo x > /etc/hearth/other.env"
expect 1 "writes a system path by redirection"

new_tree different-commands-for-a-user "$good
command -v sudo >/dev/null && only-for-users"
expect 1 "as root and as a user the block runs different commands"

new_tree script-runs-sudo "$good"
printf '#!/bin/sh\nsudo apt-get install -y curl\n' >"$tree/scripts/install.sh"
expect 1 "scripts/install.sh:2 runs sudo"

new_tree script-runs-the-prefix "$good"
printf '#!/bin/sh\n$(command -v sudo) apt-get install -y curl\n' >"$tree/scripts/install.sh"
expect 1 "scripts/install.sh:2 runs sudo"

if [ "$failures" -gt 0 ]; then
  echo "check-install-lines-test: $failures FAILED" >&2
  exit 1
fi
echo "check-install-lines-test: OK (10 made-up trees)"

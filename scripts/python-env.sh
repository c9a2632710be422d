#!/usr/bin/env bash
# Creates (once) the Python virtualenv the compatibility tests use: the official
# firebase-admin SDK from PyPI, pinned, `websockets` (the wire-protocol test client) and
# `aiosmtpd` (the SMTP server the email-action tests read mail from) and `selenium` (drives
# Debian's chromium through chromium-driver for the console's browser tests), and
# `firebase-functions` with the open-source `functions-framework` (the triggers' receivers).
# Prints the interpreter's path.
#   HEARTH_PYTHON_ENV  where to put it (default: .build/python-env in the repo)
set -euo pipefail
cd "$(dirname "$0")/.."
FIREBASE_ADMIN_VERSION=7.7.0
WEBSOCKETS_VERSION=15.0.1
AIOSMTPD_VERSION=1.4.6
SELENIUM_VERSION=4.27.1
FIREBASE_FUNCTIONS_VERSION=0.6.0
FUNCTIONS_FRAMEWORK_VERSION=3.10.2
env_dir=${HEARTH_PYTHON_ENV:-$PWD/.build/python-env}
stamp="$env_dir/.firebase-admin-$FIREBASE_ADMIN_VERSION-websockets-$WEBSOCKETS_VERSION-aiosmtpd-$AIOSMTPD_VERSION-selenium-$SELENIUM_VERSION-functions-$FIREBASE_FUNCTIONS_VERSION-framework-$FUNCTIONS_FRAMEWORK_VERSION"
if [ ! -f "$stamp" ]; then
  rm -rf "$env_dir"
  python3 -m venv "$env_dir" >&2
  "$env_dir/bin/pip" install -q --disable-pip-version-check "firebase-admin==$FIREBASE_ADMIN_VERSION" \
    "websockets==$WEBSOCKETS_VERSION" "aiosmtpd==$AIOSMTPD_VERSION" "selenium==$SELENIUM_VERSION" \
    "firebase-functions==$FIREBASE_FUNCTIONS_VERSION" "functions-framework==$FUNCTIONS_FRAMEWORK_VERSION" >&2
  touch "$stamp"
fi
echo "$env_dir/bin/python"

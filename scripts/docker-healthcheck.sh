#!/bin/bash
# The container's HEALTHCHECK (installed as /usr/local/bin/hearth-healthcheck by the
# Dockerfile): GET /healthz on the port Hearth listens on, healthy on `200` with
# `{"status":"ok"}`. Plain bash (its /dev/tcp redirection), so the slim image needs no curl.
# It reads the port from HEARTH_PORT (default 9000): set the port with that variable, not
# with --port, or the check knocks on the wrong door.
set -u
host=${HEARTH_HOST:-127.0.0.1}
case $host in
  "" | 0.0.0.0) host=127.0.0.1 ;;   # listening on every address: ask over loopback
  "::" | "[::]") host=::1 ;;
esac
host=${host#[}; host=${host%]}
port=${HEARTH_PORT:-9000}

if ! exec 3<>"/dev/tcp/$host/$port"; then
  echo "unhealthy: cannot connect to $host:$port" >&2
  exit 1
fi
printf 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
answer=$(cat <&3)
exec 3<&-
status=${answer%%$'\r'*}
case $status in
  "HTTP/1.1 200 "*)
    case $answer in
      *'"status":"ok"'*) exit 0 ;;
    esac ;;
esac
echo "unhealthy: ${status:-no answer} from $host:$port/healthz" >&2
exit 1

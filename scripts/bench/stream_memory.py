#!/usr/bin/env python3
"""Open streams on a large location: the server's memory (RSS) while they stay open. Not a
test: numbers for docs/bench/history.md and BENCHMARKS.md.

A stream's first event is its location's whole value. The server reads and encodes it
for each stream; once it is out, an open stream should keep none of it.

For each binary given, a fresh server (`unread_responses.Server`: 127.0.0.1, port 0, temp
data dir, the repository's reference rules.json, access log off) and:

1. an anonymous user (`POST /v1/accounts:signUp`) with FAVORITES favourites under
   /users/<uid>/favorites (`unread_responses.favourite`, ~225 bytes each in the answer), in
   PATCH batches of 500; one GET of the list: its size;
2. RSS after SETTLE_SECONDS ("before");
3. STREAMS streams of the list, opened one after another, each read until its first event
   is whole and then kept open without reading: SSE (`Accept: text/event-stream`,
   `?auth=<token>`), or with KIND=wire wire-protocol sessions (`/.ws?v=5`, `auth` then a
   listen `q`; needs the `websockets` package). RSS once they are all open, then every
   second for SAMPLE_SECONDS; the last sample is "open, settled";
4. one GET of the list, read to its end: an exchange of more than 1 MiB, after which every
   build trims the heap (`MemoryTrimmer`, a second later); RSS after SETTLE_SECONDS ("open,
   after a trim");
5. every stream closed; RSS after SETTLE_SECONDS.

Usage: scripts/bench/stream_memory.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): FAVORITES (40000) STREAMS (20) KIND (sse | wire) SAMPLE_SECONDS (6)
SETTLE_SECONDS (4), and unread_responses.py's NOTE_BYTES (46).
"""
import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repo
import runcpu  # noqa: E402
import unread_responses as base  # noqa: E402  (Server, call, favourite, rss_mib, cleanup)

FAVORITES = int(os.environ.get("FAVORITES", "40000"))
STREAMS = int(os.environ.get("STREAMS", "20"))
KIND = os.environ.get("KIND", "sse")
SAMPLE_SECONDS = int(os.environ.get("SAMPLE_SECONDS", "6"))
SETTLE_SECONDS = float(os.environ.get("SETTLE_SECONDS", "4"))


def open_sse(server, path, token):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=120)
    s.sendall(f"GET {path}.json?auth={token} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise SystemExit("a stream closed before its first event")
        data += chunk
        body = data.split(b"\r\n\r\n", 1)
        if len(body) == 2 and b"\n\n" in body[1]:
            if not body[1].startswith(b"event: put\n"):
                raise SystemExit("the first event is not a put: " + body[1][:80].decode("utf-8", "replace"))
            return s, len(body[1])


def open_wire(server, path, token):
    from websockets.sync.client import connect
    ws = connect(f"ws://127.0.0.1:{server.port}/.ws?v=5&ns=hearth", max_size=None, open_timeout=60)
    ws.recv()  # the handshake
    requests = [{"r": 1, "a": "auth", "b": {"cred": token}}, {"r": 2, "a": "q", "b": {"p": path, "h": ""}}]
    for request in requests:
        ws.send(json.dumps({"t": "d", "d": request}))
    received = 0
    while True:
        frame = ws.recv(timeout=120)
        if len(frame) <= 6 and frame.isdigit():
            frame = "".join(ws.recv(timeout=120) for _ in range(int(frame)))
        received += len(frame)
        message = json.loads(frame)
        answer = message.get("d", {})
        if answer.get("r") in (1, 2) and answer.get("b", {}).get("s") != "ok":
            raise SystemExit(f"wire request {answer.get('r')} refused: {answer}")
        if answer.get("r") == 2:
            return ws, received


def run(binary, label):
    server = base.Server(binary)
    pid = server.proc.pid
    meter = runcpu.Meter(pid)
    res = {"label": label, "binary": binary, "kind": KIND, "favorites": FAVORITES, "streams": STREAMS}
    opened = []
    try:
        token, uid, path = base.anonymous_user(server)
        base.seed_favourites(server, path, token, uid, FAVORITES, 500)
        status, data = base.call(server, "GET", path + ".json", token=token)
        res["value_bytes"] = len(data)
        time.sleep(SETTLE_SECONDS)
        res["rss_before"] = base.rss_mib(pid)
        started = time.monotonic()
        for _ in range(STREAMS):
            sock, first = (open_wire if KIND == "wire" else open_sse)(server, path, token)
            opened.append(sock)
            res["first_event_bytes"] = first
        res["open_seconds"] = round(time.monotonic() - started, 2)
        samples = [base.rss_mib(pid)]
        for _ in range(SAMPLE_SECONDS):
            time.sleep(1)
            samples.append(base.rss_mib(pid))
        res["rss_open"], res["rss_open_settled"], res["rss_open_samples"] = samples[0], samples[-1], samples
        status, data = base.call(server, "GET", path + ".json", token=token)
        time.sleep(SETTLE_SECONDS)
        res["rss_open_after_trim"] = base.rss_mib(pid)
        res.update(meter.read())
        for sock in opened:
            sock.close()
        opened = []
        time.sleep(SETTLE_SECONDS)
        res["rss_closed"] = base.rss_mib(pid)
    finally:
        for sock in opened:
            sock.close()
        server.stop()
    return res


def main():
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = runcpu.each_binary(run, __doc__)
    print(json.dumps(results, indent=1))
    print()
    print(f"started {started}; {STREAMS} {KIND} streams on one location of {FAVORITES:,} favourites")
    print()
    print("| binary | value | RSS before | all open | open, settled | open, after a trim | closed | "
          "load before | CPU % of a core: server, driver |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['label']} | {r['value_bytes'] / 1e6:.2f} MB | {r['rss_before']:.0f} MiB | {r['rss_open']:.0f} MiB | "
              f"{r['rss_open_settled']:.0f} MiB | {r['rss_open_after_trim']:.0f} MiB | {r['rss_closed']:.0f} MiB | "
              f"{r['load_before']} | {r['server_cpu_pct']:.0f}, {r['driver_cpu_pct']:.0f} |")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)

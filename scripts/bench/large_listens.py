#!/usr/bin/env python3
"""Listens that start with a large value: what they cost the other streams' pushes. Not a
test: numbers for docs/bench/history.md.

A listen's first event is the location's whole value. Encoding it (a `d` push, an SSE
`put`) on the namespace's fan-out queue held every other push of the namespace for as
long as it took; prepared by the transport before it reaches the fan-out queue, it holds
none. For each binary given (e.g. the commit before the change and the current one) and
each transport, a fresh server on 127.0.0.1 (port 0, temp data dir, open rules, no access
log):

1. N children of ~100 bytes are written to `/big` (7 MB at 64,000) in PATCHes of 900;
2. one SSE stream listens to `/tick`;
3. LISTENS clients listen to `/big` at once (wire: `q` over `/.ws`; SSE: a stream), while
   one client PUTs `/tick` in a loop every 10 ms until every big listen got its value;
4. each tick's lateness: from its PUT's answer to its event on the `/tick` stream (max,
   and how many arrived), and each big listen's time to its whole value.

Transport `sse-query`: the LISTENS streams are query streams with no limit
(`orderBy="$key"&startAt="k"`: the whole location), opened first; then for
QUERY_SECONDS (3) one client changes a child of `/big` in a loop, each change making every
query stream's result new, while the ticks go on. A query stream with no limit was re-read
and sent whole as `put /` for each change; it now re-reads and sends the changed child
only. The bytes each query stream got after its first value are reported too. Transport
`wire-query`: the same with tagged wire query listens (`"q":{"i":".key","sp":"k"}`), as
an SDK's `query(ref, orderByKey(), startAt("k"))` sends them.

Transport `sse-last`: the LISTENS streams are `orderBy="$key"&limitToLast=50` (a chat's
last messages), and the client adds a child after the last one every 10 ms instead, so
each change moves every stream's window. Such a query was answered by reading the whole
location, again for every change; it is now answered from the end of the location.

Uses the test virtualenv (scripts/python-env.sh: `websockets`).

Usage: scripts/bench/large_listens.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): N (64000) LISTENS (5) TRANSPORTS (wire,sse,sse-query,wire-query) QUERY_SECONDS (3).
Everything on 127.0.0.1; every server is stopped and its temp dir removed at the end.
"""
import json
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import runcpu  # noqa: E402
from huge_writes import Server, request  # noqa: E402
from wide_updates import binaries_and_labels, print_table  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

N = int(os.environ.get("N", "64000"))
LISTENS = int(os.environ.get("LISTENS", "5"))
TRANSPORTS = os.environ.get("TRANSPORTS", "wire,sse,sse-query,wire-query,sse-last").split(",")
QUERY_SECONDS = float(os.environ.get("QUERY_SECONDS", "3"))
QUERY = '/big.json?orderBy="$key"&startAt="k"'
LAST = '/big.json?orderBy="$key"&limitToLast=50'
CHUNK = 900


def sse_open(port, path):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
    return s


def tick_stream(port, stop, arrived):
    """The `/tick` stream: when each tick's value arrived."""
    s = sse_open(port, "/tick.json")
    s.settimeout(0.2)
    buffer = b""
    while not stop.is_set():
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        if not data:
            break
        buffer += data
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            if b"data: " not in frame:
                continue
            try:
                value = json.loads(frame.split(b"data: ", 1)[1])
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("data"), int):
                arrived[value["data"]] = time.perf_counter()
    s.close()


def wire_listen(ws, listen, out):
    """Sends `q` with `listen` on `ws` (after its handshake) and reads until the answer:
    the first value; appends its bytes and ms to `out`."""
    began = time.perf_counter()
    ws.recv()  # the handshake
    ws.send(json.dumps({"t": "d", "d": {"r": 1, "a": "q", "b": listen}}))
    got = 0
    while True:
        message = ws.recv()
        got += len(message)
        if '"r":1' in message and '"ok"' in message:
            break
    out.append((got, (time.perf_counter() - began) * 1000))


def big_wire(port, out):
    with connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns=bench", max_size=256 << 20) as ws:
        wire_listen(ws, {"p": "/big", "h": ""}, out)


def big_sse(port, out, path="/big.json"):
    began = time.perf_counter()
    s = sse_open(port, path)
    got, tail = 0, b""
    while True:
        data = s.recv(1 << 20)
        if not data:
            break
        got += len(data)
        tail = (tail + data)[-4:]
        if got > N * 50 and tail.endswith(b"\n\n"):
            break
    out.append((got, (time.perf_counter() - began) * 1000))
    return s


def read_later(s, streams, stop):
    """Reads what each change of `/big` sends until `stop`; appends the bytes to `streams`."""
    s.settimeout(0.2)
    later = 0
    while not stop.is_set():
        try:
            data = s.recv(1 << 20)
        except socket.timeout:
            continue
        if not data:
            break
        later += len(data)
    streams.append(later)
    s.close()


def big_query(port, out, streams, stop):
    """A query stream: its first value, then what each change sends (`read_later`)."""
    read_later(big_sse(port, out, QUERY.replace('"', "%22")), streams, stop)


def big_last(port, out, streams, stop):
    """A stream of the last 50 children: its first event, then what each change sends
    (`read_later`)."""
    began = time.perf_counter()
    s = sse_open(port, LAST.replace('"', "%22"))
    buffer = b""
    while b"event: put" not in buffer or not buffer.endswith(b"\n\n"):
        data = s.recv(1 << 20)
        if not data:
            break
        buffer += data
    out.append((len(buffer), (time.perf_counter() - began) * 1000))
    read_later(s, streams, stop)


def big_wire_query(port, out, streams, stop):
    """A tagged wire query listen: its first value, then it keeps reading what each change
    of `/big` pushes until `stop`; appends the bytes read after the answer to `streams`."""
    with connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns=bench", max_size=256 << 20) as ws:
        wire_listen(ws, {"p": "/big", "q": {"i": ".key", "sp": "k"}, "t": 1, "h": ""}, out)
        later = 0
        while not stop.is_set():
            try:
                later += len(ws.recv(timeout=0.2))
            except TimeoutError:
                continue
        streams.append(later)


def run(binary, label, transport):
    server = Server(binary)
    try:
        conn = server.conn()
        conn.timeout = 600
        for start in range(0, N, CHUNK):
            body = json.dumps({f"k{i:07d}": {"v": i, "note": "x" * 80} for i in range(start, min(N, start + CHUNK))})
            status, _, data = request(conn, "PATCH", "/big.json?print=silent", body)
            if status != 204:
                raise SystemExit(f"{label}: seeding got {status} {data[:200]!r}")
        stop, arrived = threading.Event(), {}
        ticks = threading.Thread(target=tick_stream, args=(server.port, stop, arrived))
        ticks.start()
        request(conn, "PUT", "/tick.json?print=silent", "0")
        while 0 not in arrived:
            time.sleep(0.01)
        listens, streams, queries_stop = [], [], threading.Event()
        querying = transport in ("sse-query", "wire-query", "sse-last")
        if querying:
            target = {"sse-query": big_query, "wire-query": big_wire_query, "sse-last": big_last}[transport]
            threads = [threading.Thread(target=target, args=(server.port, listens, streams, queries_stop)) for _ in range(LISTENS)]
        else:
            target = big_wire if transport == "wire" else lambda port, out: big_sse(port, out).close()
            threads = [threading.Thread(target=target, args=(server.port, listens)) for _ in range(LISTENS)]
        for t in threads:
            t.start()
        if querying:
            while len(listens) < LISTENS:
                time.sleep(0.01)
        meter = runcpu.Meter(server.proc.pid)
        answered, i = {}, 1
        began = time.perf_counter()
        while (time.perf_counter() - began < QUERY_SECONDS) if querying else any(t.is_alive() for t in threads):
            if transport == "sse-last":
                request(conn, "PUT", f"/big/m{i:07d}.json?print=silent", json.dumps({"v": i, "note": "x" * 80}))
            elif querying:
                request(conn, "PUT", "/big/k0000000/v.json?print=silent", str(-i))
            request(conn, "PUT", "/tick.json?print=silent", str(i))
            answered[i] = time.perf_counter()
            i += 1
            time.sleep(0.01)
        queries_stop.set()
        for t in threads:
            t.join()
        request(conn, "PUT", "/tick.json?print=silent", str(i))
        answered[i] = time.perf_counter()
        while i not in arrived and time.perf_counter() - answered[i] < 30:
            time.sleep(0.01)
        cpu = meter.read()
        stop.set()
        ticks.join()
        late = [(arrived[k] - answered[k]) * 1000 for k in answered if k in arrived]
        row = {"label": label, "transport": transport, "n": N, "listens": LISTENS,
               "value_bytes": listens[0][0] if listens else None,
               "listen_ms": sorted(round(ms) for _, ms in listens),
               "ticks": len(answered), "ticks_arrived": len(late), "tick_late_max_ms": round(max(late), 1),
               "query_bytes_after_first": sorted(streams), **cpu}
        print(json.dumps(row), flush=True)
        return row
    finally:
        server.stop()


def cells(r):
    return [r["transport"], r["label"], ", ".join(f"{ms:,}" for ms in r["listen_ms"]), f"{r['ticks_arrived']} / {r['ticks']}",
            f"{r['tick_late_max_ms']:,.0f}", f"{r['server_cpu_s']:.2f}", r["load_before"],
            ", ".join(f"{n:,}" for n in r["query_bytes_after_first"]) or "–"]


def main():
    rows = [run(binary, label, transport) for transport in TRANSPORTS for binary, label in binaries_and_labels(__doc__)]
    print_table(["transport", "binary", "big listens: ms to the whole value", "ticks arrived / sent",
                 "a tick's event after its answer, max ms", "server CPU s", "load before",
                 "query streams: bytes after the first value"], cells, rows)


if __name__ == "__main__":
    main()

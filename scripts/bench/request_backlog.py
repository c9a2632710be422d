#!/usr/bin/env python3
"""Requests the database has not taken yet: what one client's writes, sent faster than the
single writer commits them, make the server hold. Not a test: numbers for
docs/bench/history.md.

Each write replaces an anonymous user's list of FAVORITES favourites (~0.96 MB at 4,000,
each checked by the reference rules), so the writer takes a fraction of a second for each.
For each binary given, a fresh server (`unread_responses.Server`: 127.0.0.1, port 0, temp
data dir, the repository's reference rules.json, access log off) and:

- `wire`: one wire-protocol connection (`/.ws`, signed in with `auth`) sends WRITES puts
  of the list in a row without waiting for their answers (the client's own keepalive off:
  a client blocked in its send cannot answer pings), then reads every answer;
- `rest`: BATCHES batches of CONNS connections, each sending one PUT of the list at once,
  PAUSE seconds apart (so each batch arrives while the writer is still busy with the
  earlier ones), then every answer is read;
- `ondisconnect`: OD_CONNS wire connections (signed in) each register OD_OPS onDisconnect
  sets of the list, one after another; the connections stay open until the RSS is read,
  SETTLE seconds after the last answer (an operation waits in memory, and in the store,
  for as long as its connection lasts).

Reported: the server's RSS before, its peak (VmHWM, and the largest of samples every 50 ms),
the seconds until every answer came, and the answers' statuses.

Usage: scripts/bench/request_backlog.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): KINDS (wire,rest,ondisconnect) FAVORITES (4000) WRITES (300) CONNS (30)
BATCHES (25) PAUSE (0.3) OD_CONNS (4) OD_OPS (100) SETTLE (2), and unread_responses.py's
NOTE_BYTES (46).
"""
import collections
import json
import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repo
import runcpu  # noqa: E402
import unread_responses as base  # noqa: E402  (Server, call, favourite, rss_mib)
from resume_replay import peak_mib  # noqa: E402

KINDS = os.environ.get("KINDS", "wire,rest,ondisconnect").split(",")
FAVORITES = int(os.environ.get("FAVORITES", "4000"))
WRITES = int(os.environ.get("WRITES", "300"))
CONNS = int(os.environ.get("CONNS", "30"))
BATCHES = int(os.environ.get("BATCHES", "25"))
PAUSE = float(os.environ.get("PAUSE", "0.3"))
OD_CONNS = int(os.environ.get("OD_CONNS", "4"))
OD_OPS = int(os.environ.get("OD_OPS", "100"))
SETTLE = float(os.environ.get("SETTLE", "2"))


class Sampler:
    """The largest RSS seen, sampled every 50 ms until `stop`."""

    def __init__(self, pid):
        self.pid, self.most, self.done = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            self.most = max(self.most, base.rss_mib(self.pid))
            time.sleep(0.05)

    def stop(self):
        self.done.set()
        self.thread.join()
        return round(self.most, 1)


def signed_in(server, token):
    """A wire connection past its handshake, with `auth` sent as request 1."""
    from websockets.sync.client import connect
    ws = connect(f"ws://127.0.0.1:{server.port}/.ws?v=5&ns=hearth", max_size=None, open_timeout=60, ping_interval=None)
    ws.recv()  # the handshake
    ws.send(json.dumps({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": token}}}))
    return ws


def register_ondisconnect(server, token, path, value, conns, ops):
    """`conns` signed-in wire connections, each registering `ops` onDisconnect sets of
    `value` at `path` in a row: the answers' statuses, and the connections (left open)."""
    statuses, connections = collections.Counter(), []
    for _ in range(conns):
        ws = signed_in(server, token)
        connections.append(ws)
        for r in range(2, ops + 2):
            ws.send(json.dumps({"t": "d", "d": {"r": r, "a": "o", "b": {"p": path, "d": value}}}))
        answered = 0
        while answered < ops + 1:
            message = json.loads(ws.recv(timeout=900)).get("d", {})
            if "r" in message:
                answered += 1
                if message["r"] > 1:
                    statuses[message["b"].get("s")] += 1
    return statuses, connections


def ondisconnect(server, path, token, value, row):
    statuses, connections = register_ondisconnect(server, token, path, value, OD_CONNS, OD_OPS)
    time.sleep(SETTLE)
    row["rss_open"] = round(base.rss_mib(server.proc.pid), 1)
    for ws in connections:
        ws.close()
    return statuses


def wire(server, path, token, value):
    ws = signed_in(server, token)
    for r in range(2, WRITES + 2):
        value["f000000"]["note"] = str(r)
        ws.send(json.dumps({"t": "d", "d": {"r": r, "a": "p", "b": {"p": path, "d": value}}}))
    statuses = collections.Counter()
    while sum(statuses.values()) < WRITES + 1:
        message = json.loads(ws.recv(timeout=900)).get("d", {})
        if "r" in message:
            statuses[message["b"].get("s")] += 1
    ws.close()
    return statuses


def rest(server, path, token, value):
    body = json.dumps(value).encode()
    request = (f"PUT {path}.json?print=silent&auth={token} HTTP/1.1\r\nHost: bench\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    sockets = []
    for _ in range(BATCHES):
        batch = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(CONNS)]
        threads = [threading.Thread(target=s.sendall, args=(request,)) for s in batch]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sockets += batch
        time.sleep(PAUSE)
    statuses = collections.Counter()
    for s in sockets:
        s.settimeout(900)
        head = b""
        while b"\r\n\r\n" not in head:
            data = s.recv(65536)
            if not data:
                break
            head += data
        statuses[head.split(b" ")[1].decode() if head else "closed"] += 1
        s.close()
    return statuses


def run(binary, label):
    rows = []
    for kind in KINDS:
        server = base.Server(binary)
        pid = server.proc.pid
        try:
            token, uid, path = base.anonymous_user(server)
            value = base.favourites(uid, FAVORITES)
            time.sleep(1)
            row = {"label": label, "kind": kind, "value_bytes": len(json.dumps(value)), "rss_before": round(base.rss_mib(pid), 1)}
            meter = runcpu.Meter(pid)
            sampler = Sampler(pid)
            started = time.monotonic()
            if kind == "ondisconnect":
                statuses = ondisconnect(server, path, token, value, row)
            else:
                statuses = (wire if kind == "wire" else rest)(server, path, token, value)
            row["seconds"] = round(time.monotonic() - started, 1)
            row["rss_sampled_max"] = sampler.stop()
            row["rss_peak"] = round(peak_mib(pid), 1)
            row["statuses"] = dict(statuses)
            row.update(meter.read())
            print(json.dumps(row), flush=True)
            rows.append(row)
        finally:
            server.stop()
    return rows


def main():
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = [row for rows in runcpu.each_binary(run, __doc__) for row in rows]
    print()
    print(f"started {started}; lists of {FAVORITES:,} favourites; wire: {WRITES} puts on one connection; "
          f"rest: {BATCHES} batches of {CONNS} PUTs, {PAUSE} s apart; ondisconnect: {OD_CONNS} connections of {OD_OPS} sets")
    print()
    print("| kind | binary | RSS before | peak RSS | RSS with the connections open | all answered after | answers | load before | "
          "CPU % of a core: server, driver |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: r["kind"]):
        answers = ", ".join(f"{n} {s}" for s, n in sorted(r["statuses"].items()))
        still = f"{r['rss_open']:,.0f} MiB" if "rss_open" in r else "–"
        print(f"| {r['kind']} | {r['label']} | {r['rss_before']:,.0f} MiB | {r['rss_peak']:,.0f} MiB | {still} | {r['seconds']} s | {answers} | "
              f"{r['load_before']} | {r['server_cpu_pct']}, {r['driver_cpu_pct']} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reconnect bursts (not in CI; run by reconnects.sh): what it costs the server when every
stream comes back at once, as when all their ID tokens expire in the same second or a
proxy in front restarts.

Setup: --users anonymous accounts; --streams SSE streams on their favourites
(GET /users/<uid>/favorites.json, Accept: text/event-stream, the user's ID token), spread
round-robin over the users.

Each of --rounds rounds:
  1. --writes writes spread over the users (PUT a favourite with every field the reference
     rules require), each heard live by its user's streams; the round waits for them all,
     so every stream's Last-Event-ID is current;
  2. the client closes every stream at once, then makes one write per user (each stream
     misses exactly one event of its own location, and the log holds --writes + users
     records after the oldest stream's last id, most of them other users');
  3. from here the measurement: every stream reconnects at once with Last-Event-ID and its
     token; a stream is back when its 200 head and its one missed event have arrived.
Per round: the server's CPU from (3)'s start to the last stream back (/proc/PID/stat) per
reconnect, the wall time of the burst, each stream's time to its head and to its missed
event (p50 / max), the client's own CPU meanwhile, and the machine's 1-minute load before.

Only loopback addresses are accepted; every wait is bounded.
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import harness  # noqa: E402
import soak  # noqa: E402


class Stream:
    """One SSE subscriber: the owner of harness.SSEConn's callbacks."""

    def __init__(self, run, uid, token):
        self.run, self.uid, self.token = run, uid, token
        self.conn = None
        self.last_id = None
        self.events = 0
        self.t_open = self.t_head = self.t_missed = None
        self.waiting_for = None     # the marker of the write this stream must see next
        self.failed = None

    def connect_raw(self, _user):
        lines = ["GET /users/%s/favorites.json HTTP/1.1" % self.uid, "Host: %s:%d" % (self.run.host, self.run.port),
                 "Accept: text/event-stream", "Authorization: Bearer " + self.token]
        if self.last_id is not None:
            lines.append("Last-Event-ID: " + self.last_id)
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def on_head(self, conn, now):
        if conn is self.conn and self.t_head is None:
            self.t_head = now

    def on_fail(self, conn, msg):
        self.failed = msg

    def on_event(self, conn, ev, now):
        if conn is not self.conn:
            return
        name = None
        for line in ev.split(b"\n"):
            if line.startswith(b"id:"):
                self.last_id = line[3:].strip().decode()
            elif line.startswith(b"event:"):
                name = line[6:].strip()
        if name in (b"put", b"patch"):
            self.events += 1
            if self.waiting_for is not None and self.waiting_for in ev:
                self.waiting_for = None
                self.t_missed = now
                self.run.arrived()

    def on_lost(self, conn):
        if conn is self.conn and self.run.measuring:
            self.failed = self.failed or "closed"

    async def open(self):
        loop = asyncio.get_running_loop()
        self.t_open, self.t_head, self.failed = time.monotonic(), None, None

        def factory():
            self.conn = harness.SSEConn(self, None)
            return self.conn
        await asyncio.wait_for(loop.create_connection(factory, self.run.host, self.run.port), 30.0)


class Run:
    def __init__(self, a):
        self.a = a
        self.host, self.port = soak.loopback_target(a.url)
        self.users, self.streams = [], []
        self.measuring = False
        self.pending = 0
        self.done = None
        self.seq = 0

    def arrived(self):
        self.pending -= 1
        if self.pending == 0 and self.done is not None and not self.done.done():
            self.done.set_result(True)

    async def call(self, conn, method, path, body=b"", token=None, ctype="application/json"):
        head = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: %s\r\nContent-Length: %d\r\n" % (
            method, path, self.host, self.port, ctype, len(body))
        if token:
            head += "Authorization: Bearer %s\r\n" % token
        status, _, data = await conn.request((head + "\r\n").encode() + body)
        return status, data

    async def write(self, conn, user, marker):
        uid, token = user
        key = "f%d" % (self.seq % self.a.keys)
        self.seq += 1
        body = json.dumps({"id": key, "name": "Burst place", "note": marker, "createdAt": int(time.time() * 1000),
                           "createdBy": uid, "latitude": 59.91, "longitude": 10.75}).encode()
        status, data = await self.call(conn, "PUT", "/users/%s/favorites/%s.json" % (uid, key), body, token)
        if status != 200:
            raise SystemExit("write: HTTP %d %s" % (status, data[:200]))

    async def wait_all(self, what):
        try:
            await asyncio.wait_for(self.done, self.a.timeout)
        except asyncio.TimeoutError:
            raise SystemExit("%s: %d streams still waiting after %ss" % (what, self.pending, self.a.timeout))

    def expect(self, streams, marker_of):
        self.done = asyncio.get_running_loop().create_future()
        self.pending = 0
        for s in streams:
            s.waiting_for = marker_of(s)
            if s.waiting_for is not None:
                self.pending += 1
        if self.pending == 0:
            self.done.set_result(True)

    async def main(self):
        a = self.a
        harness._raise_nofile()
        conn = harness.HttpConn(self.host, self.port)
        for _ in range(a.users):
            status, data = await self.call(conn, "POST", "/v1/accounts:signUp", b'{"returnSecureToken":true}')
            if status != 200:
                raise SystemExit("sign-up: HTTP %d %s" % (status, data[:200]))
            d = json.loads(data)
            self.users.append((d["localId"], d["idToken"]))
        self.streams = [Stream(self, *self.users[i % a.users]) for i in range(a.streams)]
        by_user = {}
        for s in self.streams:
            by_user.setdefault(s.uid, []).append(s)
        sem = asyncio.Semaphore(100)

        async def first_open(s):
            async with sem:
                await s.open()
                deadline = time.monotonic() + a.timeout
                while s.events == 0 and s.failed is None and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                if s.events == 0:
                    raise SystemExit("a stream did not get its snapshot: %s" % s.failed)
        await asyncio.gather(*[first_open(s) for s in self.streams])
        print("[reconnects] %d streams on %d users open" % (len(self.streams), a.users), file=sys.stderr)
        for r in range(1, a.rounds + 1):
            # 1. writes every stream hears live
            tag = "r%d-" % r
            last_marker = {}
            for i in range(a.writes):
                last_marker[self.users[i % a.users][0]] = ("%slive%d." % (tag, i)).encode()
            self.expect(self.streams, lambda s: last_marker.get(s.uid))
            for i in range(a.writes):
                await self.write(conn, self.users[i % a.users], "%slive%d." % (tag, i))
            await self.wait_all("round %d live writes" % r)
            # 2. every stream closed; one write per user while they are away
            for s in self.streams:
                s.conn.tr.close()
            await asyncio.sleep(0)
            missed = {}
            for j, user in enumerate(self.users):
                marker = "%smissed%d." % (tag, j)
                await self.write(conn, user, marker)
                missed[user[0]] = marker.encode()
            load = os.getloadavg()[0]
            # 3. every stream back at once
            self.expect(self.streams, lambda s: missed[s.uid])
            self.measuring = True
            cpu0, gen0, t0 = harness.proc_cpu_s(a.pid), harness.self_cpu_s(), time.monotonic()
            await asyncio.gather(*[s.open() for s in self.streams])
            await self.wait_all("round %d reconnects" % r)
            t1, cpu1, gen1 = time.monotonic(), harness.proc_cpu_s(a.pid), harness.self_cpu_s()
            self.measuring = False
            failed = sum(1 for s in self.streams if s.failed)
            heads = sorted(s.t_head - t0 for s in self.streams if s.t_head is not None)
            backs = sorted(s.t_missed - t0 for s in self.streams if s.t_missed is not None)
            wall = t1 - t0
            rec = {"kind": "reconnects", "round": r, "streams": len(self.streams), "users": a.users,
                   "log_records_after_oldest_id": a.writes + a.users, "failed": failed, "load_before": round(load, 2),
                   "server_cpu_ms": round((cpu1 - cpu0) * 1000, 1),
                   "server_us_per_reconnect": round((cpu1 - cpu0) * 1e6 / len(self.streams), 1),
                   "wall_ms": round(wall * 1000, 1), "server_cpu_pct": round(100 * (cpu1 - cpu0) / wall, 1),
                   "client_cpu_pct": round(100 * (gen1 - gen0) / wall, 1),
                   "head_p50_ms": round(harness.pct(heads, 50) * 1000, 1), "head_max_ms": round(heads[-1] * 1000, 1),
                   "back_p50_ms": round(harness.pct(backs, 50) * 1000, 1), "back_max_ms": round(backs[-1] * 1000, 1)}
            harness.append_result(a.out, rec)
        conn.close()
        for s in self.streams:
            if s.conn is not None and s.conn.tr is not None:
                s.conn.tr.close()


def cmd_run(a):
    asyncio.run(asyncio.wait_for(Run(a).main(), a.rounds * (2 * a.timeout + 60) + 300))


def cmd_report(a):
    recs = [json.loads(line) for line in open(a.results) if line.strip()]
    recs = [r for r in recs if r.get("kind") == "reconnects"]
    if not recs:
        sys.exit("no rounds in %s" % a.results)
    print("| round | streams back | server CPU ms | µs per reconnect | burst wall ms | head p50 / max ms |"
          " missed event p50 / max ms | server CPU % | client CPU % | load before |")
    print("|" + "---|" * 10)
    for r in recs:
        print("| %d | %d of %d | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s |" % (
            r["round"], r["streams"] - r["failed"], r["streams"], r["server_cpu_ms"], r["server_us_per_reconnect"],
            r["wall_ms"], r["head_p50_ms"], r["head_max_ms"], r["back_p50_ms"], r["back_max_ms"],
            r["server_cpu_pct"], r["client_cpu_pct"], r["load_before"]))
    us = sorted(r["server_us_per_reconnect"] for r in recs)
    print()
    print("Median over %d rounds: %s µs of server CPU per reconnect; burst wall median %s ms." % (
        len(recs), us[len(us) // 2], sorted(r["wall_ms"] for r in recs)[len(recs) // 2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--url", required=True)
    p.add_argument("--pid", type=int, required=True, help="the server's pid (its CPU)")
    p.add_argument("--out", required=True)
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--writes", type=int, default=500, help="live writes per round before the burst")
    p.add_argument("--keys", type=int, default=50, help="favourites per user the writes cycle through")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds any one wait may take")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("report")
    p.add_argument("results")
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()

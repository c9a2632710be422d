#!/usr/bin/env python3
"""Soak load generator for scripts/bench/soak.sh; stdlib + harness.py.

  soak.py run    --url http://127.0.0.1:PORT --pid PID --data-dir DIR --out RESULTS.jsonl [knobs]
  soak.py report RESULTS.jsonl        Markdown table (one row per sample) + summary
  perf script ... | soak.py syncs RESULTS.jsonl >> RESULTS.jsonl   the server's syncs (SOAK_PERF=1)

`run` signs up --users anonymous accounts on a running Hearth (reference rules.json),
opens --streams SSE streams spread round-robin over them (GET /users/<uid>/favorites.json,
Accept: text/event-stream, Authorization: Bearer <ID token>) and --wire wire-protocol
listeners on the same locations (/.ws with wire.py's RFC 6455 client: `auth` with the
user's ID token, `q` on /users/<uid>/favorites), then writes open loop at
--rate writes/s for --minutes: write i goes to user i mod U and PUTs favourite
f<(i div U) mod --keys> with every field the rules require (so the first U x keys writes
create favourites, later ones update them) and a marker "<run prefix><i>." in its note.
Every --sample-seconds it appends one JSON line to --out:
  server: VmRSS and VmHWM (/proc/PID/status), open fds (/proc/PID/fd), threads, size of
    the data dir, hearth_open_streams / hearth_open_connections / hearth_http_unsent_bytes
    from GET /metrics, server / load generator / other processes' CPU % over the interval;
  writes sent in the interval: ok, errors by kind, latency p50/p99/max (response time
    minus the write's *scheduled* send time: open loop, no coordinated omission);
  events received in the interval: delivery latency p50/p99/max (event on a subscriber's
    socket minus the write's scheduled send time);
  delivered vs expected for the writes scheduled up to --settle seconds before the
    sample (expected = streams of that user subscribed when the write was sent; events
    arriving after their write was counted are "late");
  streams: open (response head read, not ended), subscribed, lost (given up), ends by
    reason (auth_revoked / cancel / closed / status), reconnects;
  client event-loop lag (max): how late the load generator itself ran.
Every whole minute it appends one "minute" line for the writes scheduled in that minute
(written --settle s, 30 at most, after the minute, when their events are in): write-ack
p99 / p99.9 / max, delivery p99 / p99.9 / max for SSE and wire listeners apart, the five
slowest writes (scheduled send in UTC and on CLOCK_MONOTONIC, to line up with the server's
log or `perf record -k CLOCK_MONOTONIC`; the load generator's own lag meanwhile), CPU
split and run-queue wait (/proc/PID/task/*/schedstat) of the server and the generator;
apart, the live deliveries (the write scheduled while its listener was connected) and the
replays (scheduled while it was away, so late by its gap), and per listener that came back
in the minute its gap (the end to its new connection's 200 head, or a wire listener's q
answered; the reconnect backoff of 0.1-0.3 s included). `report` says whether delivery max < STALL_GOAL_MS held in
every minute, for all deliveries and for the live ones. --storm-minute drops every SSE
stream at once in one minute (a token expiry's reconnect burst, without waiting an hour).
ID tokens live one hour (Hearth's fixed lifetime, like Firebase's), so the generator does
what a client must: it refreshes a user's token (POST /v1/token) once it is --token-max-age
seconds old, and a stream that ends (auth_revoked when its token expires, cancel, close)
reconnects with the current token and Last-Event-ID, so the server replays what it missed
(docs/streams.md); --no-reconnect counts every end as a lost stream instead.
Every loop is bounded in count and time; only loopback addresses are accepted.
"""
import argparse
import array
import asyncio
import collections
import json
import os
import random
import string
import sys
import time
from urllib.parse import urlsplit, quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import harness  # noqa: E402  (proc stats, pct, HttpConn, SSEConn, _raise_nofile)
import wire  # noqa: E402  (WSClient, request: the wire-protocol client of wire.py)


def ms(v):
    return None if v is None else round(v * 1000.0, 2)


def lat_stats(vals):
    vals = sorted(vals)
    return (ms(harness.pct(vals, 50)), ms(harness.pct(vals, 99)), ms(vals[-1] if vals else None))


def tail_stats(vals):
    """(count, p99, p99.9, max) in ms of a list of seconds."""
    vals = sorted(vals)
    return (len(vals), ms(harness.pct(vals, 99)), ms(harness.pct(vals, 99.9)), ms(vals[-1] if vals else None))


def parse_event(ev):
    name, eid, data = "message", None, []
    for line in ev.split(b"\n"):
        if line.startswith(b"event:"):
            name = line[6:].strip().decode("latin1")
        elif line.startswith(b"id:"):
            eid = line[3:].strip().decode("latin1")
        elif line.startswith(b"data:"):
            d = line[5:]
            data.append(d[1:] if d.startswith(b" ") else d)
    return name, eid, b"\n".join(data)


def runq_wait_s(pid):
    """Seconds the process's threads have waited on a run queue (ready, no CPU), summed
    over /proc/PID/task/*/schedstat; None when unreadable."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[1])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total / 1e9


def data_fds(pid, data_dir):
    """{fd: file name} of the server's open files in its data dir (which fd is the WAL)."""
    out, root = {}, os.path.realpath(data_dir)
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if target.startswith(root + "/"):
                out[fd] = os.path.basename(target)
    except OSError:
        pass
    return out


SYNC_NOTE_MS = 20.0  # server syncs at least this long are kept for the report, one by one


def cmd_syncs(a):
    """`perf script -F tid,time,event,trace` of the server's fsync / fdatasync / madvise /
    munmap tracepoints (soak.sh, SOAK_PERF=1) on stdin -> one "syncs" line on stdout:
    every sync of at least SYNC_NOTE_MS [monotonic start, ms, call, fd], and per minute of
    the soak (from the first minute line's times in RESULTS) the syncs' count and p50 / p99
    / max by fd, and the madvise / munmap counts (malloc trimming shows as those)."""
    import re
    pat = re.compile(r"\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_(\w+):\s*(.*)")
    pend, syncs, other = {}, [], {}
    for line in sys.stdin:
        m = pat.match(line)
        if not m:
            continue
        tid, t, phase, name, rest = m.groups()
        t = float(t)
        if name in ("fsync", "fdatasync"):
            if phase == "enter":
                pend[tid] = (t, name, str(int(rest.split()[-1], 16)) if rest else "?")
            elif tid in pend:
                t0, call, fd = pend.pop(tid)
                syncs.append((t0, (t - t0) * 1000.0, call, fd))
        elif phase == "enter":
            other.setdefault(name, []).append(t)
    t0, rate = None, None
    with open(a.results) as f:
        for line in f:
            r = json.loads(line)
            if r["kind"] == "start":
                rate = r["rate"]
            elif r["kind"] == "minute" and r["slowest"] and len(r["slowest"][0]) > 4 and t0 is None and rate:
                x = r["slowest"][0]         # [.., seq, .., .., scheduled send (monotonic), ..]
                t0 = x[4] - x[1] / rate
    per = {}
    for st, d, call, fd in syncs:
        if t0 is not None and st >= t0:
            per.setdefault(int((st - t0) // 60.0) + 1, {}).setdefault(fd, []).append(d)
    minutes = {}
    for m, by in sorted(per.items()):
        minutes[m] = {fd: [len(v), round(harness.pct(sorted(v), 50), 2), round(harness.pct(sorted(v), 99), 2),
                           round(max(v), 2)] for fd, v in by.items()}
        for name, ts in other.items():
            minutes[m][name] = sum(1 for t in ts if t0 + 60 * (m - 1) <= t < t0 + 60 * m)
    print(json.dumps({"kind": "syncs", "note_ms": SYNC_NOTE_MS, "t0": t0,
                      "long": [[round(st, 4), round(d, 2), call, fd] for st, d, call, fd in syncs if d >= SYNC_NOTE_MS],
                      "per_minute": minutes, "totals": {"syncs": len(syncs), **{k: len(v) for k, v in other.items()}}},
                     sort_keys=True))


def utc_ms(wall):
    """A wall-clock time as UTC HH:MM:SS.mmm (to line up with the server's log, perf, strace)."""
    return time.strftime("%H:%M:%S", time.gmtime(wall)) + ".%03d" % int((wall % 1.0) * 1000)


def proc_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
                elif k == "Threads":
                    out[k] = int(v)
    except OSError:
        pass
    return out


def count_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def cpu_split_s():
    """Machine-wide (busy, niced) CPU seconds from /proc/stat: niced = the 'nice' column
    (processes at a positive nice value, e.g. background fuzzers or builds)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / hz, v[1] / hz


def proc_cpu_table():
    """{pid: (command name, CPU seconds)} for every process we can read."""
    hz = os.sysconf("SC_CLK_TCK")
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                raw = f.read()
            name = raw[raw.index("(") + 1:raw.rindex(")")]
            parts = raw.rsplit(")", 1)[1].split()
            out[int(d)] = (name, (int(parts[11]) + int(parts[12])) / hz)
        except (OSError, ValueError, IndexError):
            pass
    return out


def top_others(prev, cur, wall, exclude, n=3):
    """The other processes that used the most CPU between two proc_cpu_table()s, summed by
    command name: [[name, CPU %], ...] (only those over 5 %)."""
    by = {}
    for pid, (name, t) in cur.items():
        if pid in exclude:
            continue
        dt = t - prev[pid][1] if pid in prev and prev[pid][0] == name else t if wall > 0 else 0
        by[name] = by.get(name, 0.0) + max(0.0, dt)
    top = sorted(by.items(), key=lambda kv: -kv[1])[:n]
    return [[k, round(100 * v / wall, 1)] for k, v in top if 100 * v / wall >= 5]


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


class User:
    def __init__(self, uid, id_token, refresh_token):
        self.uid, self.id_token, self.refresh_token = uid, id_token, refresh_token
        self.t_token = time.monotonic()
        self.lock = asyncio.Lock()
        self.streams = []

    def subscribed(self):
        return sum(1 for s in self.streams if s.subscribed and not s.lost)


class Stream:
    """One logical subscriber: its connection (harness.SSEConn) and its reconnects."""
    kind = "sse"

    def __init__(self, soak, user, idx):
        self.soak, self.user, self.idx = soak, user, idx
        self.conn = None
        self.req = b""
        self.subscribed = False     # initial snapshot received
        self.lost = False           # given up (or ended, with --no-reconnect)
        self.last_id = None
        self.end_reason = None
        self.fails = 0              # consecutive attempts that never got a 200 head
        self.ready = None           # future for the initial snapshot
        self.reconnecting = False
        self.t_connect = 0.0        # when the current connection was asked for (monotonic)
        self.t_down = None          # when the last connection that got through ended, until the next is back

    # -- the harness.SSEConn callbacks ("w")
    def connect_raw(self, _user):
        return self.req

    def on_fail(self, conn, msg):
        self.end_reason = msg

    def on_event(self, conn, ev, now):
        s = self.soak
        name, eid, data = parse_event(ev)
        if eid:
            self.last_id = eid
        if name in ("put", "patch"):
            self.fails = 0
            if not self.subscribed:
                self.subscribed = True
                if self.ready is not None and not self.ready.done():
                    self.ready.set_result(True)
                return
            if data.startswith(b'{"path":"/",'):
                # the writes all land below the location: a whole-location put after the
                # first is a fresh snapshot (a resume the change log could not serve)
                s.iv["resync_snapshots"] += 1
                return
            s.deliver_marked(data, now, "sse", self.t_connect)
        elif name == "keep-alive":
            s.iv["keepalives"] += 1
        elif name in ("cancel", "auth_revoked"):
            self.end_reason = name
        else:
            s.iv["other_events"] += 1

    def on_head(self, conn, now):
        if conn is self.conn:
            self.back(now)

    def back(self, now):
        """A new connection got through (SSE: its 200 head; wire: the q's ok) after one that
        had ended: the listener's gap (that end to now) counts in the minute it went down."""
        if self.t_down is not None:
            self.soak.minute(self.t_down).gaps.append(now - self.t_down)
            self.t_down = None

    def on_lost(self, conn):
        s = self.soak
        if conn is not self.conn:
            return
        self.conn = None
        if s.stopping:
            return
        if conn.in_body and self.t_down is None:
            self.t_down = time.monotonic()
        reason = self.end_reason or "closed"
        self.end_reason = None
        if not self.subscribed:
            if self.ready is not None and not self.ready.done():
                self.ready.set_result(False)
            s.note_error("stream open: " + reason)
            return
        if not conn.in_body:
            self.fails += 1         # no 200 head: a failed attempt
            s.note_error("stream reconnect: " + reason)
        else:
            s.iv["ends"][reason] = s.iv["ends"].get(reason, 0) + 1
        if self.reconnecting:       # an attempt of _reconnect's that died at once; it sees that itself
            return
        if not s.a.reconnect or self.fails > s.a.max_reconnect_failures:
            self.lost = True
            s.iv["lost"] += 1
            return
        self.reconnecting = True
        asyncio.ensure_future(self._reconnect())

    async def _reconnect(self):
        s = self.soak
        try:
            while not s.stopping:
                await asyncio.sleep(min(10.0, 0.2 * (2 ** self.fails)) * (0.5 + random.random()))
                if s.stopping:
                    return
                s.iv["reconnects"] += 1
                c = await self.connect()
                if c is not None and not c.dead:
                    return          # connected; a later end comes through on_lost again
                if c is None:
                    self.fails += 1
                if self.fails > s.a.max_reconnect_failures:
                    self.lost = True
                    s.iv["lost"] += 1
                    return
        finally:
            self.reconnecting = False

    async def connect(self):
        """Open a connection for this stream (the response comes later, to SSEConn);
        returns it, or None when the TCP connection could not be made."""
        s = self.soak
        token = await s.token(self.user)
        lines = ["GET /users/%s/favorites.json HTTP/1.1" % self.user.uid, "Host: %s:%d" % (s.host, s.port),
                 "Accept: text/event-stream", "Authorization: Bearer " + token]
        if self.last_id is not None:
            lines.append("Last-Event-ID: " + self.last_id)
        self.req = ("\r\n".join(lines) + "\r\n\r\n").encode()
        loop = asyncio.get_running_loop()
        self.t_connect = time.monotonic()

        def factory():
            self.conn = harness.SSEConn(self, self.user)
            return self.conn
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(factory, s.host, s.port), 10.0)
        except Exception as e:  # noqa
            c, self.conn = self.conn, None      # its connection_lost, if any, is ignored
            if c is not None and c.tr is not None:
                c.tr.close()
            s.note_error("stream connect: %s" % type(e).__name__)
            return None
        return conn

    def is_open(self):
        c = self.conn
        return c is not None and c.in_body and not c.dead


class MinuteAcc:
    """The latencies of the writes scheduled in one minute of the soak (write acks, events
    by listener kind) and, per write, its slowest event: the minute's slowest writes and
    their times are what to look for in the server's log, perf or strace output."""

    def __init__(self):
        self.lat = {"write": array.array("d"), "sse": array.array("d"), "wire": array.array("d"),
                    "live": array.array("d"), "replay": array.array("d")}
        self.slowest = {}           # seq -> (slowest event's latency, its listener kind, its arrival)
        self.gaps = array.array("d")  # listeners that went down in this minute: end -> back (200 head, q answered), s

    def add(self, kind, lat, seq, now, replay=False):
        self.lat[kind].append(lat)
        if kind != "write":
            self.lat["replay" if replay else "live"].append(lat)
            prev = self.slowest.get(seq)
            if prev is None or lat > prev[0]:
                self.slowest[seq] = (lat, kind, now)


class WireConn(wire.WSClient):
    """One wire-protocol connection of a WireListener: after the upgrade and the server's
    handshake it sends `auth` (r 1, the user's ID token) and `q` (r 2) on the user's
    favourites, pipelined as the JS SDK does; live at the q's `ok` (its data came first)."""

    def __init__(self, owner):
        s = owner.soak
        super().__init__(s.host, s.port, s.a.wire_ns)
        self.owner = owner
        self.live = False

    @property
    def in_body(self):
        """Stream.on_lost's test for "the attempt got through": here, the q's ok."""
        return self.live

    def message(self, payload, now):
        o = self.owner
        if self.live:
            o.on_data(payload, now)
            return
        try:
            m = json.loads(payload)
        except ValueError:
            return self.failed("not JSON")
        d = m.get("d") or {}
        if m.get("t") == "c":
            if d.get("t") == "h":
                self.send(wire.request(1, "auth", {"cred": o.token}))
                self.send(wire.request(2, "q", {"p": "/users/%s/favorites" % o.user.uid, "h": ""}))
            return
        if "r" in d:
            b = d.get("b") or {}
            if b.get("s") != "ok":
                return self.failed("%s answered %s" % ({1: "auth", 2: "q"}.get(d["r"], d["r"]), b.get("s")))
            if d["r"] == 2:
                self.live = True
                o.on_live(self)

    def failed(self, msg):
        self.owner.end_reason = msg
        if self.tr is not None:
            self.tr.close()

    def lost(self):
        self.owner.on_lost(self)


class WireListener(Stream):
    """One logical wire-protocol listener on the same location as the SSE streams (the
    user's favourites, signed in with the user's ID token), with Stream's reconnect policy:
    a connection that ends is opened again with the current token; the wire protocol has
    no Last-Event-ID, so what was written while it was away is in the next `q`'s data
    (not counted as events) and its events count as missing."""
    kind = "wire"

    def __init__(self, soak, user, idx):
        super().__init__(soak, user, idx)
        self.token = ""

    def on_live(self, conn):
        self.fails = 0
        self.back(time.monotonic())
        if not self.subscribed:
            self.subscribed = True
            if self.ready is not None and not self.ready.done():
                self.ready.set_result(True)

    def on_data(self, payload, now):
        s = self.soak
        if payload.find(b'"a":"c"') >= 0 or payload.find(b'"a":"ac"') >= 0:
            self.end_reason = "auth_revoked" if b'"a":"ac"' in payload else "cancel"
            return
        s.deliver_marked(payload, now, "wire", self.t_connect)

    async def connect(self):
        s = self.soak
        self.token = await s.token(self.user)
        loop = asyncio.get_running_loop()
        self.t_connect = time.monotonic()

        def factory():
            self.conn = WireConn(self)
            return self.conn
        try:
            _, conn = await asyncio.wait_for(loop.create_connection(factory, s.host, s.port), 10.0)
        except Exception as e:  # noqa
            c, self.conn = self.conn, None
            if c is not None and c.tr is not None:
                c.tr.close()
            s.note_error("wire connect: %s" % type(e).__name__)
            return None
        return conn


def loopback_target(url):
    """(host, port) of a Hearth URL on a loopback address; anything else ends the run."""
    u = urlsplit(url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("refusing non-loopback Hearth address %r" % u.hostname)
    return u.hostname, u.port


class Soak:
    def __init__(self, a):
        self.a = a
        self.host, self.port = loopback_target(a.url)
        self.pid = a.pid
        self.prefix_s = "sk%s-" % "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
        self.prefix = self.prefix_s.encode()
        self.users, self.streams = [], []
        self.stopping = False
        self.writes = {}            # seq -> [t_sched, expected, delivered, status or None]
        self.acc_next = 0           # next seq to account
        self.issued = 0
        self.inflight = 0
        self.t0 = None
        self.errors_total = 0
        self.wall_offset = time.time() - time.monotonic()
        self.minutes = {}           # minute of the scheduled send -> MinuteAcc
        self.minutes_emitted = 0    # minutes 0 ..< this are reported
        self.lag_minute = 0.0
        self.lag_log = collections.deque(maxlen=20000)  # (monotonic end, lag) of late lag ticks
        self.new_interval()

    def new_interval(self):
        self.iv = {"wlat": [], "dlat": [], "dlat_sse": [], "dlat_wire": [], "writes_sent": 0, "writes_ok": 0, "write_errors": {},
                   "ends": {}, "reconnects": 0, "lost": 0, "late": 0, "resync_snapshots": 0,
                   "keepalives": 0, "other_events": 0, "errors": {}, "lag_max": 0.0, "after_minute": 0}

    def note_error(self, kind):
        self.errors_total += 1
        self.iv["errors"][kind] = self.iv["errors"].get(kind, 0) + 1

    def out(self, rec):
        rec.setdefault("date", time.strftime("%Y-%m-%d %H:%M:%S"))
        line = json.dumps(rec, sort_keys=True)
        with open(self.a.out, "a") as f:
            f.write(line + "\n")
        return rec

    def log(self, msg):
        print("[soak %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)

    # -- plain requests (sign-up, token refresh, metrics), each on a connection of its own
    # (they are minutes apart: a kept-alive one would pass the server's idle timeout)
    async def call(self, method, path, body=b"", headers=None, timeout=30.0):
        hdrs = {"Host": "%s:%d" % (self.host, self.port), "Connection": "close"}
        hdrs.update(headers or {})
        lines = ["%s %s HTTP/1.1" % (method, path)] + ["%s: %s" % kv for kv in hdrs.items()]
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append("Content-Length: %d" % len(body))
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        conn = harness.HttpConn(self.host, self.port)
        try:
            return await conn.request(raw, timeout)
        finally:
            conn.close()

    async def sign_up(self):
        st, _, body = await self.call("POST", "/v1/accounts:signUp", b'{"returnSecureToken":true}',
                                      {"Content-Type": "application/json"})
        if st != 200:
            raise RuntimeError("sign-up: HTTP %d %s" % (st, body[:200]))
        d = json.loads(body)
        return User(d["localId"], d["idToken"], d["refreshToken"])

    async def token(self, user):
        if time.monotonic() - user.t_token < self.a.token_max_age:
            return user.id_token
        async with user.lock:
            if time.monotonic() - user.t_token >= self.a.token_max_age:
                form = "grant_type=refresh_token&refresh_token=%s" % quote(user.refresh_token, safe="")
                try:
                    st, _, body = await self.call("POST", "/v1/token", form.encode(),
                                                  {"Content-Type": "application/x-www-form-urlencoded"})
                    if st == 200:
                        d = json.loads(body)
                        user.id_token, user.refresh_token = d["id_token"], d["refresh_token"]
                        user.t_token = time.monotonic()
                        self.token_refreshes += 1
                    else:
                        self.note_error("token refresh HTTP %d" % st)
                except Exception as e:  # noqa
                    self.note_error("token refresh: %s" % type(e).__name__)
        return user.id_token

    async def metrics(self):
        want = ("hearth_open_streams", "hearth_open_connections", "hearth_http_unsent_bytes")
        try:
            st, _, body = await self.call("GET", "/metrics", timeout=10.0)
        except Exception as e:  # noqa
            self.note_error("metrics: %s" % type(e).__name__)
            return {}
        if st != 200:
            self.note_error("metrics HTTP %d" % st)
            return {}
        got = {}
        for line in body.decode("utf-8", "replace").splitlines():
            if line.startswith("#"):
                continue
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if name in want:
                try:
                    got[name] = got.get(name, 0) + float(line.rsplit(" ", 1)[1])
                except ValueError:
                    pass
        return {k: int(v) for k, v in got.items()}

    def server_facts(self):
        st = proc_status(self.pid)
        return {"rss_kib": st.get("VmRSS"), "hwm_kib": st.get("VmHWM"), "threads": st.get("Threads"),
                "fds": count_fds(self.pid), "data_dir_bytes": dir_bytes(self.a.data_dir)}

    # -- writes
    def minute(self, t_sched):
        m = int((t_sched - self.t0) // 60.0)
        acc = self.minutes.get(m)
        if acc is None:
            acc = self.minutes[m] = MinuteAcc()
            if m < self.minutes_emitted:    # arrived after its minute was reported
                self.iv["after_minute"] += 1
        return acc

    def deliver_marked(self, data, now, kind, connected):
        """An event's bytes: the write's number after the run's marker in its note is a
        delivery; an event without one is counted as other. `connected`: when the
        listener's connection was asked for; a write scheduled before it is a replay (it was
        written while the listener was away, and reaches it through the resume)."""
        i = data.find(self.prefix)
        if i >= 0:
            j = k = i + len(self.prefix)
            while k < len(data) and 48 <= data[k] <= 57:
                k += 1
            if k > j:
                self.on_delivery(int(data[j:k]), now, kind, connected)
                return
        self.iv["other_events"] += 1

    def on_delivery(self, seq, now, kind, connected):
        t_sched = self.t0 + seq / self.a.rate
        lat = now - t_sched
        self.iv["dlat"].append(lat)
        self.iv["dlat_" + kind].append(lat)
        self.minute(t_sched).add(kind, lat, seq, now, replay=t_sched < connected)
        w = self.writes.get(seq)
        if w is not None:
            w[2] += 1
        else:
            self.iv["late"] += 1

    async def one_write(self, seq, t_sched):
        a = self.a
        user = self.users[seq % len(self.users)]
        key = "f%d" % ((seq // len(self.users)) % a.keys)
        token = await self.token(user)
        body = json.dumps({"id": key, "name": "Soak place %d" % seq, "note": "%s%d." % (self.prefix_s, seq),
                           "createdAt": int(time.time() * 1000), "createdBy": user.uid,
                           "latitude": 59.91 + (seq % 100) / 1000.0, "longitude": 10.75}).encode()
        raw = ("PUT /users/%s/favorites/%s.json HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % (user.uid, key, self.host, self.port, token, len(body))).encode() + body
        rec = [t_sched, user.subscribed(), 0, None]
        self.writes[seq] = rec
        conn = await self.wpool.get()
        if conn.w is not None and time.monotonic() - conn.t_used > a.conn_idle:
            conn.close()    # idle long enough that the server may be closing it: open a new one
        self.iv["writes_sent"] += 1
        try:
            st, _, _ = await conn.request(raw, a.write_timeout)
        except Exception as e:  # noqa
            conn.close()
            st = type(e).__name__
        finally:
            conn.t_used = time.monotonic()
            self.wpool.put_nowait(conn)
            self.inflight -= 1
        now = time.monotonic()
        rec[3] = st
        if isinstance(st, int) and 200 <= st < 300:
            self.iv["writes_ok"] += 1
            self.iv["wlat"].append(now - t_sched)
            self.minute(t_sched).add("write", now - t_sched, seq, now)
        else:
            kind = "HTTP %d" % st if isinstance(st, int) else st
            self.iv["write_errors"][kind] = self.iv["write_errors"].get(kind, 0) + 1
            self.errors_total += 1

    async def writer(self, count):
        a = self.a
        tasks = set()
        for seq in range(count):
            if self.stopping:
                break
            t_sched = self.t0 + seq / a.rate
            d = t_sched - time.monotonic()
            if d > 0:
                await asyncio.sleep(d)
            self.issued = seq + 1
            if self.inflight >= a.max_inflight:   # bounded backlog: count, never queue without end
                self.writes[seq] = [t_sched, 0, 0, "client backlog"]
                self.iv["write_errors"]["client backlog"] = self.iv["write_errors"].get("client backlog", 0) + 1
                self.errors_total += 1
                continue
            self.inflight += 1
            t = asyncio.ensure_future(self.one_write(seq, t_sched))
            tasks.add(t)
            t.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.wait(tasks, timeout=a.write_timeout + 10)

    def account(self, upto_t, final=False):
        """Delivered vs expected for the writes scheduled at or before upto_t (all when final)."""
        acc = {"acct_writes": 0, "events_expected": 0, "events_delivered": 0, "events_missing": 0,
               "events_extra": 0, "writes_short": 0}
        while self.acc_next < self.issued:
            seq = self.acc_next
            w = self.writes.get(seq)
            if w is None:
                break
            if not final and (w[0] > upto_t or w[3] is None):
                break
            del self.writes[seq]
            self.acc_next += 1
            if not (isinstance(w[3], int) and 200 <= w[3] < 300):
                continue
            acc["acct_writes"] += 1
            acc["events_expected"] += w[1]
            acc["events_delivered"] += min(w[1], w[2])
            if w[2] < w[1]:
                acc["events_missing"] += w[1] - w[2]
                acc["writes_short"] += 1
            elif w[2] > w[1]:
                acc["events_extra"] += w[2] - w[1]
        return acc

    async def churn(self):
        """--churn-per-min: the client drops that many random open streams a minute (a
        flaky network); each reconnects with Last-Event-ID like any other end."""
        while not self.stopping:
            await asyncio.sleep(60.0 / self.a.churn_per_min)
            live = [s for s in self.streams if s.is_open()]
            if live and not self.stopping:
                random.choice(live).conn.tr.close()

    async def storm(self):
        """--storm-minute N: half way through minute N the client drops every open SSE
        stream at once, as when every token expires in the same second (the server ends each
        with auth_revoked) or a proxy restarts; each reconnects with Last-Event-ID like any
        other end. The wire listeners stay: their deliveries meanwhile show whether the
        reconnects hold up anyone else."""
        d = self.t0 + 60.0 * (self.a.storm_minute - 1) + 30.0 - time.monotonic()
        if d > 0:
            await asyncio.sleep(d)
        live = [s for s in self.streams if s.kind == "sse" and s.is_open()]
        for s in live:
            s.conn.tr.close()
        self.log("storm: dropped %d SSE streams at once" % len(live))

    # -- samples
    async def lag_ticker(self):
        while not self.stopping:
            t = time.monotonic()
            await asyncio.sleep(0.1)
            now = time.monotonic()
            lag = now - t - 0.1
            if lag > 0.005:
                self.lag_log.append((now, lag))
            self.iv["lag_max"] = max(self.iv["lag_max"], lag)
            self.lag_minute = max(self.lag_minute, lag)

    def lag_between(self, t_from, t_to):
        """The load generator's worst event-loop lag in a tick that overlapped [t_from, t_to]:
        an event that waited for the client's own loop (or for a CPU) is stamped that late."""
        worst = 0.0
        for t_end, lag in reversed(self.lag_log):
            if t_end < t_from:
                break
            if t_end - 0.1 - lag <= t_to:
                worst = max(worst, lag)
        return worst

    def cpu_snap(self):
        """CPU seconds so far: server, load generator, machine (busy, niced); and the time.
        Cheap (three small /proc reads), so it runs on the event loop at each minute."""
        return (harness.proc_cpu_s(self.pid), harness.self_cpu_s(), cpu_split_s(), time.monotonic(),
                runq_wait_s(self.pid), runq_wait_s(os.getpid()))

    async def minute_ticker(self, nmin):
        """At each whole minute of the soak: a CPU reading; --settle s (30 at most) later, one
        "minute" line for the minute before, its writes' events in by then."""
        prev = self.cpu_snap()
        for k in range(1, nmin + 1):
            d = self.t0 + 60.0 * k - time.monotonic()
            if d > 0:
                await asyncio.sleep(d)
            cur, lag = self.cpu_snap(), self.lag_minute
            self.lag_minute = 0.0
            await asyncio.sleep(min(self.a.settle, 30.0))
            self.emit_minute(k - 1, prev, cur, lag)
            prev = cur

    def emit_minute(self, m, c0, c1, lag):
        acc = self.minutes.pop(m, None) or MinuteAcc()
        self.minutes_emitted = m + 1
        wall = max(1e-6, c1[3] - c0[3])
        srv = (c1[0] - c0[0]) if c1[0] is not None and c0[0] is not None else 0.0
        gen, busy, niced = c1[1] - c0[1], c1[2][0] - c0[2][0], c1[2][1] - c0[2][1]
        if os.nice(0) > 0:
            niced = max(0.0, niced - gen)
        rec = {"kind": "minute", "minute": m + 1, "client_lag_max_ms": ms(lag), "loadavg": os.getloadavg()[0],
               "server_cpu_pct": round(100 * srv / wall, 1), "loadgen_cpu_pct": round(100 * gen / wall, 1),
               "other_cpu_pct": round(max(0.0, 100 * (busy - srv - gen) / wall), 1),
               "niced_cpu_pct": round(100 * niced / wall, 1),
               "server_runq_ms": ms(c1[4] - c0[4]) if c1[4] is not None and c0[4] is not None else None,
               "loadgen_runq_ms": ms(c1[5] - c0[5]) if c1[5] is not None and c0[5] is not None else None}
        for kind, vals in (("write", acc.lat["write"]), ("sse", acc.lat["sse"]), ("wire", acc.lat["wire"]),
                           ("deliv", list(acc.lat["sse"]) + list(acc.lat["wire"])), ("live", acc.lat["live"]),
                           ("replay", acc.lat["replay"])):
            n, p99, p999, mx = tail_stats(vals)
            rec.update({kind + "_n": n, kind + "_p99_ms": p99, kind + "_p999_ms": p999, kind + "_max_ms": mx})
        gaps = sorted(acc.gaps)
        rec.update({"gap_n": len(gaps), "gap_p50_ms": ms(gaps[len(gaps) // 2]) if gaps else None,
                    "gap_max_ms": ms(gaps[-1]) if gaps else None})
        worst = sorted(acc.slowest.items(), key=lambda kv: -kv[1][0])[:5]
        # [scheduled send UTC, seq, listener kind, latency ms, scheduled send (monotonic s, the
        #  clock of perf record -k CLOCK_MONOTONIC), load generator lag ms meanwhile]
        rec["slowest"] = [[utc_ms(self.wall_offset + self.t0 + seq / self.a.rate), seq, kind, ms(lat),
                           round(self.t0 + seq / self.a.rate, 4),
                           ms(self.lag_between(self.t0 + seq / self.a.rate, arrival))]
                          for seq, (lat, kind, arrival) in worst]
        self.out(rec)
        self.log("minute %d: writes %d ack p99 %s max %s ms; delivery sse p99.9 %s max %s, wire p99.9 %s max %s ms; "
                 "slowest write scheduled %s" % (
                     m + 1, rec["write_n"], rec["write_p99_ms"], rec["write_max_ms"], rec["sse_p999_ms"],
                     rec["sse_max_ms"], rec["wire_p999_ms"], rec["wire_max_ms"],
                     rec["slowest"][0][0] if rec["slowest"] else "–"))

    async def sample(self, k, t_prev, cpu_prev, final=False):
        now = time.monotonic()
        iv = self.iv
        self.new_interval()
        # walking the data dir and every process's /proc entry takes milliseconds: in a
        # thread, so the event loop stays free to stamp events as they arrive
        facts = await asyncio.to_thread(self.server_facts)
        m = await self.metrics()
        table = await asyncio.to_thread(proc_cpu_table)
        cpu_now = (harness.proc_cpu_s(self.pid), harness.self_cpu_s(), cpu_split_s(), now, table)
        acc = self.account(now - self.a.settle, final)
        wall = max(1e-6, cpu_now[3] - cpu_prev[3])
        srv = (cpu_now[0] - cpu_prev[0]) if cpu_now[0] is not None and cpu_prev[0] is not None else 0.0
        gen = cpu_now[1] - cpu_prev[1]
        busy = cpu_now[2][0] - cpu_prev[2][0]
        niced = cpu_now[2][1] - cpu_prev[2][1]
        if os.nice(0) > 0:
            niced = max(0.0, niced - gen)     # the load generator's own niced CPU is not "other"
        wp50, wp99, wmax = lat_stats(iv["wlat"])
        dp50, dp99, dmax = lat_stats(iv["dlat"])
        rec = {"kind": "sample", "sample": k, "final": final, "t_s": round(now - self.t0, 1),
               "interval_s": round(now - t_prev, 1), **facts,
               "server_open_streams": m.get("hearth_open_streams"),
               "server_open_connections": m.get("hearth_open_connections"),
               "server_unsent_bytes": m.get("hearth_http_unsent_bytes"),
               "streams_open": sum(1 for s in self.streams if s.is_open()),
               "streams_subscribed": sum(1 for s in self.streams if s.subscribed and not s.lost),
               "streams_lost_total": sum(1 for s in self.streams if s.lost),
               "stream_ends": iv["ends"], "reconnects": iv["reconnects"], "streams_lost": iv["lost"],
               "writes_sent": iv["writes_sent"], "writes_ok": iv["writes_ok"], "write_errors": iv["write_errors"],
               "write_rate": round(iv["writes_sent"] / max(1e-6, now - t_prev), 2),
               "write_p50_ms": wp50, "write_p99_ms": wp99, "write_max_ms": wmax,
               "events_received": len(iv["dlat"]), "deliv_p50_ms": dp50, "deliv_p99_ms": dp99, "deliv_max_ms": dmax,
               "deliv_p999_ms": tail_stats(iv["dlat"])[2],
               "sse_events": len(iv["dlat_sse"]), "sse_max_ms": tail_stats(iv["dlat_sse"])[3],
               "wire_events": len(iv["dlat_wire"]), "wire_max_ms": tail_stats(iv["dlat_wire"])[3],
               "sse_open": sum(1 for s in self.streams if s.kind == "sse" and s.is_open()),
               "wire_open": sum(1 for s in self.streams if s.kind == "wire" and s.is_open()),
               "events_after_minute": iv["after_minute"],
               **acc, "events_late": iv["late"], "resync_snapshots": iv["resync_snapshots"],
               "keepalives": iv["keepalives"], "other_events": iv["other_events"], "errors": iv["errors"],
               "token_refreshes_total": self.token_refreshes,
               "server_cpu_pct": round(100 * srv / wall, 1), "loadgen_cpu_pct": round(100 * gen / wall, 1),
               "machine_cpu_pct": round(100 * busy / wall, 1),
               "other_cpu_pct": round(max(0.0, 100 * (busy - srv - gen) / wall), 1),
               "niced_cpu_pct": round(100 * niced / wall, 1),
               "top_other_procs": top_others(cpu_prev[4], cpu_now[4], wall, {self.pid, os.getpid()}),
               "client_lag_max_ms": ms(iv["lag_max"]), "loadavg": os.getloadavg()[0]}
        self.out(rec)
        self.log("t=%5.0fs RSS %.1f MiB fds %s streams open %d/%d writes %d ok (%d err) p99 %s ms, "
                 "delivery p99 %s ms, delivered %d/%d, other CPU %.0f%%" % (
                     rec["t_s"], (facts["rss_kib"] or 0) / 1024.0, facts["fds"], rec["streams_open"], len(self.streams),
                     rec["writes_ok"], sum(iv["write_errors"].values()), wp99, dp99,
                     acc["events_delivered"], acc["events_expected"], rec["other_cpu_pct"]))
        return now, cpu_now

    # -- the run
    async def run(self):
        a = self.a
        harness._raise_nofile()
        self.token_refreshes = 0
        self.wpool = asyncio.Queue()
        for _ in range(a.writer_conns):
            c = harness.HttpConn(self.host, self.port)
            c.t_used = 0.0
            self.wpool.put_nowait(c)
        fresh = self.server_facts()
        fresh_m = await self.metrics()
        t = time.monotonic()
        for _ in range(a.users):
            self.users.append(await self.sign_up())
        self.log("signed up %d anonymous users in %.1fs" % (len(self.users), time.monotonic() - t))
        signed_up = self.server_facts()
        for i in range(a.streams + a.wire):
            u = self.users[i % len(self.users)]
            s = Stream(self, u, i) if i < a.streams else WireListener(self, u, i - a.streams)
            u.streams.append(s)
            self.streams.append(s)
        # open every stream (bounded concurrency, each waits for its snapshot)
        t = time.monotonic()
        sem = asyncio.Semaphore(a.open_conc)
        loop = asyncio.get_running_loop()

        async def open_one(s):
            async with sem:
                s.ready = loop.create_future()
                if await s.connect() is None:
                    s.lost = True
                    return
                try:
                    ok = await asyncio.wait_for(s.ready, a.ready_timeout)
                except asyncio.TimeoutError:
                    ok = False
                    self.note_error("stream open: ready timeout")
                if not ok:
                    s.lost = True
        await asyncio.gather(*[open_one(s) for s in self.streams])
        t_open = time.monotonic() - t
        ready = sum(1 for s in self.streams if s.subscribed)
        ready_wire = sum(1 for s in self.streams if s.subscribed and s.kind == "wire")
        self.log("%d of %d SSE streams and %d of %d wire listeners subscribed in %.1fs" % (
            ready - ready_wire, a.streams, ready_wire, a.wire, t_open))
        await asyncio.sleep(2.0)
        idle = self.server_facts()
        idle_m = await self.metrics()
        start = self.out({
            "kind": "start", "prefix": self.prefix_s, "users": a.users, "streams": a.streams, "rate": a.rate,
            "minutes": a.minutes, "sample_seconds": a.sample_seconds, "keys": a.keys, "settle_s": a.settle,
            "writer_conns": a.writer_conns, "reconnect": a.reconnect, "token_max_age_s": a.token_max_age,
            "storm_minute": a.storm_minute,
            "wire": a.wire, "wire_subscribed": ready_wire,
            "streams_subscribed": ready, "open_all_s": round(t_open, 2),
            "data_fds": data_fds(self.pid, self.a.data_dir),
            "fresh": {**fresh, **fresh_m}, "signed_up": signed_up, "idle": {**idle, **idle_m},
            "errors": self.iv["errors"]})
        self.log("fresh server: RSS %.1f MiB, %s fds; with %d idle streams: RSS %.1f MiB, %s fds" % (
            (fresh["rss_kib"] or 0) / 1024.0, fresh["fds"], ready, (idle["rss_kib"] or 0) / 1024.0, idle["fds"]))
        if ready == 0:
            raise SystemExit("no stream subscribed; giving up")
        # the soak
        duration = a.minutes * 60.0
        count = int(round(a.rate * duration))
        self.new_interval()
        self.t0 = time.monotonic() + 0.5
        lag = asyncio.ensure_future(self.lag_ticker())
        churn = asyncio.ensure_future(self.churn()) if a.churn_per_min > 0 else None
        storm = asyncio.ensure_future(self.storm()) if 0 < a.storm_minute <= a.minutes else None
        wtask = asyncio.ensure_future(self.writer(count))
        nmin = int(duration // 60.0)
        ticker = asyncio.ensure_future(self.minute_ticker(nmin)) if nmin > 0 else None
        t_prev = time.monotonic()
        cpu_prev = (harness.proc_cpu_s(self.pid), harness.self_cpu_s(), cpu_split_s(), t_prev, proc_cpu_table())
        nsamples = max(1, int(round(duration / a.sample_seconds)))
        for k in range(1, nsamples + 1):
            d = self.t0 + min(duration, k * a.sample_seconds) - time.monotonic()
            if d > 0:
                await asyncio.sleep(d)
            t_prev, cpu_prev = await self.sample(k, t_prev, cpu_prev)
        # drain: every write answered and its events in (bounded by --drain)
        end = time.monotonic() + a.drain
        while time.monotonic() < end:
            if wtask.done() and all(w[3] is not None and w[2] >= w[1] for w in self.writes.values()):
                break
            await asyncio.sleep(0.5)
        if not wtask.done():
            self.stopping = True
            wtask.cancel()
        if ticker is not None:          # the last minute's line, --settle s after its end at most
            try:
                await asyncio.wait_for(ticker, max(1.0, self.t0 + duration + 35.0 - time.monotonic()))
            except asyncio.TimeoutError:
                self.note_error("minute ticker late")
        t_prev, cpu_prev = await self.sample(nsamples + 1, t_prev, cpu_prev, final=True)
        # close every stream, let the server notice, and look at what is left
        self.stopping = True
        lag.cancel()
        for task in (churn, storm):
            if task is not None:
                task.cancel()
        for s in self.streams:
            if s.conn is not None and s.conn.tr is not None:
                s.conn.tr.close()
        while not self.wpool.empty():
            self.wpool.get_nowait().close()
        await asyncio.sleep(a.close_wait)
        closed = self.server_facts()
        closed_m = await self.metrics()
        self.out({"kind": "end", "after_close": {**closed, **closed_m}, "close_wait_s": a.close_wait,
                  "token_refreshes_total": self.token_refreshes, "errors_total": self.errors_total})
        self.log("streams closed, after %gs: RSS %.1f MiB, %s fds, server open streams %s, connections %s" % (
            a.close_wait, (closed["rss_kib"] or 0) / 1024.0, closed["fds"], closed_m.get("hearth_open_streams"),
            closed_m.get("hearth_open_connections")))



def cmd_run(a):
    soak = Soak(a)
    limit = a.minutes * 60 + a.drain + a.close_wait + a.ready_timeout + 600
    try:
        asyncio.run(asyncio.wait_for(soak.run(), limit))
    except asyncio.TimeoutError:
        sys.exit("soak did not finish within %ds; stopped" % limit)


# ---------------------------------------------------------------- report


def f1(v, scale=1.0, fmt="%.1f"):
    return "–" if v is None else fmt % (v / scale)


def fv(v):
    if v is None:
        return "–"
    return "%.0f" % v if v >= 100 else "%.1f" % v


def slope_per_hour(xs, ys):
    if len(xs) < 3:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx * 3600.0


STALL_GOAL_MS = 100.0  # the goal the soak checks: no event later than this in any minute


def report_minutes(minutes, start):
    """Per minute of scheduled sends: write-ack and delivery tails by listener kind, the
    slowest write, CPU split; then whether delivery max < STALL_GOAL_MS held every minute."""
    wire_n = start.get("wire", 0) if start else 0
    print()
    print("Per minute (the writes scheduled in that minute; delivery = event on a listener − the write's "
          "scheduled send; %s SSE streams, %s wire listeners):" % (
              start["streams"] if start else "?", wire_n))
    print()
    print("| min | writes | write ack p99 / max ms | SSE events | SSE p99 / p99.9 / max ms | wire events |"
          " wire p99 / p99.9 / max ms | slowest write: scheduled (UTC), kind, ms | server CPU % | load gen CPU % |"
          " other CPU % (niced) | server / load gen run-queue wait ms | load gen lag max ms | load avg |"
          " listeners back after an end: n, gap p50 / max ms; their replayed events: n, max ms |")
    print("|" + "---|" * 15)
    for r in minutes:
        sl = r["slowest"][0] if r["slowest"] else None
        gaps = ("%d, %s / %s; %d, %s" % (r["gap_n"], fv(r["gap_p50_ms"]), fv(r["gap_max_ms"]), r["replay_n"],
                                         fv(r["replay_max_ms"]))) if r.get("gap_n") or r.get("replay_n") else "–"
        print("| %d | %d | %s / %s | %d | %s / %s / %s | %d | %s / %s / %s | %s | %s | %s | %s (%s) | %s / %s | %s | %.2f | %s |" % (
            r["minute"], r["write_n"], fv(r["write_p99_ms"]), fv(r["write_max_ms"]),
            r["sse_n"], fv(r["sse_p99_ms"]), fv(r["sse_p999_ms"]), fv(r["sse_max_ms"]),
            r["wire_n"], fv(r["wire_p99_ms"]), fv(r["wire_p999_ms"]), fv(r["wire_max_ms"]),
            ("%s, %s, %s%s" % (sl[0], sl[2], fv(sl[3]), (" (load gen %s ms late)" % fv(sl[5])) if len(sl) > 5 and sl[5]
                                else "")) if sl else "–",
            fv(r["server_cpu_pct"]), fv(r["loadgen_cpu_pct"]), fv(r["other_cpu_pct"]), fv(r["niced_cpu_pct"]),
            fv(r.get("server_runq_ms")), fv(r.get("loadgen_runq_ms")), fv(r["client_lag_max_ms"]), r["loadavg"], gaps))
    print()
    bad = [r for r in minutes if r["deliv_max_ms"] is None or r["deliv_max_ms"] >= STALL_GOAL_MS]
    wbad = [r for r in minutes if r["write_max_ms"] is None or r["write_max_ms"] >= STALL_GOAL_MS]
    worst = max((r["deliv_max_ms"] or 0) for r in minutes)
    print("- Run-queue wait = time the process's threads were ready but had no CPU (/proc/PID/task/*/schedstat):"
          " high server values in a minute with a slow event point at the shared machine, not at Hearth.")
    if not bad:
        print("- Stall goal, delivery max < %g ms in every minute: HELD in all %d minutes (worst minute's max %s ms)." % (
            STALL_GOAL_MS, len(minutes), fv(worst)))
    else:
        print("- Stall goal, delivery max < %g ms in every minute: NOT HELD in %d of %d minutes: %s." % (
            STALL_GOAL_MS, len(bad), len(minutes), "; ".join(
                "minute %d max %s ms (slowest writes scheduled %s)" % (
                    r["minute"], fv(r["deliv_max_ms"]), ", ".join("%s %s ms" % (x[0], fv(x[3])) for x in r["slowest"][:3]))
                for r in bad)))
    if any("live_max_ms" in r for r in minutes):
        # a replay is an event of a write made while its listener was away (an end, the
        # client's reconnect backoff, the new connection): late by that gap, not by a server
        # that stopped; the live deliveries are the rest
        lbad = [r for r in minutes if r.get("live_n") and (r["live_max_ms"] or 0) >= STALL_GOAL_MS]
        print("- Live deliveries only (the write scheduled while its listener was connected), max < %g ms: %s%s." % (
            STALL_GOAL_MS, "HELD in all %d minutes" % len(minutes) if not lbad else "NOT HELD in %d of %d minutes (%s)" % (
                len(lbad), len(minutes), ", ".join("minute %d %s ms" % (r["minute"], fv(r["live_max_ms"])) for r in lbad)),
            "" if not any(r.get("replay_n") for r in minutes) else "; replayed after a reconnect: %d events, max %s ms, "
            "after gaps (end to the new connection's answer, the client's 0.1-0.3 s backoff included) of at most %s ms" % (
                sum(r.get("replay_n") or 0 for r in minutes), fv(max((r.get("replay_max_ms") or 0) for r in minutes)),
                fv(max((r.get("gap_max_ms") or 0) for r in minutes)))))
    print("- Write ack max < %g ms: held in %d of %d minutes (worst %s ms)." % (
        STALL_GOAL_MS, len(minutes) - len(wbad), len(minutes), fv(max((r["write_max_ms"] or 0) for r in minutes))))
    lagged = [r for r in minutes if (r["client_lag_max_ms"] or 0) >= STALL_GOAL_MS / 4]
    if lagged:
        print("- The load generator's own event loop ran >= %g ms late in minute(s) %s: events there may be stamped "
              "late by the client, not the server." % (STALL_GOAL_MS / 4, ", ".join(str(r["minute"]) for r in lagged)))


def report_syncs(minutes, start, syncs):
    """SOAK_PERF=1: the server's syncs per minute by file, and for each slow write the
    syncs of SYNC_NOTE_MS or more that were in flight between its send and its slowest event."""
    names = {fd: "%s (fd %s)" % (n, fd) for fd, n in ((start or {}).get("data_fds") or {}).items()}
    print()
    print("- Server syncs (perf, fsync / fdatasync by file: count, p50 / p99 / max ms; madvise / munmap calls) per minute:")
    for m, by in sorted(syncs["per_minute"].items(), key=lambda kv: int(kv[0])):
        parts = ["%s %d, %s / %s / %s" % (names.get(fd, "fd " + fd), v[0], fv(v[1]), fv(v[2]), fv(v[3]))
                 for fd, v in sorted(by.items()) if isinstance(v, list)]
        calls = ["%s %d" % (k, v) for k, v in sorted(by.items()) if not isinstance(v, list)]
        print("    minute %s: %s%s" % (m, "; ".join(parts), ("; " + ", ".join(calls)) if calls else ""))
    long = syncs["long"]
    for r in minutes:
        for x in r["slowest"][:2]:
            if x[3] is None or x[3] < STALL_GOAL_MS or len(x) < 6:
                continue
            t_from, t_to = x[4], x[4] + x[3] / 1000.0
            hit = ["%s %s %s ms from %+.0f ms" % (c[2], names.get(c[3], "fd " + c[3]), fv(c[1]), (c[0] - t_from) * 1000)
                   for c in long if c[0] < t_to and c[0] + c[1] / 1000.0 > t_from]
            print("- Minute %d, write %d scheduled %s: %s ms; load generator late %s ms; server syncs >= %g ms in "
                  "flight: %s." % (r["minute"], x[1], x[0], fv(x[3]), fv(x[5]), syncs["note_ms"],
                                   ", ".join(hit) if hit else "none"))


def cmd_report(a):
    start = end = syncs = None
    samples, minutes = [], []
    with open(a.results) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r["kind"] == "start":
                start = r
            elif r["kind"] == "sample":
                samples.append(r)
            elif r["kind"] == "minute":
                minutes.append(r)
            elif r["kind"] == "syncs":
                syncs = r
            elif r["kind"] == "end":
                end = r
    if not samples:
        sys.exit("no samples in %s" % a.results)
    step = start["sample_seconds"] if start else 60.0
    print("| t (min) | RSS MiB | fds | threads | streams open (client / server) | writes ok | write err |"
          " write p50 / p99 / max ms | delivery p50 / p99 / max ms | delivered / expected | reconnects |"
          " server CPU % | other CPU % (niced) |")
    print("|" + "---|" * 13)
    for r in samples:
        if r["final"]:
            label = "end (+%.0f s)" % (r["t_s"] - samples[-2]["t_s"]) if len(samples) > 1 else "end"
        else:
            label = "%g" % round(r["sample"] * step / 60.0, 2)
        werr = sum(r["write_errors"].values())
        ends = sum(r["stream_ends"].values())
        print("| %s | %s | %s | %s | %d / %s | %d | %d | %s / %s / %s | %s / %s / %s | %d / %d%s | %d%s | %s | %s |" % (
            label, f1(r["rss_kib"], 1024.0), r["fds"], r["threads"], r["streams_open"],
            "–" if r["server_open_streams"] is None else r["server_open_streams"],
            r["writes_ok"], werr, fv(r["write_p50_ms"]), fv(r["write_p99_ms"]), fv(r["write_max_ms"]),
            fv(r["deliv_p50_ms"]), fv(r["deliv_p99_ms"]), fv(r["deliv_max_ms"]),
            r["events_delivered"], r["events_expected"],
            (" (+%d late)" % r["events_late"]) if r["events_late"] else "",
            r["reconnects"], (" (%d ends)" % ends) if ends and ends != r["reconnects"] else "",
            *(("–", "–") if r["interval_s"] < 2 else
              (fv(r["server_cpu_pct"]), "%s (%s)" % (fv(r["other_cpu_pct"]), fv(r.get("niced_cpu_pct")))))))
    body = [r for r in samples if not r["final"]]
    first, last = body[0], body[-1]
    if minutes:
        report_minutes(minutes, start)
    if minutes and syncs:
        report_syncs(minutes, start, syncs)
    print()
    if start:
        fr, idle = start["fresh"], start["idle"]
        su = start.get("signed_up") or {}
        print("- Start: %d users, %d of %d listeners (SSE and wire) subscribed in %.1f s; fresh server RSS %s MiB, %s fds; after the "
              "sign-ups %s MiB, %s fds; with the streams open and idle: RSS %s MiB, %s fds, %s threads." % (
                  start["users"], start["streams_subscribed"], start["streams"] + start.get("wire", 0), start["open_all_s"],
                  f1(fr["rss_kib"], 1024.0), fr["fds"], f1(su.get("rss_kib"), 1024.0), su.get("fds", "–"),
                  f1(idle["rss_kib"], 1024.0), idle["fds"], idle["threads"]))
    rss = [(r["t_s"], r["rss_kib"] / 1024.0) for r in body if r["rss_kib"]]
    late = [p for p in rss if p[0] >= 300] or rss
    sl = slope_per_hour([p[0] for p in late], [p[1] for p in late])
    print("- RSS: first sample %s MiB, last %s MiB (%+.1f MiB), peak %s MiB (VmHWM %s MiB); least-squares slope "
          "%s MiB/hour over the samples from minute %g on." % (
              f1(first["rss_kib"], 1024.0), f1(last["rss_kib"], 1024.0),
              ((last["rss_kib"] or 0) - (first["rss_kib"] or 0)) / 1024.0,
              f1(max(r["rss_kib"] or 0 for r in samples), 1024.0), f1(samples[-1]["hwm_kib"], 1024.0),
              "–" if sl is None else "%+.1f" % sl, round(late[0][0] / 60.0) if late else 0))
    fds = [r["fds"] for r in body if r["fds"] is not None]
    print("- Open fds: first sample %s, last %s, min %s, max %s%s." % (
        first["fds"], last["fds"], min(fds) if fds else "–", max(fds) if fds else "–",
        "; after the end, all streams closed by the client and %gs later: %s fds, %s open streams, %s open "
        "connections, RSS %s MiB" % (end["close_wait_s"], end["after_close"]["fds"],
                                      end["after_close"].get("hearth_open_streams"),
                                      end["after_close"].get("hearth_open_connections"),
                                      f1(end["after_close"]["rss_kib"], 1024.0)) if end else ""))
    wp99 = sorted(r["write_p99_ms"] for r in body if r["write_p99_ms"] is not None)
    dp99 = sorted(r["deliv_p99_ms"] for r in body if r["deliv_p99_ms"] is not None)
    print("- Write p99: first interval %s ms, last %s ms, median of the intervals %s ms, worst %s ms. "
          "Delivery p99: first %s ms, last %s ms, median %s ms, worst %s ms." % (
              fv(first["write_p99_ms"]), fv(last["write_p99_ms"]), fv(harness.pct(wp99, 50)), fv(wp99[-1] if wp99 else None),
              fv(first["deliv_p99_ms"]), fv(last["deliv_p99_ms"]), fv(harness.pct(dp99, 50)), fv(dp99[-1] if dp99 else None)))
    tot = lambda k: sum(r.get(k) or 0 for r in samples)  # noqa
    werr = {}
    ends = {}
    errs = {}
    for r in samples:
        for d, acc in ((r["write_errors"], werr), (r["stream_ends"], ends), (r["errors"], errs)):
            for k, v in d.items():
                acc[k] = acc.get(k, 0) + v
    print("- Writes: %d sent, %d ok, %d errors%s; events delivered %d of %d expected (%d missing in %d writes, "
          "%d extra, %d late), %d fallback snapshots." % (
              tot("writes_sent"), tot("writes_ok"), sum(werr.values()),
              (" (%s)" % ", ".join("%s: %d" % kv for kv in sorted(werr.items()))) if werr else "",
              tot("events_delivered"), tot("events_expected"), tot("events_missing"), tot("writes_short"),
              tot("events_extra"), tot("events_late"), tot("resync_snapshots")))
    print("- Streams: %d open at the last sample (server reports %s); ends %s; %d reconnects; %d lost (given up); "
          "%d token refreshes." % (
              samples[-1]["streams_open"], samples[-1]["server_open_streams"],
              (", ".join("%s: %d" % kv for kv in sorted(ends.items()))) if ends else "none",
              tot("reconnects"), samples[-1]["streams_lost_total"], samples[-1]["token_refreshes_total"]))
    if errs:
        print("- Other errors: %s." % ", ".join("%s: %d" % kv for kv in sorted(errs.items())))
    seen = {}
    for r in body:
        for name, p in r.get("top_other_procs") or []:
            c, mx = seen.get(name, (0, 0.0))
            seen[name] = (c + 1, max(mx, p))
    if seen:
        print("- Other processes among the top 3 CPU users of an interval (intervals, highest CPU %%): %s." % ", ".join(
            "%s (%d, %s%%)" % (k, c, fv(mx)) for k, (c, mx) in sorted(seen.items(), key=lambda kv: -kv[1][0])))
    print("- CPU (mean of the intervals; 100%% = one core): server %.1f%%, load generator %.1f%%, other processes "
          "%.1f%% (of which at a positive nice value %.1f%%); load generator event-loop lag max %s ms." % (
              sum(r["server_cpu_pct"] for r in body) / len(body), sum(r["loadgen_cpu_pct"] for r in body) / len(body),
              sum(r["other_cpu_pct"] for r in body) / len(body),
              sum(r.get("niced_cpu_pct") or 0 for r in body) / len(body),
              fv(max(r["client_lag_max_ms"] or 0 for r in body))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    p = sp.add_parser("run")
    p.add_argument("--url", required=True)
    p.add_argument("--pid", type=int, required=True, help="the server's pid (RSS, fds, CPU)")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--wire", type=int, default=0, help="wire-protocol listeners beside the SSE streams")
    p.add_argument("--wire-ns", default="soak", help="the ns parameter of the wire connections' URL")
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--rate", type=float, default=20.0)
    p.add_argument("--minutes", type=float, default=60.0)
    p.add_argument("--sample-seconds", type=float, default=60.0)
    p.add_argument("--keys", type=int, default=50, help="favourites per user the writes cycle through")
    p.add_argument("--writer-conns", type=int, default=16)
    p.add_argument("--write-timeout", type=float, default=30.0)
    p.add_argument("--conn-idle", type=float, default=30.0,
                   help="reopen a writer connection idle this long (the server closes idle ones after 60 s)")
    p.add_argument("--max-inflight", type=int, default=2000, help="writes in flight at most (more: 'client backlog' errors)")
    p.add_argument("--settle", type=float, default=10.0, help="seconds a write's events get before they are counted")
    p.add_argument("--open-conc", type=int, default=100)
    p.add_argument("--ready-timeout", type=float, default=60.0)
    p.add_argument("--drain", type=float, default=60.0)
    p.add_argument("--close-wait", type=float, default=5.0)
    p.add_argument("--token-max-age", type=float, default=3000.0, help="refresh an ID token this old (s)")
    p.add_argument("--no-reconnect", dest="reconnect", action="store_false")
    p.add_argument("--churn-per-min", type=float, default=0.0, help="open streams the client drops per minute")
    p.add_argument("--storm-minute", type=int, default=0, help="drop every SSE stream at once half way through this minute")
    p.add_argument("--max-reconnect-failures", type=int, default=8)
    p.set_defaults(fn=cmd_run)
    p = sp.add_parser("report")
    p.add_argument("results")
    p.set_defaults(fn=cmd_report)
    p = sp.add_parser("syncs", help="perf script output on stdin -> a syncs line (soak.sh, SOAK_PERF=1)")
    p.add_argument("results")
    p.set_defaults(fn=cmd_syncs)
    a = ap.parse_args()
    if a.cmd == "run" and (a.rate <= 0 or a.minutes <= 0 or a.sample_seconds <= 0 or a.users < 1 or a.streams < 1):
        sys.exit("rate, minutes, sample-seconds, users and streams must be positive")
    a.fn(a)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Firebase wire-protocol load generator for scripts/bench/wire.sh (stdlib only; Python 3.9+).

Speaks the SDKs' protocol (docs/protocol/wire.md) over /.ws?v=5&ns=<ns> with a
small RFC 6455 client on asyncio Protocols (upgrade, unmasked server frames in, masked
text frames out, pings answered), written like the SSE harness's raw subscriber so the two
load generators cost about the same per connection and per event.

  fanout   N connections: handshake, `auth` with the SSE user's ID token (when the fixtures
           have one), `q` on a path (one location for all, or each its own), live at the
           `ok`. Then harness.py's own SSE measurement runs unchanged with these wire
           subscribers in place of SSE ones (harness.sse_once): RSS of the fresh server,
           RSS with N idle listening connections (KiB per connection), and, at --rate > 0,
           the SSE scenario's REST writer (POST a favourite, open loop at a fixed rate) with
           send->recv / ack->recv / last-of-N latencies, delivered %, CPU split.
  writes   C connections, each signed in as one of the writer users, each sending `p`
           writes (a favourite, the REST create body's fields, at a new path each time) in a
           closed loop (next write when the previous one's `ok` arrived) for --duration s
           after --warmup s; acknowledged writes/s, ack latency p50/p99, CPU split.
  report   the Markdown table of a wire.sh run from its result files.
"""
import argparse
import array
import asyncio
import base64
import json
import multiprocessing as mp
import os
import random
import re
import statistics
import string
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import harness  # noqa: E402  (the SSE scenario's measurement, proc stats, fixtures)


# ---------------------------------------------------------------- WebSocket client


def ws_frame(payload):
    """One masked text frame (RFC 6455 §5.2; a client must mask)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x81, 0x80 | n))
    elif n < 65536:
        head = bytes((0x81, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 0xFF)) + n.to_bytes(8, "big")
    return head + ws_mask(payload)


def ws_control(opcode, payload=b""):
    return bytes((0x80 | opcode, 0x80 | len(payload))) + ws_mask(payload)


_mask_random = random.Random(os.urandom(16))


def ws_mask(payload):
    """A random 4-byte masking key, then the payload XORed with it."""
    key = _mask_random.getrandbits(32).to_bytes(4, "big")  # no syscall per frame
    n = len(payload)
    if n == 0:
        return key
    stream = (key * ((n + 3) // 4))[:n]
    return key + (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


class WSClient(asyncio.Protocol):
    """Upgrade, then frames; whole text messages go to self.message(payload, now)."""

    def __init__(self, host, port, ns):
        self.host, self.port, self.ns = host, port, ns
        self.tr = None
        self.buf = b""
        self.upgraded = False
        self.frag = []
        self.dead = False

    def connection_made(self, tr):
        self.tr = tr
        key = base64.b64encode(os.urandom(16)).decode()
        tr.write(("GET /.ws?v=5&ns=%s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nUser-Agent: hearth-bench-wire\r\n\r\n"
                  % (self.ns, self.host, self.port, key)).encode())

    def connection_lost(self, exc):
        self.dead = True
        self.lost()

    def send(self, text_bytes):
        if self.tr is not None and not self.dead:
            self.tr.write(ws_frame(text_bytes))

    def data_received(self, data):
        now = time.monotonic()
        if not self.upgraded:
            self.buf += data
            i = self.buf.find(b"\r\n\r\n")
            if i < 0:
                return
            head, data = self.buf[:i], self.buf[i + 4:]
            self.buf = b""
            try:
                status = int(head.split(b" ", 2)[1])
            except (IndexError, ValueError):
                status = -1
            if status != 101:
                self.failed("upgrade status %d" % status)
                self.tr.close()
                return
            self.upgraded = True
            if not data:
                return
        buf = self.buf + data if self.buf else data
        pos, n = 0, len(buf)
        while n - pos >= 2:
            b0, b1 = buf[pos], buf[pos + 1]
            ln, hl = b1 & 0x7F, 2
            if ln == 126:
                if n - pos < 4:
                    break
                ln, hl = int.from_bytes(buf[pos + 2:pos + 4], "big"), 4
            elif ln == 127:
                if n - pos < 10:
                    break
                ln, hl = int.from_bytes(buf[pos + 2:pos + 10], "big"), 10
            if b1 & 0x80:
                self.failed("masked frame from the server")
                self.tr.close()
                return
            end = pos + hl + ln
            if end > n:
                break
            payload = buf[pos + hl:end]
            pos = end
            op = b0 & 0x0F
            if op in (0, 1):
                if not b0 & 0x80:
                    self.frag.append(payload)
                    continue
                if self.frag:
                    self.frag.append(payload)
                    payload = b"".join(self.frag)
                    self.frag = []
                self.message(payload, now)
            elif op == 9:
                self.tr.write(ws_control(0xA, payload))
            elif op == 8:
                if not self.dead:
                    self.tr.write(ws_control(0x8, payload[:2]))
                    self.tr.close()
                self.buf = b""
                return
        self.buf = buf[pos:]

    # hooks
    def message(self, payload, now):
        pass

    def failed(self, msg):
        pass

    def lost(self):
        pass


def request(number, action, body):
    return json.dumps({"t": "d", "d": {"r": number, "a": action, "b": body}}, separators=(",", ":")).encode()


# ---------------------------------------------------------------- fan-out subscribers


class WireSub(WSClient):
    """One listening connection: handshake -> auth (r 1, when there is a token) and q
    (r 2), pipelined as the JS SDK does; live when the q's ok arrives (its data came first)."""

    def __init__(self, w, index):
        super().__init__(w.host, w.port, w.ns)
        self.w, self.index = w, index
        self.ready = False
        self.gone = False  # failure already counted

    def message(self, payload, now):
        if self.ready:
            self.w.on_event(self, payload, now)
            return
        try:
            m = json.loads(payload)
        except ValueError:
            return self.failed("not JSON: %r" % payload[:80])
        stage = self.w.stage
        if m.get("t") == "c":
            if m["d"].get("t") == "h":
                if stage == "handshake":
                    return self.w.set_ready(self)
                if self.w.token:
                    self.send(request(1, "auth", {"cred": self.w.token}))
                elif stage == "auth":
                    return self.w.set_ready(self)
                if stage == "listen":
                    self.send(request(2, "q", {"p": self.w.path_for(self.index), "h": ""}))
            return
        d = m.get("d", {})
        if "r" in d:
            b = d.get("b", {})
            if b.get("s") != "ok":
                return self.failed("%s answered %s %s" % ({1: "auth", 2: "q"}.get(d["r"], d["r"]), b.get("s"), b.get("d")))
            if d["r"] == (2 if stage == "listen" else 1):
                self.w.set_ready(self)

    def failed(self, msg):
        if not self.gone:
            self.gone = True
            self.w.on_fail(self, msg)

    def lost(self):
        if not self.gone:
            self.gone = not self.ready
            self.w.on_lost(self)


class WireSubscriberWorker(harness.SubscriberWorker):
    """harness.SubscriberWorker's interface (ctl messages ready/count/mark/stop/result),
    with wire connections. cfg["wire"]: {"ns", "path"} where path may contain ${uid} and
    ${i} (the connection's number in this process, prefixed by the process id)."""

    def __init__(self, cfg, fx, n, prefix, ctl):
        super().__init__(cfg, fx, n, prefix, ctl)
        wire = cfg["wire"]
        self.ns = wire.get("ns", "bench")
        self.path_tmpl = wire["path"]
        self.token = self.user.get("token") or ""
        self.stage = wire.get("stage", "listen")
        self.pid = os.getpid()

    def path_for(self, i):
        return self.path_tmpl.replace("${uid}", self.user["uid"]).replace("${i}", "c%d-%d" % (self.pid, i))

    def set_ready(self, conn):
        self._set_ready(conn)

    def on_event(self, conn, payload, now):
        i = payload.find(self.prefix)
        if i >= 0:
            j = k = i + len(self.prefix)
            while k < len(payload) and 48 <= payload[k] <= 57:
                k += 1
            self.seqs.append(int(payload[j:k]))
            self.times.append(now)
        else:
            self.other_events += 1

    async def _open_one(self, sem, timeout, index=0):
        async with sem:
            loop = asyncio.get_running_loop()
            fut = loop.create_future()
            conn = WireSub(self, index)
            self.ready_waiters[conn] = fut  # before any byte can arrive
            try:
                await asyncio.wait_for(loop.create_connection(lambda: conn, self.host, self.port), timeout)
            except Exception as e:  # noqa
                self.ready_waiters.pop(conn, None)
                if conn.tr is not None and not conn.dead:
                    conn.tr.close()
                else:
                    self.n_failed += 1
                if len(self.fail_msgs) < 5:
                    self.fail_msgs.append("connect %r" % e)
                return
            self.conns.append(conn)
            if fut.done():
                return
            try:
                await asyncio.wait_for(fut, timeout)
            except asyncio.TimeoutError:
                self.on_fail(conn, "ready timeout")

    async def run(self, open_conc, timeout):
        loop = asyncio.get_running_loop()
        sem = asyncio.Semaphore(open_conc)
        t0 = time.monotonic()
        await asyncio.gather(*[self._open_one(sem, timeout, i) for i in range(self.n)])
        self.ctl.send(("ready", self.n_ready, self.n_failed, time.monotonic() - t0, self.fail_msgs))
        while True:
            msg = await loop.run_in_executor(None, self.ctl.recv)
            if msg == "count":
                self.ctl.send(("count", len(self.seqs), self.n_lost))
            elif msg == "mark":
                self.ctl.send(("mark", time.process_time()))
            elif msg == "stop":
                break
        cpu = time.process_time()
        for c in self.conns:
            if c.tr is not None:
                c.tr.close()
        self.ctl.send(("result", self.seqs.tobytes(), self.times.tobytes(),
                       {"lost": self.n_lost, "other_events": self.other_events, "cpu_s": cpu}))


def cmd_fanout(a):
    harness._raise_nofile()
    cfg, fx = harness.load_json(a.target), harness.load_json(a.fixtures)
    cfg["name"] = a.label
    cfg["wire"] = {"ns": a.ns, "path": a.path, "stage": a.stage}
    harness.SubscriberWorker = WireSubscriberWorker  # harness.subscriber_proc builds these (fork)
    harness.wait_quiet(a.quiet, a.quiet_wait, a.server_pid)
    whole = harness.CpuMeter(a.server_pid)
    res = harness.sse_once(cfg, fx, a.subscribers, a)
    if a.rate <= 0:
        # no write window: the CPU split covers the whole run (open, settle, RSS), which is
        # what could disturb the RSS reading; the subscriber processes are reaped by now
        res.update(whole.stop())
        res["client_cpu_pct"] = None
    res.update({"kind": "wire_fanout" if a.rate > 0 else "wire_idle", "paths": a.paths, "listen_path": a.path,
                "ns": a.ns, "run": a.run, "stage": a.stage})
    harness.append_result(a.out, res)


# ---------------------------------------------------------------- closed-loop writes


FAV = ('{"id":"%s","name":"Place %d","note":"created by wire bench %s","createdAt":%d,"createdBy":"%s",'
       '"latitude":52.520008,"longitude":13.404954}')


# An answer {"t":"d","d":{"r":N,"b":{"s":"status",...}}} (members in any order).
_ANSWER = re.compile(rb'"r":(\d+).*?"s":"([a-z_]*)"|"s":"([a-z_]*)".*?"r":(\d+)', re.S)


class WireWriter(WSClient):
    def __init__(self, w, index, user):
        super().__init__(w.host, w.port, w.ns)
        self.w, self.index, self.user = w, index, user
        self.number = 1
        self.t_sent = 0.0
        self.authed = False
        self.waiting = False
        self.gone = False  # failure already counted
        self.tag = "".join(random.choices(string.ascii_lowercase, k=6))

    def message(self, payload, now):
        if payload[:2] == b"{\"" and b'"r":' in payload:
            # An answer: its number and status by regex, not a JSON parse (the client is
            # in every write's closed loop, so its cost per message is part of the rate).
            found = _ANSWER.search(payload)
            if found is None:
                return
            if found.group(1) is not None:
                number, status = int(found.group(1)), found.group(2).decode()
            else:
                number, status = int(found.group(4)), found.group(3).decode()
            d = {"r": number, "b": {"s": status}}
            if status != "ok":
                d = json.loads(payload)["d"]
            if d["r"] == 1 and not self.authed:
                if status != "ok":
                    return self.failed("auth answered %s %s" % (status, d["b"].get("d")))
                self.authed = True
                self.w.on_authed(self)
                return
            self.waiting = False
            self.w.on_answer(self, status, now - self.t_sent, now)
            return
        try:
            m = json.loads(payload)
        except ValueError:
            return
        if m.get("t") == "c" and m["d"].get("t") == "h":
            token = self.user.get("token") or ""
            if token:
                self.send(request(1, "auth", {"cred": token}))
            else:
                self.authed = True
                self.w.on_authed(self)

    def write_next(self):
        self.number += 1
        key = "w%s%d-%d" % (self.tag, self.index, self.number)
        uid = self.user["uid"]
        body = FAV % (key, self.number, self.tag, int(time.time() * 1000), uid)
        msg = '{"t":"d","d":{"r":%d,"a":"p","b":{"p":"/users/%s/favorites/%s","d":%s}}}' % (self.number, uid, key, body)
        self.waiting = True
        self.t_sent = time.monotonic()
        self.send(msg.encode())

    def failed(self, msg):
        if not self.gone:
            self.gone = True
            self.w.on_fail(msg)

    def lost(self):
        self.w.on_lost(self)
        if not self.authed:
            self.failed("closed before auth")


class RESTWriter(asyncio.Protocol):
    """The same closed loop over REST: POST of the same favourite to
    /users/<uid>/favorites.json on one keep-alive HTTP/1.1 connection, the next request when
    the previous response is in. Built like WireWriter (same process model, event loop and
    per-message work), so the two rates compare the server's paths with the load
    generator's own cost the same on both sides; wrk gives the REST rate with a C client."""

    def __init__(self, w, index, user):
        self.w, self.index, self.user = w, index, user
        self.tr = None
        self.buf = b""
        self.number = 0
        self.t_sent = 0.0
        self.authed = False
        self.waiting = False
        self.dead = False
        self.tag = "".join(random.choices(string.ascii_lowercase, k=6))
        token = user.get("token") or ""
        self.auth = ("Authorization: Bearer %s\r\n" % token) if token else ""
        self.path = "/users/%s/favorites.json" % user["uid"]

    def connection_made(self, tr):
        self.tr = tr
        self.authed = True
        self.w.on_authed(self)

    def connection_lost(self, exc):
        self.dead = True
        self.w.on_lost(self)

    def write_next(self):
        self.number += 1
        key = "r%s%d-%d" % (self.tag, self.index, self.number)
        body = (FAV % (key, self.number, self.tag, int(time.time() * 1000), self.user["uid"])).encode()
        head = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % (self.path, self.w.host, self.w.port, self.auth, len(body))).encode()
        self.waiting = True
        self.t_sent = time.monotonic()
        self.tr.write(head + body)

    def data_received(self, data):
        now = time.monotonic()
        self.buf += data
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i < 0:
                return
            found = _CONTENT_LENGTH.search(self.buf, 0, i)
            length = int(found.group(1)) if found else 0
            end = i + 4 + length
            if len(self.buf) < end:
                return
            status = self.buf[9:12]
            self.buf = self.buf[end:]
            self.waiting = False
            self.w.on_answer(self, "ok" if status == b"200" else "http_" + status.decode(), now - self.t_sent, now)


_CONTENT_LENGTH = re.compile(rb"\r\n[Cc]ontent-[Ll]ength: *(\d+)")


class WriterWorker:
    def __init__(self, host, port, ns, users, offset, n, ctl, transport="wire"):
        self.transport = transport
        self.host, self.port, self.ns = host, port, ns
        self.users, self.offset, self.n, self.ctl = users, offset, n, ctl
        self.conns = []
        self.authed = 0
        self.fail_msgs = []
        self.n_failed = 0
        self.lost = 0
        self.running = False
        self.t_start = self.t_end = 0.0
        self.ok = 0
        self.statuses = {}
        self.lat = array.array("d")
        # per transport, for --transport mixed (wire and REST connections side by side)
        self.ok_by = {"wire": 0, "rest": 0}
        self.all_authed = None
        self.cpu = {}

    def on_fail(self, msg):
        self.n_failed += 1
        if len(self.fail_msgs) < 5:
            self.fail_msgs.append(msg)
        self.authed_or_failed()

    def on_lost(self, conn):
        self.lost += 1

    def on_authed(self, conn):
        self.authed += 1
        self.authed_or_failed()

    def authed_or_failed(self):
        if self.all_authed is not None and not self.all_authed.done() and self.authed + self.n_failed >= self.n:
            self.all_authed.set_result(True)

    def on_answer(self, conn, status, lat, now):
        if self.t_start <= now <= self.t_end:
            if status == "ok":
                self.ok += 1
                self.lat.append(lat)
                self.ok_by["rest" if isinstance(conn, RESTWriter) else "wire"] += 1
            else:
                self.statuses[status] = self.statuses.get(status, 0) + 1
        if self.running and now < self.t_end:
            conn.write_next()

    def mark(self, name):
        self.cpu[name] = time.process_time()

    async def run(self, timeout):
        loop = asyncio.get_running_loop()
        self.all_authed = loop.create_future()
        for i in range(self.n):
            idx = self.offset + i
            # mixed: every other connection REST, so both halves share the server, its
            # writer's batches and the disk at the same moments
            rest = self.transport == "rest" or (self.transport == "mixed" and idx % 2 == 1)
            conn = (RESTWriter if rest else WireWriter)(self, idx, self.users[idx % len(self.users)])
            try:
                await asyncio.wait_for(loop.create_connection(lambda c=conn: c, self.host, self.port), timeout)
                self.conns.append(conn)
            except Exception as e:  # noqa
                self.on_fail("connect %r" % e)
        if self.n_failed < self.n:
            try:
                await asyncio.wait_for(self.all_authed, timeout)
            except asyncio.TimeoutError:
                self.on_fail("auth timeout")
        self.ctl.send(("ready", self.authed, self.n_failed, self.fail_msgs))
        msg = await loop.run_in_executor(None, self.ctl.recv)
        if msg[0] != "go":
            return
        t_go, self.t_start, self.t_end = msg[1:]
        await asyncio.sleep(max(0.0, t_go - time.monotonic()))
        loop.call_at(self.t_start, self.mark, "start")
        loop.call_at(self.t_end, self.mark, "end")
        self.running = True
        for c in self.conns:
            if c.authed and not c.dead:
                c.write_next()
        await asyncio.sleep(max(0.0, self.t_end - time.monotonic()))
        self.running = False
        # the answers still under way (bounded wait)
        end = time.monotonic() + 10
        while any(c.waiting and not c.dead for c in self.conns) and time.monotonic() < end:
            await asyncio.sleep(0.01)
        for c in self.conns:
            if c.tr is not None:
                c.tr.close()
        self.ctl.send(("result", self.ok, self.statuses, self.lat.tobytes(),
                       self.cpu.get("end", time.process_time()) - self.cpu.get("start", 0.0), self.lost, self.ok_by))


def writer_worker_proc(host, port, ns, users, offset, n, timeout, ctl, transport):
    harness._raise_nofile()
    if os.environ.get("WIRE_UVLOOP") == "1":
        # libuv's event loop (PyPI uvloop) instead of asyncio's own: the load generator's
        # cost per message is in every write's closed loop (wrk, the REST client, is C).
        import uvloop
        uvloop.install()
    asyncio.run(WriterWorker(host, port, ns, users, offset, n, ctl, transport).run(timeout))


def cmd_writes(a):
    cfg, fx = harness.load_json(a.target), harness.load_json(a.fixtures)
    host, port = harness.target_addr(cfg)
    users = fx["writers"]
    ctx = mp.get_context("fork")
    procs = max(1, min(a.procs, a.conns))
    workers, offset = [], 0
    for i in range(procs):
        share = a.conns // procs + (1 if i < a.conns % procs else 0)
        parent, child = ctx.Pipe()
        p = ctx.Process(target=writer_worker_proc, args=(host, port, a.ns, users, offset, share, 30.0, child, a.transport), daemon=True)
        p.start()
        workers.append((p, parent))
        offset += share
    authed = failed = 0
    msgs = []
    for p, c in workers:
        if not c.poll(90):
            raise RuntimeError("writer worker did not report")
        _, ok_n, f, fm = c.recv()
        authed += ok_n
        failed += f
        msgs += fm
    harness.wait_quiet(a.quiet, a.quiet_wait, a.server_pid)
    t_go = time.monotonic() + 0.3
    t_start = t_go + a.warmup
    t_end = t_start + a.duration
    for p, c in workers:
        c.send(("go", t_go, t_start, t_end))
    time.sleep(max(0.0, t_start - time.monotonic()))
    b0, s0 = harness.sys_busy_s(), harness.proc_cpu_s(a.server_pid) if a.server_pid else None
    time.sleep(max(0.0, t_end - time.monotonic()))
    b1, s1 = harness.sys_busy_s(), harness.proc_cpu_s(a.server_pid) if a.server_pid else None
    wall = max(1e-6, time.monotonic() - t_start)
    ok = lost = 0
    statuses = {}
    lat = array.array("d")
    client_cpu = 0.0
    ok_by = {"wire": 0, "rest": 0}
    for p, c in workers:
        if not c.poll(60):
            raise RuntimeError("writer worker did not finish")
        _, k, st, lb, cpu, ls, by = c.recv()
        ok += k
        for t, v in by.items():
            ok_by[t] += v
        lost += ls
        for s, v in st.items():
            statuses[s] = statuses.get(s, 0) + v
        x = array.array("d")
        x.frombytes(lb)
        lat.extend(x)
        client_cpu += cpu
        p.join(10)
    lat = sorted(lat)
    srv = (s1 - s0) if s0 is not None and s1 is not None else 0.0
    busy = b1 - b0
    ms = lambda v: None if v is None else round(v * 1000.0, 2)  # noqa
    kind = {"wire": "wire_writes", "rest": "rest_py_writes", "mixed": "mixed_writes"}[a.transport]
    scenario = {"wire": "wire_p_closed_loop", "rest": "rest_post_closed_loop_py", "mixed": "wire_and_rest_side_by_side"}[a.transport]
    res = {
        "kind": kind, "target": a.label, "scenario": scenario, "conc": a.conns,
        "procs": procs, "conns_authed": authed, "conns_failed": failed, "fail_samples": msgs[:3],
        "duration_s": a.duration, "warmup_s": a.warmup, "writes_ok": ok,
        "wps": round(ok / a.duration, 1), "not_ok": statuses, "lost_conns": lost,
        "p50_ms": ms(harness.pct(lat, 50)), "p99_ms": ms(harness.pct(lat, 99)), "max_ms": ms(lat[-1] if lat else None),
        "server_cpu_pct": round(100.0 * srv / wall, 1), "client_cpu_pct": round(100.0 * client_cpu / wall, 1),
        "foreign_cpu_pct": round(max(0.0, 100.0 * (busy - srv - client_cpu) / wall), 1),
        "machine_cpu_pct": round(100.0 * busy / wall, 1), "run": a.run,
    }
    if a.transport == "mixed":
        res["wire_conns"], res["rest_conns"] = (a.conns + 1) // 2, a.conns // 2
        res["wire_wps"] = round(ok_by["wire"] / a.duration, 1)
        res["rest_wps"] = round(ok_by["rest"] / a.duration, 1)
    if a.server_pid:
        res["server_rss_kib"] = harness.proc_rss_kib(a.server_pid)
    harness.append_result(a.out, res)


# ---------------------------------------------------------------- report


def load_lines(paths):
    out = []
    for p in paths:
        if p and os.path.exists(p):
            with open(p) as f:
                out += [json.loads(line) for line in f if line.strip()]
    return out


def median(vals):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2.0


def f(v, nd=None):
    if v is None:
        return "–"
    if nd is None:
        nd = 0 if abs(v) >= 100 else (1 if abs(v) >= 10 else 2)
    s = "%.*f" % (nd, v)
    if abs(v) >= 1000:
        s = "{:,.{}f}".format(v, nd)
    return s


def per_push_us(rows):
    """Server CPU µs per delivered push of each run in `rows` (runs with the figures)."""
    return [r["server_cpu_pct"] / 100.0 * r["window_s"] / r["events_delivered"] * 1e6
            for r in rows or [] if r.get("server_cpu_pct") and r.get("window_s") and r.get("events_delivered")]


def cmd_report(a):
    wire = load_lines(a.wire)
    sse = load_lines(a.sse)
    rest = load_lines(a.rest)
    quiet = a.quiet

    def pick(rows):
        """median over runs; a run disturbed by other processes is left out when a clean one exists."""
        clean = [r for r in rows if r.get("foreign_cpu_pct", 0) < quiet]
        return (clean or rows), (len(rows) - len(clean) if clean else 0), (not clean and bool(rows))

    def agg(rows, key):
        return median([r.get(key) for r in rows])

    ns = sorted({r["conc"] for r in wire if r["kind"] in ("wire_idle", "wire_fanout")} |
                {r["conc"] for r in sse if r.get("kind") == "sse"})
    rates = sorted({r["write_rate"] for r in wire if r["kind"] == "wire_fanout"} |
                   {r["write_rate"] for r in sse if r.get("kind") == "sse"})
    has_pb = any(r.get("target") == "pocketbase" for r in sse)
    notes = []
    lines = []
    hdr = ["figure", "Hearth wire protocol", "Hearth SSE (REST for writes)"] + (["PocketBase realtime"] if has_pb else []) + ["target", "verdict"]
    lines.append("| " + " | ".join(hdr) + " |")
    lines.append("|" + "---|" * len(hdr))

    def row(cells):
        lines.append("| " + " | ".join(cells) + " |")

    def flag(rows, disturbed_all):
        return " (disturbed)" if disturbed_all else ""

    verdicts = []
    for n in ns:
        idle = [r for r in wire if r["kind"] == "wire_idle" and r["conc"] == n and r.get("stage", "listen") == "listen"]
        idle_k, _, idle_d = pick(idle)
        one = [r for r in wire if r["kind"] == "wire_fanout" and r["conc"] == n]
        one_k, _, one_d = pick(one)
        h = [r for r in sse if r.get("kind") == "sse" and r["conc"] == n and r["target"] == "hearth"]
        hk, _, hd = pick(h)
        p = [r for r in sse if r.get("kind") == "sse" and r["conc"] == n and r["target"] == "pocketbase"]
        pk, _, pd = pick(p)
        kib_own = agg(idle_k, "rss_per_conn_kib")
        v = "–"
        if kib_own is not None:
            v = "**met**" if kib_own <= 4.0 else "**missed**"
            verdicts.append("KiB per idle connection at %s: %s (%.2f KiB)" % (f(n, 0), v.strip("*"), kib_own))
        ready = "%s/%s" % (sum(r.get("subscribers_ready", 0) for r in idle_k), sum(r.get("conc", 0) for r in idle_k)) if idle_k else "–"
        row(["N=%s: KiB per idle connection, each on its own path (ready)" % f(n, 0),
             "**%s**%s (%s)" % (f(kib_own), flag(idle, idle_d), ready), "–"] + (["–"] if has_pb else []) + ["≤ 4 KiB", v])
        written = [r for r in idle_k if r.get("write_rate")]
        if written:
            # Writes to ONE idle connection's path (hearth-load, IDLE_RATE)
            p99 = agg(written, "lat_send_p99_ms")
            v = "–" if p99 is None else ("**met**" if p99 <= 50.0 else "**missed**")
            if p99 is not None:
                verdicts.append("p99 to one of %s idle connections: %s (%.1f ms)" % (f(n, 0), v.strip("*"), p99))
            row(["N=%s idle, %g writes/s to one connection's path: send→recv p50 / p99 ms; delivered; server / client CPU %%"
                 % (f(n, 0), written[0]["write_rate"]),
                 "%s / **%s**; %s %%; %s / %s" % (f(agg(written, "lat_send_p50_ms")), f(p99),
                                                 f(100.0 * (agg(written, "delivery_ratio") or 0), 1),
                                                 f(agg(written, "server_cpu_pct"), 0), f(agg(written, "client_cpu_pct"), 0)),
                 "–"] + (["–"] if has_pb else []) + ["p99 ≤ 50 ms", v])
        stages = []
        for st in ("handshake", "auth"):
            sk, _, sd = pick([r for r in wire if r["kind"] == "wire_idle" and r["conc"] == n and r.get("stage") == st])
            stages.append(f(agg(sk, "rss_per_conn_kib")) + (" (disturbed)" if sd else ""))
        if any(x != "–" for x in stages):
            row(["N=%s: KiB per idle connection by stage: after the handshake / + auth / + q (own path)" % f(n, 0),
                 "%s / %s / %s" % (stages[0], stages[1], f(kib_own)), "–"] + (["–"] if has_pb else []) + ["(context)", ""])
        row(["N=%s: KiB per idle connection / stream, all on one location" % f(n, 0),
             f(agg(one_k, "rss_per_conn_kib")) + flag(one, one_d), f(agg(hk, "rss_per_conn_kib")) + flag(h, hd)]
            + ([f(agg(pk, "rss_per_conn_kib")) + flag(p, pd)] if has_pb else []) + ["(context)", ""])
        for rate in rates:
            wr = [r for r in one if r["write_rate"] == rate]
            wk, _, wd = pick(wr)
            hr = [r for r in h if r["write_rate"] == rate]
            hrk, _, hrd = pick(hr)
            pr = [r for r in p if r["write_rate"] == rate]
            prk, _, prd = pick(pr)

            def lat(rows, dist, key="lat_send"):
                if not rows:
                    return "–"
                return "%s / **%s**%s" % (f(agg(rows, key + "_p50_ms")), f(agg(rows, key + "_p99_ms")), " (disturbed)" if dist else "")

            def deliv(rows):
                if not rows:
                    return "–"
                d = agg(rows, "delivery_ratio")
                return "%s %%" % f(100.0 * d, 1) if d is not None else "–"
            w99, h99 = agg(wk, "lat_send_p99_ms"), agg(hrk, "lat_send_p99_ms")
            target, v = "(context)", ""
            if n == 1000:
                target = "p99 ≤ SSE's"
                if w99 is not None and h99 is not None:
                    if w99 <= h99:
                        v = "**met**"
                    elif w99 <= h99 * 1.05:
                        v = "**met** (within 5 % noise)"
                    else:
                        v = "**missed** (%.2f×)" % (w99 / h99)
                    verdicts.append("p99 at 1,000, %g writes/s: %s (wire %.1f ms, SSE %.1f ms)" % (rate, v.replace("*", ""), w99, h99))
            row(["N=%s, %g writes/s: send→recv p50 / p99 ms" % (f(n, 0), rate), lat(wk, wd), lat(hrk, hrd)]
                + ([lat(prk, prd)] if has_pb else []) + [target, v])
            row(["N=%s, %g writes/s: ack→recv p50 / p99 ms; last of N p99 ms" % (f(n, 0), rate),
                 "%s; %s" % (lat(wk, False, "lat_ack"), f(agg(wk, "fanout_all_p99_ms"))),
                 "%s; %s" % (lat(hrk, False, "lat_ack"), f(agg(hrk, "fanout_all_p99_ms")))]
                + (["%s; %s" % (lat(prk, False, "lat_ack"), f(agg(prk, "fanout_all_p99_ms")))] if has_pb else []) + ["(context)", ""])
            row(["N=%s, %g writes/s: delivered; writes/s done; server / client / other CPU %%" % (f(n, 0), rate)]
                + ["%s; %s; %s / %s / %s" % (deliv(k), f(agg(k, "write_rate_achieved")), f(agg(k, "server_cpu_pct"), 0),
                                             f(agg(k, "client_cpu_pct"), 0), f(agg(k, "foreign_cpu_pct"), 0)) if k else "–"
                   for k in ([wk, hrk] + ([prk] if has_pb else []))] + ["(context)", ""])
            # Server CPU seconds over delivered pushes: what one push costs the server,
            # kernel sends included (on loopback the kernel's delivery to the receiving
            # socket runs in the sender's system call too).
            row(["N=%s, %g writes/s: server CPU per delivered push, µs" % (f(n, 0), rate)]
                + [f(statistics.median(us)) if (us := per_push_us(k)) else "–" for k in ([wk, hrk] + ([prk] if has_pb else []))]
                + ["(context)", ""])
    ww = [r for r in wire if r["kind"] == "wire_writes"]
    wwk, _, wwd = pick(ww)
    rc = [r for r in rest if r.get("kind") == "http" and r.get("scenario") == "create"]
    rck, _, rcd = pick(rc)
    wps, rps = agg(wwk, "wps"), agg(rck, "rps")
    v = "–"
    if wps is not None and rps is not None:
        v = "**met** (%.2f×)" % (wps / rps) if wps >= rps else "**missed** (%.2f×)" % (wps / rps)
        verdicts.append("acknowledged p writes/s over %d connections vs REST creates/s: %s (%.0f vs %.0f)" % (
            wwk[0]["conc"], v.replace("*", ""), wps, rps))
    rng = lambda rows, key: "" if len(rows) < 2 else " (%s–%s)" % (f(min(r[key] for r in rows)), f(max(r[key] for r in rows)))  # noqa
    row(["writes/s over %s connections: wire `p` closed loop vs REST create (wrk)" % (wwk[0]["conc"] if wwk else "64"),
         "**%s**%s%s" % (f(wps), rng(wwk, "wps"), flag(ww, wwd)), "**%s**%s%s (REST POST)" % (f(rps), rng(rck, "rps"), flag(rc, rcd))]
        + (["–"] if has_pb else []) + ["wire ≥ REST create", v])
    row(["write ack p50 / p99 ms; server / load generator / other CPU %",
         "%s / %s; %s / %s / %s" % (f(agg(wwk, "p50_ms")), f(agg(wwk, "p99_ms")), f(agg(wwk, "server_cpu_pct"), 0),
                                    f(agg(wwk, "client_cpu_pct"), 0), f(agg(wwk, "foreign_cpu_pct"), 0)),
         "%s / %s; %s / %s / %s" % (f(agg(rck, "p50_ms")), f(agg(rck, "p99_ms")), f(agg(rck, "server_cpu_pct"), 0),
                                    f(agg(rck, "wrk_cpu_pct"), 0), f(agg(rck, "foreign_cpu_pct"), 0))]
        + (["–"] if has_pb else []) + ["(context)", ""])
    rp = [r for r in wire if r["kind"] == "rest_py_writes"]
    rpk, _, rpd = pick(rp)
    pps = agg(rpk, "wps")
    if rpk:
        v2 = "–"
        if wps is not None and pps is not None:
            v2 = "**met** (%.2f×)" % (wps / pps) if wps >= pps else "**missed** (%.2f×)" % (wps / pps)
            verdicts.append("the same against REST POST by the same Python client: %s (%.0f vs %.0f)" % (
                v2.replace("*", ""), wps, pps))
        row(["writes/s over %s connections, one load generator for both: wire `p` vs REST POST, each from the "
             "same Python asyncio client (closed loop)" % rpk[0]["conc"],
             "**%s**%s%s" % (f(wps), rng(wwk, "wps"), flag(ww, wwd)), "**%s**%s%s (REST POST, Python)" % (f(pps), rng(rpk, "wps"), flag(rp, rpd))]
            + (["–"] if has_pb else []) + ["wire ≥ REST create", v2])
        row(["the same: ack p50 / p99 ms; server / load generator / other CPU %",
             "%s / %s; %s / %s / %s" % (f(agg(wwk, "p50_ms")), f(agg(wwk, "p99_ms")), f(agg(wwk, "server_cpu_pct"), 0),
                                        f(agg(wwk, "client_cpu_pct"), 0), f(agg(wwk, "foreign_cpu_pct"), 0)),
             "%s / %s; %s / %s / %s" % (f(agg(rpk, "p50_ms")), f(agg(rpk, "p99_ms")), f(agg(rpk, "server_cpu_pct"), 0),
                                        f(agg(rpk, "client_cpu_pct"), 0), f(agg(rpk, "foreign_cpu_pct"), 0))]
            + (["–"] if has_pb else []) + ["(context)", ""])
    mx = [r for r in wire if r["kind"] == "mixed_writes"]
    mxk, _, mxd = pick(mx)
    if mxk:
        ratios = [r["wire_wps"] / r["rest_wps"] for r in mxk if r.get("rest_wps")]
        mr = median(ratios)
        v3 = "–" if mr is None else ("**met** (%.2f×)" % mr if mr >= 1 else "**missed** (%.2f×)" % mr)
        if mr is not None:
            verdicts.append("side by side in one run (%d wire + %d REST connections, same Python client): %s (%.0f vs %.0f)" % (
                mxk[0]["wire_conns"], mxk[0]["rest_conns"], v3.replace("*", ""), agg(mxk, "wire_wps"), agg(mxk, "rest_wps")))
        row(["writes/s side by side at the same moments: %d wire + %d REST POST connections on one server, one Python "
             "client (ratio per run: %s)" % (mxk[0]["wire_conns"], mxk[0]["rest_conns"], ", ".join("%.2f" % x for x in ratios)),
             "**%s**%s%s" % (f(agg(mxk, "wire_wps")), rng(mxk, "wire_wps"), flag(mx, mxd)),
             "**%s**%s%s (REST POST, Python)" % (f(agg(mxk, "rest_wps")), rng(mxk, "rest_wps"), flag(mx, mxd))]
            + (["–"] if has_pb else []) + ["wire ≥ REST", v3])
    bad = [r for r in ww + rp + mx if r.get("not_ok")]
    if bad:
        notes.append("wire writes answered other than ok: %s" % "; ".join(json.dumps(r["not_ok"]) for r in bad))
    bad = [r for r in rc if r.get("non2xx") or r.get("errors")]
    if bad:
        notes.append("REST create runs with non-2xx or errors: %s" % "; ".join("%d/%d" % (r["non2xx"], r["errors"]) for r in bad))
    for r in wire:
        if r["kind"] in ("wire_idle", "wire_fanout") and (r.get("subscribers_failed") or r.get("lost_streams")):
            notes.append("wire N=%d rate %g: %d failed, %d lost (%s)" % (r["conc"], r.get("write_rate", 0), r["subscribers_failed"],
                                                                      r["lost_streams"], r.get("fail_samples")))
    clients = sorted({r.get("client", "python") for r in wire + sse if r.get("kind") in ("wire_idle", "wire_fanout", "sse")})
    if clients:
        notes.append("load generator of the memory and fan-out rows: %s (client CPU = its receiving threads / subscriber "
                     "processes; the writer is counted in loadgen_cpu_pct)" % ", ".join(
                         "hearth-load (compiled)" if c == "hearth-load" else "Python asyncio" for c in clients))
    print("\n".join(lines))
    print()
    print("Cells: one value per run, median over runs when there are several (a run with ≥ %g %% CPU used by other "
          "processes is left out when a clean one exists, otherwise kept and marked disturbed). p50 / **p99** in ms." % quiet)
    for note in notes:
        print("\nNote: " + note)
    if verdicts:
        print()
        print("Targets: " + "; ".join(verdicts) + ".")


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
        p.add_argument("--quiet-wait", type=float, default=float(os.environ.get("BENCH_QUIET_WAIT", 300)))
        p.add_argument("--target", required=True, help="Hearth target config (retargeted, auth headers)")
        p.add_argument("--fixtures", required=True)
        p.add_argument("--out")
        p.add_argument("--ns", default="bench")
        p.add_argument("--server-pid", type=int)
        p.add_argument("--run", type=int, default=1)

    p = sp.add_parser("fanout")
    common(p)
    p.add_argument("--subscribers", type=int, required=True)
    p.add_argument("--path", required=True, help="listen path; ${uid} = the SSE user, ${i} = per connection")
    p.add_argument("--paths", default="one", help="label: one (all on one location) or own")
    p.add_argument("--label", default="hearth-wire")
    p.add_argument("--stage", default="listen", choices=("handshake", "auth", "listen"),
                   help="live after the handshake, after the auth's ok, or after the q's ok (the default)")
    p.add_argument("--rate", type=float, default=0.0)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--open-conc", type=int, default=200)
    p.add_argument("--ready-timeout", type=float, default=120.0)
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--drain", type=float, default=120.0)
    p.add_argument("--stall", type=float, default=5.0)
    p.add_argument("--writer-conns", type=int, default=16)
    p.add_argument("--write-timeout", type=float, default=120.0)
    p.set_defaults(fn=cmd_fanout)

    p = sp.add_parser("writes")
    common(p)
    p.add_argument("--conns", type=int, default=64)
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--warmup", type=float, default=3.0)
    p.add_argument("--label", default="hearth-wire")
    p.add_argument("--transport", default="wire", choices=("wire", "rest", "mixed"),
                   help="wire: p over the wire protocol; rest: POST over HTTP/1.1 by the same client")
    p.set_defaults(fn=cmd_writes)

    p = sp.add_parser("report")
    p.add_argument("--wire", nargs="*", default=[])
    p.add_argument("--sse", nargs="*", default=[])
    p.add_argument("--rest", nargs="*", default=[])
    p.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
    p.set_defaults(fn=cmd_report)

    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()

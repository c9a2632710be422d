#!/usr/bin/env python3
# Copied from the team's load harness, unchanged except
# that paths in comments and help texts now say scripts/bench/ instead of bench/, and one
# fix in SubscriberWorker._open_one (the kit still has the bug): a subscriber's "ready"
# waiter is registered before the connection exists, not after create_connection returns.
# A server that answers the stream request with its first event within microseconds
# (Hearth's snapshot `put`) made the stream ready before the waiter existed; the waiter
# then never fired, the open phase waited the full --ready-timeout (120 s) and counted a
# "ready timeout" failure for a stream that was in fact live. PocketBase needs a second
# round trip (the subscribe POST) and never hit it. Second addition: every wrk and sse
# result records the 1-minute load average read as its measurement starts (load_before).
# Third: SSEConn tells its owner when a stream's 200 head arrived, if the owner has an
# on_head method (soak.py times a reconnecting stream's absence with it).
# Hearth runs it from scripts/bench/ (http_baseline.sh, compare.sh, run_pocketbase.sh,
# streams.sh).
"""Peer-neutral load harness for per-user favorites backends (stdlib only).

Scenarios take URLs, headers and bodies from a per-target config
(scripts/bench/targets/<name>.json) plus a fixtures file written by that target's
setup script (users, tokens, record ids).  Nothing in here knows which
server it is talking to, except the two SSE handshake adapters selected by
the config's sse.protocol ("pocketbase", "firebase-rest"; see
SubscriberWorker.on_event).

Subcommands
  plan     render a request pool for wrk (scripts/bench/wrk/replay.lua replays it)
  wrk      run wrk for one HTTP scenario at several concurrencies, N runs
  sse      SSE fan-out: N subscribers for one user + a fixed-rate writer
  startup  start the server N times: time to first successful request + RSS
  rss      print the RSS (KiB) of a pid
  report   aggregate results.jsonl into a markdown table (median, min-max)

All traffic goes to the config's base_url, which must be a loopback address.
Every loop is bounded in count and time.
"""
import argparse
import array
import asyncio
import json
import multiprocessing as mp
import os
import random
import re
import resource
import signal
import socket
import statistics
import string
import subprocess
import sys
import time
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "wrk", "replay.lua")

# ---------------------------------------------------------------- config


def load_json(path):
    with open(path) as f:
        return json.load(f)


def target_addr(cfg):
    u = urlsplit(cfg["base_url"])
    host, port = u.hostname, u.port or 80
    if not (host == "localhost" or host.startswith("127.") or host == "::1"):
        sys.exit("refusing non-loopback target %r" % host)
    return host, port


_VAR = re.compile(r"\$\{(\w+)\}")


def render(tmpl, env):
    def rep(m):
        k = m.group(1)
        if k not in env:
            raise KeyError("template variable ${%s} not provided" % k)
        return str(env[k])
    return _VAR.sub(rep, tmpl)


def spec_users(spec, fx):
    key = spec.get("users")
    if not key:
        return [{}]
    users = fx.get(key)
    if not users:
        sys.exit("fixtures have no users under %r" % key)
    return users if isinstance(users, list) else [users]


def build_raw(cfg, spec, user, extra, raw_body=None):
    """Render one request spec into raw HTTP/1.1 bytes (raw_body: untemplated)."""
    host, port = target_addr(cfg)
    env = {"host": "%s:%d" % (host, port), "now_ms": int(time.time() * 1000)}
    env.update({k: v for k, v in user.items() if isinstance(v, (str, int, float))})
    env.update(extra)
    method = spec.get("method", "GET")
    path = render(spec["path"], env)
    headers = {}
    if spec.get("auth", True) and user:
        headers.update(cfg.get("auth_headers", {}))
    headers.update(spec.get("headers", {}))
    body = b""
    if raw_body is not None:
        body = raw_body
        headers.setdefault("Content-Type", "application/json")
    elif "body" in spec:
        b = spec["body"]
        body = render(b if isinstance(b, str) else json.dumps(b), env).encode()
        headers.setdefault("Content-Type", "application/json")
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: " + env["host"]]
    for k, v in headers.items():
        lines.append("%s: %s" % (k, render(v, env)))
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def make_plan(cfg, fx, scenario, size=4096):
    spec = cfg["scenarios"][scenario]
    users = spec_users(spec, fx)
    reqs = []
    for i in range(size):
        u = users[i % len(users)]
        extra = {"seq": i, "rand": "".join(random.choices(string.ascii_lowercase, k=6))}
        if "${id}" in json.dumps(spec):
            ids = u.get("ids") or []
            if not ids:
                sys.exit("scenario %s needs record ids in fixtures" % scenario)
            extra["id"] = ids[(i // len(users)) % len(ids)]
        reqs.append(build_raw(cfg, spec, u, extra))
    return reqs


def write_plan(reqs, path):
    with open(path, "wb") as f:
        for r in reqs:
            f.write(b"%d\n" % len(r))
            f.write(r)


# ---------------------------------------------------------------- proc stats


def _stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def proc_tree(pid):
    """pid plus all its descendants (nginx master + workers, etc.)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                kids.setdefault(int(_stat(int(d))[1]), []).append(int(d))
            except (OSError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def proc_rss_kib(pid):
    """RSS of pid and its descendants, KiB (None if pid is gone)."""
    total, seen = 0, False
    for p in proc_tree(pid):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        seen = True
        except OSError:
            pass
    return total if seen else None


def proc_cpu_s(pid):
    """user+system CPU seconds of pid and its descendants (None if pid is gone)."""
    total, seen = 0, False
    for p in proc_tree(pid):
        try:
            parts = _stat(p)
            total += int(parts[11]) + int(parts[12])
            seen = True
        except (OSError, IndexError):
            pass
    return total / os.sysconf("SC_CLK_TCK") if seen else None


def sys_busy_s():
    """Machine-wide non-idle CPU seconds (all cores) from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def self_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class CpuMeter:
    """Splits machine CPU during a measurement into server / load generator /
    'foreign' (anything else on the machine: another benchmark, a build...)."""

    def __init__(self, server_pid):
        self.pid = server_pid
        self.t0 = time.monotonic()
        self.b0, self.c0, self.s0 = sys_busy_s(), children_cpu_s(), self_cpu_s()
        self.p0 = proc_cpu_s(server_pid) if server_pid else None
        self.load = load_1min()

    def stop(self):
        wall = max(1e-6, time.monotonic() - self.t0)
        busy = sys_busy_s() - self.b0
        gen = children_cpu_s() - self.c0 + self_cpu_s() - self.s0
        srv = (proc_cpu_s(self.pid) - self.p0) if self.p0 is not None else 0.0
        out = {"loadgen_cpu_pct": round(100 * gen / wall, 1),
               "foreign_cpu_pct": round(max(0.0, 100 * (busy - gen - srv) / wall), 1),
               "machine_cpu_pct": round(100 * busy / wall, 1), "load_before": self.load}
        if self.p0 is not None:
            out["server_cpu_pct"] = round(100 * srv / wall, 1)
        return out


def wait_quiet(threshold_pct, max_wait_s, exclude_pid=None):
    """Wait (bounded) until the machine is idle apart from exclude_pid; returns
    the last measured foreign CPU %."""
    end = time.monotonic() + max_wait_s
    while True:
        m = CpuMeter(exclude_pid)
        time.sleep(1.0)
        r = m.stop()
        if r["foreign_cpu_pct"] < threshold_pct or time.monotonic() > end:
            if r["foreign_cpu_pct"] >= threshold_pct:
                print("warning: machine still busy (%.0f%% foreign CPU) after %ds" % (r["foreign_cpu_pct"], max_wait_s),
                      file=sys.stderr, flush=True)
            return r["foreign_cpu_pct"]
        print("waiting for a quiet machine: %.0f%% CPU used by other processes" % r["foreign_cpu_pct"],
              file=sys.stderr, flush=True)
        time.sleep(4.0)


def load_1min():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def append_result(path, rec):
    rec.setdefault("date", time.strftime("%Y-%m-%d %H:%M:%S"))
    line = json.dumps(rec, sort_keys=True)
    print(line, flush=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


# ---------------------------------------------------------------- wrk


def run_wrk_once(url, plan, conns, threads, duration, timeout_s, server_pid):
    cmd = ["wrk", "-t%d" % threads, "-c%d" % conns, "-d%ds" % duration,
           "--timeout", "%ds" % timeout_s, "-s", LUA, url, "--", plan]
    meter = CpuMeter(server_pid)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    cpu = meter.stop()
    m = re.search(r"^WRKJSON (\{.*\})$", out.stdout, re.M)
    if not m:
        raise RuntimeError("wrk output not understood:\n" + out.stdout + out.stderr)
    d = json.loads(m.group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    secs = d["duration_us"] / 1e6
    res = {
        "rps": round(d["requests"] / secs, 1),
        "requests": d["requests"],
        "p50_ms": d["lat_p50_us"] / 1000.0,
        "p90_ms": d["lat_p90_us"] / 1000.0,
        "p99_ms": d["lat_p99_us"] / 1000.0,
        "max_ms": d["lat_max_us"] / 1000.0,
        "errors": d["errors_connect"] + d["errors_read"] + d["errors_write"] + d["errors_timeout"],
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
    }
    res.update(cpu)
    res["wrk_cpu_pct"] = res.pop("loadgen_cpu_pct")
    return res


def cmd_wrk(a):
    cfg, fx = load_json(a.target), (load_json(a.fixtures) if a.fixtures else {})
    host, port = target_addr(cfg)
    url = "http://%s:%d/" % (host, port)
    os.makedirs(a.workdir, exist_ok=True)
    for scen in a.scenario.split(","):
        plan = os.path.join(a.workdir, "plan-%s-%s.bin" % (cfg["name"], scen))
        write_plan(make_plan(cfg, fx, scen, a.pool), plan)
        for c in [int(x) for x in a.conns.split(",")]:
            t = min(a.threads, c)
            if a.warmup > 0:
                run_wrk_once(url, plan, c, t, a.warmup, a.timeout, None)
            for r in range(1, a.runs + 1):
                for attempt in range(a.retries + 1):
                    wait_quiet(a.quiet, a.quiet_wait, a.server_pid)
                    res = run_wrk_once(url, plan, c, t, a.duration, a.timeout, a.server_pid)
                    if res["foreign_cpu_pct"] < a.quiet:
                        break
                    print("run disturbed by %.0f%% foreign CPU; %s" % (
                        res["foreign_cpu_pct"], "retrying" if attempt < a.retries else "keeping it (flagged)"),
                        file=sys.stderr, flush=True)
                res.update({"kind": "http", "target": a.label or cfg["name"], "scenario": scen, "attempts": attempt + 1,
                            "conc": c, "threads": t, "run": r, "duration_s": a.duration})
                if a.server_pid:
                    res["server_rss_kib"] = proc_rss_kib(a.server_pid)
                append_result(a.out, res)
                if a.pause:
                    time.sleep(a.pause)


def cmd_plan(a):
    cfg, fx = load_json(a.target), (load_json(a.fixtures) if a.fixtures else {})
    reqs = make_plan(cfg, fx, a.scenario, a.pool)
    write_plan(reqs, a.output)
    print("wrote %d requests to %s; first one:\n%s" % (len(reqs), a.output, reqs[0].decode(errors="replace")))


# ---------------------------------------------------------------- tiny async HTTP client


class HttpConn:
    """One keep-alive HTTP/1.1 connection (asyncio streams)."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.r = self.w = None

    async def request(self, raw, timeout=30.0):
        if self.w is None:
            self.r, self.w = await asyncio.open_connection(self.host, self.port)
        self.w.write(raw)
        return await asyncio.wait_for(self._read_response(), timeout)

    async def _read_response(self):
        head = await self.r.readuntil(b"\r\n\r\n")
        lines = head.decode("latin1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        hdrs = {}
        for ln in lines[1:]:
            if ":" in ln:
                k, v = ln.split(":", 1)
                hdrs[k.strip().lower()] = v.strip()
        if "content-length" in hdrs:
            body = await self.r.readexactly(int(hdrs["content-length"]))
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                sz = int((await self.r.readuntil(b"\r\n")).split(b";")[0], 16)
                if sz == 0:
                    await self.r.readuntil(b"\r\n")
                    break
                parts.append(await self.r.readexactly(sz))
                await self.r.readexactly(2)
            body = b"".join(parts)
        elif status in (204, 304) or status < 200:
            body = b""
        else:
            body = await self.r.read()
            self.close()
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        return status, hdrs, body

    def close(self):
        if self.w is not None:
            self.w.close()
        self.r = self.w = None


class HttpPool:
    def __init__(self, host, port, size):
        self.q = asyncio.Queue()
        for _ in range(size):
            self.q.put_nowait(HttpConn(host, port))

    async def request(self, raw, timeout=30.0):
        c = await self.q.get()
        try:
            return await c.request(raw, timeout)
        except Exception:
            c.close()
            raise
        finally:
            self.q.put_nowait(c)


# ---------------------------------------------------------------- SSE subscribers


class SSEConn(asyncio.Protocol):
    """One SSE subscriber; incremental HTTP head + chunked + event parsing."""

    def __init__(self, w, user):
        self.w, self.user = w, user
        self.tr = None
        self.head = b""
        self.in_body = False
        self.chunked = False
        self.cbuf = b""
        self.crem = 0
        self.cskip = 0
        self.buf = b""
        self.ready = False
        self.dead = False

    def connection_made(self, tr):
        self.tr = tr
        tr.write(self.w.connect_raw(self.user))

    def connection_lost(self, exc):
        self.dead = True
        self.w.on_lost(self)

    def _dechunk(self, data):
        self.cbuf += data
        out = []
        while self.cbuf:
            if self.crem:
                take = self.cbuf[:self.crem]
                out.append(take)
                self.crem -= len(take)
                self.cbuf = self.cbuf[len(take):]
                if self.crem:
                    break
                self.cskip = 2
            if self.cskip:
                n = min(self.cskip, len(self.cbuf))
                self.cbuf = self.cbuf[n:]
                self.cskip -= n
                if self.cskip:
                    break
            i = self.cbuf.find(b"\r\n")
            if i < 0:
                break
            size = int(self.cbuf[:i].split(b";")[0] or b"0", 16)
            self.cbuf = self.cbuf[i + 2:]
            if size == 0:
                break
            self.crem = size
        return b"".join(out)

    def data_received(self, data):
        now = time.monotonic()
        if not self.in_body:
            self.head += data
            i = self.head.find(b"\r\n\r\n")
            if i < 0:
                return
            head, data = self.head[:i].decode("latin1"), self.head[i + 4:]
            self.head = b""
            status = int(head.split(" ", 2)[1])
            if status != 200:
                self.w.on_fail(self, "stream status %d" % status)
                self.tr.close()
                return
            self.chunked = "transfer-encoding: chunked" in head.lower()
            self.in_body = True
            on_head = getattr(self.w, "on_head", None)
            if on_head is not None:
                on_head(self, now)
            if not data:
                return
        if self.chunked:
            data = self._dechunk(data)
        buf = self.buf + data
        if b"\r" in buf:
            buf = buf.replace(b"\r\n", b"\n")
        if b"\n\n" not in buf:
            self.buf = buf
            return
        events = buf.split(b"\n\n")
        self.buf = events.pop()
        for ev in events:
            self.w.on_event(self, ev, now)


def parse_sse(ev):
    name, data = "message", []
    for line in ev.split(b"\n"):
        if line.startswith(b"event:"):
            name = line[6:].strip().decode()
        elif line.startswith(b"data:"):
            d = line[5:]
            data.append(d[1:] if d.startswith(b" ") else d)
    return name, b"\n".join(data)


class SubscriberWorker:
    def __init__(self, cfg, fx, n, prefix, ctl):
        self.cfg, self.fx, self.n, self.ctl = cfg, fx, n, ctl
        self.sse = cfg["sse"]
        self.host, self.port = target_addr(cfg)
        self.user = fx[self.sse.get("users", "sse_user")]
        if isinstance(self.user, list):
            self.user = self.user[0]
        self.prefix = prefix.encode()
        self.seqs = array.array("i")
        self.times = array.array("d")
        self.n_ready = 0
        self.n_failed = 0
        self.n_lost = 0
        self.other_events = 0
        self.fail_msgs = []
        self.conns = []
        self.ready_waiters = {}
        self.proto = self.sse["protocol"]

    def connect_raw(self, user):
        return build_raw(self.cfg, self.sse["connect"], user, {})

    def on_fail(self, conn, msg):
        self.n_failed += 1
        if len(self.fail_msgs) < 5:
            self.fail_msgs.append(msg)
        fut = self.ready_waiters.pop(conn, None)
        if fut and not fut.done():
            fut.set_result(False)

    def on_lost(self, conn):
        if conn.ready:
            self.n_lost += 1
        else:
            self.on_fail(conn, "closed before ready")

    def _set_ready(self, conn):
        conn.ready = True
        self.n_ready += 1
        fut = self.ready_waiters.pop(conn, None)
        if fut and not fut.done():
            fut.set_result(True)

    async def _pb_subscribe(self, conn, client_id):
        body = json.dumps({"clientId": client_id, "subscriptions": self.sse["topics"]}).encode()
        raw = build_raw(self.cfg, self.sse["subscribe"], self.user, {}, raw_body=body)
        try:
            st, _, b = await self.pool.request(raw)
        except Exception as e:  # noqa
            self.on_fail(conn, "subscribe error %r" % e)
            return
        if 200 <= st < 300:
            self._set_ready(conn)
        else:
            self.on_fail(conn, "subscribe status %d %s" % (st, b[:200]))

    def on_event(self, conn, ev, now):
        if conn.ready:
            i = ev.find(self.prefix)
            if i >= 0:
                j = k = i + len(self.prefix)
                while k < len(ev) and 48 <= ev[k] <= 57:
                    k += 1
                self.seqs.append(int(ev[j:k]))
                self.times.append(now)
            else:
                self.other_events += 1
            return
        name, data = parse_sse(ev)
        if self.proto == "pocketbase":
            if name == "PB_CONNECT":
                cid = json.loads(data)["clientId"]
                asyncio.ensure_future(self._pb_subscribe(conn, cid))
        elif self.proto == "firebase-rest":
            # first put/patch is the initial snapshot; after it we are live
            if name in ("put", "patch"):
                self._set_ready(conn)
            elif name in ("cancel", "auth_revoked"):
                self.on_fail(conn, "stream %s" % name)
        else:
            raise SystemExit("unknown sse protocol %r" % self.proto)

    async def _open_one(self, sem, timeout):
        async with sem:
            loop = asyncio.get_running_loop()
            fut = loop.create_future()
            made = []

            def factory():
                # register the waiter before any byte can arrive: the first event may be
                # processed before create_connection() returns to this coroutine
                conn = SSEConn(self, self.user)
                self.ready_waiters[conn] = fut
                made.append(conn)
                return conn
            try:
                tr, conn = await asyncio.wait_for(loop.create_connection(factory, self.host, self.port), timeout)
            except Exception as e:  # noqa
                live = [c for c in made if c.tr is not None and not c.dead]
                for c in live:
                    c.tr.close()  # connection_lost -> on_lost counts the failure
                for c in made:
                    if c not in live:
                        self.ready_waiters.pop(c, None)
                if not live:
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
        self.pool = HttpPool(self.host, self.port, 8)
        sem = asyncio.Semaphore(open_conc)
        t0 = time.monotonic()
        await asyncio.gather(*[self._open_one(sem, timeout) for _ in range(self.n)])
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


def _raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def subscriber_proc(cfg, fx, n, prefix, ctl, open_conc, timeout):
    _raise_nofile()
    asyncio.run(SubscriberWorker(cfg, fx, n, prefix, ctl).run(open_conc, timeout))


# ---------------------------------------------------------------- SSE writer


async def writer_main(cfg, fx, rate, count, prefix, nconns, timeout):
    sse = cfg["sse"]
    spec = sse["write"]
    user = fx[spec.get("users", "sse_user")]
    if isinstance(user, list):
        user = user[0]
    host, port = target_addr(cfg)
    pool = HttpPool(host, port, nconns)
    # warm the pool's connections without writing anything
    results = [None] * count
    t0 = time.monotonic() + 0.2

    async def one(seq):
        # open loop: latency counts from the *scheduled* send time, so a slow
        # server cannot hide queueing (no coordinated omission); the actual
        # send time (after a free connection was found) gives the achieved rate
        t_sched = t0 + seq / rate
        await asyncio.sleep(max(0.0, t_sched - time.monotonic()))
        raw = build_raw(cfg, spec, user, {"seq": seq, "marker": "%s%d." % (prefix, seq)})
        conn = await pool.q.get()
        t_sent = time.monotonic()
        try:
            st, _, _ = await conn.request(raw, timeout)
        except Exception:  # noqa
            conn.close()
            st = -1
        finally:
            pool.q.put_nowait(conn)
        results[seq] = (seq, t_sched, time.monotonic(), st, t_sent)

    await asyncio.gather(*[one(i) for i in range(count)])
    return results


def writer_proc(cfg, fx, rate, count, prefix, nconns, timeout, ctl):
    ctl.send(asyncio.run(writer_main(cfg, fx, rate, count, prefix, nconns, timeout)))


# ---------------------------------------------------------------- SSE driver


def sse_once(cfg, fx, n, a):
    prefix = "bm%s-" % "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
    ctx = mp.get_context("fork")
    procs = max(1, min(a.procs, n))
    rss0 = proc_rss_kib(a.server_pid) if a.server_pid else None
    workers = []
    for i in range(procs):
        share = n // procs + (1 if i < n % procs else 0)
        parent, child = ctx.Pipe()
        p = ctx.Process(target=subscriber_proc, args=(cfg, fx, share, prefix, child, a.open_conc, a.ready_timeout),
                        daemon=True)
        p.start()
        workers.append((p, parent))
    ready = failed = 0
    t_conn = 0.0
    msgs = []
    for p, c in workers:
        if not c.poll(a.ready_timeout + 60):
            raise RuntimeError("subscriber worker did not report")
        _, r, f, dt, fm = c.recv()
        ready += r
        failed += f
        t_conn = max(t_conn, dt)
        msgs += fm
    time.sleep(a.settle)
    rss_sub = proc_rss_kib(a.server_pid) if a.server_pid else None
    count = int(round(a.rate * a.duration))
    wcpu0 = 0.0
    for p, c in workers:
        c.send("mark")
        wcpu0 += c.recv()[1]
    load0 = load_1min()
    b0, c0, s0 = sys_busy_s(), children_cpu_s(), self_cpu_s()
    cpu0 = proc_cpu_s(a.server_pid) if a.server_pid else None
    wparent, wchild = ctx.Pipe()
    wp = ctx.Process(target=writer_proc, args=(cfg, fx, a.rate, count, prefix, a.writer_conns, a.write_timeout, wchild),
                     daemon=True)
    tw0 = time.monotonic()
    wp.start()
    rss_peak = rss_sub or 0
    writes = None
    deadline = tw0 + a.duration + a.write_timeout * (1 + count // max(1, a.writer_conns)) + 30
    while time.monotonic() < deadline:
        if wparent.poll(0.25):
            writes = wparent.recv()
            break
        if a.server_pid:
            rss_peak = max(rss_peak, proc_rss_kib(a.server_pid) or 0)
    wp.join(5)
    if writes is None:
        for p, _ in workers:
            p.terminate()
        wp.terminate()
        raise RuntimeError("writer did not finish")
    ok_writes = [w for w in writes if w and 200 <= w[3] < 300]
    sends = sorted(w[4] for w in writes if w)
    achieved = (len(sends) - 1) / (sends[-1] - sends[0]) if len(sends) > 1 and sends[-1] > sends[0] else None
    expected = ready * len(ok_writes)
    # drain: wait until all expected events arrived, or no progress for a while
    last, last_change = -1, time.monotonic()
    drain_end = time.monotonic() + a.drain
    while time.monotonic() < drain_end:
        tot = 0
        for p, c in workers:
            c.send("count")
            tot += c.recv()[1]
        if tot >= expected:
            break
        if tot != last:
            last, last_change = tot, time.monotonic()
        elif time.monotonic() - last_change > a.stall:
            break
        if a.server_pid:
            rss_peak = max(rss_peak, proc_rss_kib(a.server_pid) or 0)
        time.sleep(0.25)
    tw1 = time.monotonic()
    cpu1 = proc_cpu_s(a.server_pid) if a.server_pid else None
    b1, c1, s1 = sys_busy_s(), children_cpu_s(), self_cpu_s()
    seqs, times = array.array("i"), array.array("d")
    lost = other = 0
    client_cpu = 0.0
    for p, c in workers:
        c.send("stop")
        _, sb, tb, st = c.recv()
        s, t = array.array("i"), array.array("d")
        s.frombytes(sb)
        t.frombytes(tb)
        seqs.extend(s)
        times.extend(t)
        lost += st["lost"]
        other += st["other_events"]
        client_cpu += st["cpu_s"]
        p.join(10)
    wall = max(1e-6, tw1 - tw0)
    gen = (c1 - c0) + (s1 - s0) + (client_cpu - wcpu0)
    srv = (cpu1 - cpu0) if cpu0 is not None else 0.0
    foreign = max(0.0, 100.0 * ((b1 - b0) - gen - srv) / wall)
    send = {w[0]: w[1] for w in ok_writes}
    ack = {w[0]: w[2] for w in ok_writes}
    lat_send, lat_ack = [], []
    last_per_seq = {}
    for s, t in zip(seqs, times):
        if s in send:
            lat_send.append(t - send[s])
            lat_ack.append(t - ack[s])
            if t > last_per_seq.get(s, 0.0):
                last_per_seq[s] = t
    lat_send.sort()
    lat_ack.sort()
    fanout = sorted(last_per_seq[s] - send[s] for s in last_per_seq)
    ack_lat = sorted(w[2] - w[4] for w in ok_writes)
    first_send = min(send.values()) if send else tw0
    last_recv = max(times) if len(times) else tw1
    ms = lambda v: None if v is None else round(v * 1000.0, 2)  # noqa
    res = {
        "kind": "sse", "target": cfg["name"], "scenario": "sse_fanout", "conc": n,
        "subscribers_ready": ready, "subscribers_failed": failed, "connect_all_s": round(t_conn, 2),
        "write_rate": a.rate, "writes": len(writes), "writes_ok": len(ok_writes),
        "write_rate_achieved": round(achieved, 2) if achieved else None,
        "write_ack_p50_ms": ms(pct(ack_lat, 50)), "write_ack_p99_ms": ms(pct(ack_lat, 99)),
        "events_expected": expected, "events_delivered": len(lat_send),
        "delivery_ratio": round(len(lat_send) / expected, 4) if expected else None,
        "events_per_s": round(len(lat_send) / max(1e-6, last_recv - first_send), 1),
        "lat_send_p50_ms": ms(pct(lat_send, 50)), "lat_send_p99_ms": ms(pct(lat_send, 99)),
        "lat_send_max_ms": ms(lat_send[-1] if lat_send else None),
        "lat_ack_p50_ms": ms(pct(lat_ack, 50)), "lat_ack_p99_ms": ms(pct(lat_ack, 99)),
        "fanout_all_p50_ms": ms(pct(fanout, 50)), "fanout_all_p99_ms": ms(pct(fanout, 99)),
        "lost_streams": lost, "other_events": other, "subscriber_procs": procs,
        "client_cpu_pct": round(100.0 * (client_cpu - wcpu0) / wall, 1),
        "loadgen_cpu_pct": round(100.0 * gen / wall, 1), "foreign_cpu_pct": round(foreign, 1),
        "machine_cpu_pct": round(100.0 * (b1 - b0) / wall, 1), "window_s": round(wall, 2), "load_before": load0,
        "fail_samples": msgs[:3],
    }
    if a.server_pid:
        res.update({
            "rss_before_kib": rss0, "rss_subscribed_kib": rss_sub, "rss_peak_kib": rss_peak,
            "rss_per_conn_kib": round((rss_sub - rss0) / max(1, ready), 2) if rss0 and rss_sub else None,
            "server_cpu_pct": round(100.0 * srv / wall, 1) if cpu0 is not None else None,
        })
    return res


def cmd_sse(a):
    nofile = _raise_nofile()
    cfg, fx = load_json(a.target), load_json(a.fixtures)
    for n in [int(x) for x in a.subscribers.split(",")]:
        if n + 100 > nofile * max(1, a.procs):
            print("warning: RLIMIT_NOFILE %d may be too low for %d subscribers" % (nofile, n), file=sys.stderr)
        for r in range(1, a.runs + 1):
            for attempt in range(a.retries + 1):
                wait_quiet(a.quiet, a.quiet_wait, a.server_pid)
                res = sse_once(cfg, fx, n, a)
                if res["foreign_cpu_pct"] < a.quiet:
                    break
                print("run disturbed by %.0f%% foreign CPU; %s" % (
                    res["foreign_cpu_pct"], "retrying" if attempt < a.retries else "keeping it (flagged)"),
                    file=sys.stderr, flush=True)
                time.sleep(a.pause)
            res["run"] = r
            res["attempts"] = attempt + 1
            append_result(a.out, res)
            time.sleep(a.pause)


# ---------------------------------------------------------------- startup / idle memory


def probe_once(host, port, raw, timeout=1.0):
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(raw)
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    return None
                data += chunk
            return int(data.split(b" ", 2)[1])
    except (OSError, ValueError, IndexError):
        return None


def cmd_startup(a):
    cfg, fx = load_json(a.target), (load_json(a.fixtures) if a.fixtures else {})
    host, port = target_addr(cfg)
    spec = cfg["scenarios"][a.probe]
    user = spec_users(spec, fx)[0]
    extra = {"seq": 0, "rand": "x"}
    if user.get("ids"):
        extra["id"] = user["ids"][0]
    raw = build_raw(cfg, spec, user, extra)
    raw = raw.replace(b"HTTP/1.1\r\n", b"HTTP/1.1\r\nConnection: close\r\n", 1)
    if probe_once(host, port, raw, 0.2) is not None:
        sys.exit("something already answers on %s:%d; stop it first" % (host, port))
    for r in range(1, a.runs + 1):
        log = open(a.log, "ab") if a.log else subprocess.DEVNULL
        foreign = wait_quiet(a.quiet, a.quiet_wait)
        t0 = time.monotonic()
        p = subprocess.Popen(a.cmd, shell=True, stdout=log, stderr=log, start_new_session=True)
        ok_at, status = None, None
        while time.monotonic() - t0 < a.timeout:
            status = probe_once(host, port, raw)
            if status is not None and 200 <= status < 300:
                ok_at = time.monotonic() - t0
                break
            time.sleep(0.002)
        rss_first = proc_rss_kib(p.pid)
        time.sleep(a.idle)
        rss_idle = proc_rss_kib(p.pid)
        os.killpg(p.pid, signal.SIGTERM)  # the group we created (start_new_session)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)
        append_result(a.out, {"kind": "startup", "target": cfg["name"], "scenario": "startup",
                              "conc": 0, "run": r, "startup_ms": round(ok_at * 1000, 1) if ok_at else None,
                              "probe_status": status, "rss_first_kib": rss_first, "rss_idle_kib": rss_idle,
                              "foreign_cpu_pct_before": foreign})
        time.sleep(a.pause)


def cmd_rss(a):
    print(proc_rss_kib(a.pid))


# ---------------------------------------------------------------- report

REPORT_COLS = {
    "http": [("rps", "req/s"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"),
             ("server_cpu_pct", "server CPU %"), ("wrk_cpu_pct", "wrk CPU %"), ("foreign_cpu_pct", "other CPU %"),
             ("errors", "errors"), ("non2xx", "non-2xx")],
    "sse": [("subscribers_ready", "ready"), ("write_rate_achieved", "writes/s done"),
            ("events_per_s", "events/s"), ("delivery_ratio", "delivered"),
            ("lat_send_p50_ms", "send→recv p50 ms"), ("lat_send_p99_ms", "send→recv p99 ms"),
            ("lat_ack_p50_ms", "ack→recv p50 ms"), ("lat_ack_p99_ms", "ack→recv p99 ms"),
            ("fanout_all_p99_ms", "all-N p99 ms"), ("write_ack_p50_ms", "write ack p50 ms"),
            ("rss_subscribed_kib", "RSS MiB @N"), ("rss_per_conn_kib", "KiB/conn"),
            ("server_cpu_pct", "server CPU %"), ("client_cpu_pct", "client CPU %"), ("foreign_cpu_pct", "other CPU %")],
    "startup": [("startup_ms", "start→first OK ms"), ("rss_first_kib", "RSS MiB at first OK"), ("rss_idle_kib", "RSS MiB idle")],
}


def fmt(v):
    if v is None:
        return "–"
    if isinstance(v, float) and abs(v) >= 100:
        return "%.0f" % v
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 10 else "%.1f" % v
    return str(v)


def cell(vals, mib=False):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "–"
    if mib:
        vals = [v / 1024.0 for v in vals]
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt(med)
    return "%s (%s–%s)" % (fmt(med), fmt(min(vals)), fmt(max(vals)))


def cmd_report(a):
    rows = {}
    order = []
    for path in a.results:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                scen = r["scenario"]
                if r["kind"] == "sse":
                    scen = "%s @%g w/s" % (scen, r["write_rate"])
                key = (r["kind"], r["target"], scen, r.get("conc"))
                if key not in rows:
                    rows[key] = []
                    order.append(key)
                rows[key].append(r)
    for kind in ("http", "sse", "startup"):
        keys = [k for k in order if k[0] == kind]
        if not keys:
            continue
        cols = REPORT_COLS[kind]
        conc_name = {"http": "conns", "sse": "N subs", "startup": ""}[kind]
        hdr = ["target", "scenario", conc_name, "runs"] + [c[1] for c in cols]
        print("\n| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for k in keys:
            rs = rows[k]
            cells = [k[1], k[2], str(k[3] if k[3] else ""), str(len(rs))]
            for col, title in cols:
                cells.append(cell([r.get(col) for r in rs], mib="MiB" in title))
            print("| " + " | ".join(cells) + " |")
    print("\nCells: median (min–max) over runs.")


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)

    def common(p, fixtures_required=False):
        p.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)),
                       help="max %% CPU other processes may use before/while measuring")
        p.add_argument("--quiet-wait", type=float, default=float(os.environ.get("BENCH_QUIET_WAIT", 300)),
                       help="max seconds to wait for a quiet machine before each run")
        p.add_argument("--target", required=True, help="scripts/bench/targets/<name>.json")
        p.add_argument("--fixtures", required=fixtures_required, help="fixtures JSON written by the target's setup")
        p.add_argument("--out", help="append JSON result lines here")

    p = sp.add_parser("plan")
    common(p)
    p.add_argument("--scenario", required=True)
    p.add_argument("--pool", type=int, default=4096)
    p.add_argument("--output", required=True)
    p.set_defaults(fn=cmd_plan)

    p = sp.add_parser("wrk")
    common(p)
    p.add_argument("--scenario", required=True, help="comma list of scenario names from the target config")
    p.add_argument("--conns", default="64,256")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=int, default=10)
    p.add_argument("--pool", type=int, default=4096)
    p.add_argument("--pause", type=float, default=1.0)
    p.add_argument("--server-pid", type=int)
    p.add_argument("--retries", type=int, default=3, help="re-run a run disturbed by foreign CPU load")
    p.add_argument("--label", help="name to record instead of the target's name (e.g. a config variant)")
    p.add_argument("--workdir", default=os.environ.get("BENCH_WORK", "/tmp/bench-work"))
    p.set_defaults(fn=cmd_wrk)

    p = sp.add_parser("sse")
    common(p, True)
    p.add_argument("--subscribers", default="100,1000,10000")
    p.add_argument("--rate", type=float, default=5.0, help="writes per second")
    p.add_argument("--duration", type=float, default=10.0, help="seconds of writing")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--procs", type=int, default=1, help="subscriber processes")
    p.add_argument("--open-conc", type=int, default=200, help="concurrent connection attempts")
    p.add_argument("--ready-timeout", type=float, default=120.0)
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--drain", type=float, default=120.0, help="max seconds to wait for stragglers after the last write")
    p.add_argument("--stall", type=float, default=5.0)
    p.add_argument("--writer-conns", type=int, default=16, help="keep-alive connections the writer may use (open loop)")
    p.add_argument("--write-timeout", type=float, default=120.0)
    p.add_argument("--pause", type=float, default=2.0)
    p.add_argument("--server-pid", type=int)
    p.add_argument("--retries", type=int, default=2, help="re-run a run disturbed by foreign CPU load")
    p.set_defaults(fn=cmd_sse)

    p = sp.add_parser("startup")
    common(p)
    p.add_argument("--cmd", required=True, help="shell command that starts the server in the foreground")
    p.add_argument("--probe", default="list", help="scenario whose first request is the readiness probe")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--idle", type=float, default=3.0, help="seconds idle before reading idle RSS")
    p.add_argument("--pause", type=float, default=1.0)
    p.add_argument("--log")
    p.set_defaults(fn=cmd_startup)

    p = sp.add_parser("rss")
    p.add_argument("pid", type=int)
    p.set_defaults(fn=cmd_rss)

    p = sp.add_parser("report")
    p.add_argument("results", nargs="+")
    p.set_defaults(fn=cmd_report)

    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()

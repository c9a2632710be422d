#!/usr/bin/env python3
"""Unread responses: the server's memory (RSS) when one client asks for a large
answer on many connections and never reads it. Not a test: numbers for docs/bench/history.md.

The attack: an anonymous user stores FAVORITES of their own favourites
(20,000 make a ~4.5 MB answer, allowed by the reference rules), then opens CONNECTIONS
connections that each send `GET /users/<uid>/favorites.json` and never read. Without a
bound the server keeps each unsent answer until the write timeout (30 s) closes the
connection; with `maxUnsentBytes` (HEARTH_MAX_UNSENT_BYTES, 256 MiB by default) an answer
that would push the unsent bytes of all connections past the bound gets 503 + Retry-After.

For each binary given (e.g. the commit before the bound and the current one), a fresh
server on 127.0.0.1 (port 0, temp data dir, the repository's reference rules.json,
synchronous=full, access log off) and:

1. anonymous sign-up (`POST /v1/accounts:signUp`), then FAVORITES favourites under
   /users/<uid>/favorites in PATCH batches of BATCH, each with the fields the rules
   require (id, name, createdAt, createdBy = uid, latitude, longitude) and a NOTE_BYTES
   note; one GET of the whole list (read to the end): its status and size;
2. RSS after SETTLE_SECONDS with no requests ("before");
3. CONNECTIONS raw sockets, each sending the GET with `Authorization: Bearer <token>` and
   never reading (RLIMIT_NOFILE raised to fit). For SAMPLE_SECONDS from the first connect
   (under the 30 s write timeout by default; a longer window lets the timeout close the
   first connections, and the server renders these answers one by one, so a short window
   sees only the first part of them answered) the server's RSS, the kernel's TCP buffer memory
   (/proc/net/sockstat, not part of RSS), when /metrics has it `hearth_http_unsent_bytes`,
   and how many sockets have a status line waiting (peeked as in 4) are sampled every
   second; the peaks are reported, the timeline is in the JSON;
4. at the end of that window, the first 12 bytes of every socket are peeked (MSG_PEEK:
   nothing is consumed, the window stays closed) to count `HTTP/1.1 200` and
   `HTTP/1.1 503` status lines, and sockets with nothing yet;
5. every socket is closed; RSS after SETTLE_SECONDS ("after close").

The table's "(peak − before) per 200" is the RSS growth per answer sent: meaningful while
no connection has been closed by the write timeout yet (windows under 30 s).

Usage: scripts/bench/unread_responses.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): FAVORITES (20000) CONNECTIONS (1000) SAMPLE_SECONDS (20) SETTLE_SECONDS (5)
BATCH (500) NOTE_BYTES (46: ~225 bytes a favourite in the answer).
HEARTH_MAX_UNSENT_BYTES is passed to every server when set (e.g. 67108864 to show a small
bound); HEARTH_MAX_CONNECTIONS and HEARTH_MAX_CONNECTIONS_PER_ADDRESS default to 5000 here
(every connection comes from 127.0.0.1); binaries that predate a variable ignore it. No
other HEARTH_* variable of the caller's environment reaches the servers.
Everything on 127.0.0.1; every socket is closed, every server stopped and its temp dir
removed at the end (also on errors and Ctrl-C).
"""
import atexit
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import runcpu

FAVORITES = int(os.environ.get("FAVORITES", "20000"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "1000"))
SAMPLE_SECONDS = float(os.environ.get("SAMPLE_SECONDS", "20"))
SETTLE_SECONDS = float(os.environ.get("SETTLE_SECONDS", "5"))
BATCH = int(os.environ.get("BATCH", "500"))
NOTE_BYTES = int(os.environ.get("NOTE_BYTES", "46"))
PASSED_ENV = ("HEARTH_MAX_UNSENT_BYTES",)
FIXED_ENV = {"HEARTH_MAX_CONNECTIONS": os.environ.get("HEARTH_MAX_CONNECTIONS", "5000"),
             "HEARTH_MAX_CONNECTIONS_PER_ADDRESS": os.environ.get("HEARTH_MAX_CONNECTIONS_PER_ADDRESS", "5000"),
             "HEARTH_ACCESS_LOG": "false"}
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIB = 1024 * 1024

_servers, _sockets = [], []


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def kernel_tcp_mib():
    """Memory the kernel holds in TCP buffers, all sockets of the machine (sockstat 'mem', pages)."""
    try:
        with open("/proc/net/sockstat") as f:
            for line in f:
                if line.startswith("TCP:"):
                    fields = line.split()
                    return int(fields[fields.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE") / MIB
    except (OSError, ValueError, IndexError):
        pass
    return float("nan")


class Server:
    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="hearth-unread-")
        _servers.append(self)
        self.proc = None
        rules = os.path.join(self.dir, "rules.json")
        shutil.copyfile(os.path.join(REPO, "rules.json"), rules)
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
        env.update(FIXED_ENV)
        for name in PASSED_ENV:
            if name in os.environ:
                env[name] = os.environ[name]
        self.proc = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", self.dir + "/data",
             "--rules", rules, "--synchronous", "full"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        deadline = time.time() + 60
        self.port = None
        self.log = []
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line.rstrip())
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            raise SystemExit("server did not start:\n" + "\n".join(self.log[-20:]))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stdout:
            if len(self.log) < 2000:
                self.log.append(line.rstrip())

    def conn(self, timeout=120):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def metric(self, name):
        """A value from /metrics (loopback needs no token), or None when absent or unanswered."""
        try:
            c = self.conn(timeout=5)
            c.request("GET", "/metrics")
            r = c.getresponse()
            text = r.read().decode("utf-8", "replace")
            c.close()
        except (OSError, http.client.HTTPException):
            return None
        if r.status != 200:
            return None
        m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})?\s+([0-9.eE+-]+)\s*$", text, re.M)
        return float(m.group(1)) if m else None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)
        if self in _servers:
            _servers.remove(self)


def close_sockets():
    while _sockets:
        try:
            _sockets.pop().close()
        except OSError:
            pass


def cleanup():
    close_sockets()
    for s in list(_servers):
        s.stop()


atexit.register(cleanup)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def call(server, method, path, body=None, token=None):
    c = server.conn()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    c.request(method, path, body, headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def favourite(i, uid):
    return {"id": f"f{i:06d}", "name": f"Favourite city {i:06d}", "createdAt": 1764000000000 + i,
            "createdBy": uid, "latitude": round(-60 + (i * 0.0061) % 120, 6),
            "longitude": round(-170 + (i * 0.0173) % 340, 6), "note": "n" * NOTE_BYTES}


def favourites(uid, count, start=0):
    """Favourites start..count-1 of `uid`, keyed as the app keys them."""
    return {f"f{i:06d}": favourite(i, uid) for i in range(start, count)}


def anonymous_user(server):
    """Signs an anonymous user up: (ID token, uid, the path of their favourites)."""
    status, data = call(server, "POST", "/v1/accounts:signUp", json.dumps({"returnSecureToken": True}))
    if status != 200:
        raise SystemExit(f"sign-up: {status} {data[:200]!r}")
    account = json.loads(data)
    return account["idToken"], account["localId"], f"/users/{account['localId']}/favorites"


def seed_favourites(server, path, token, uid, count, batch):
    """Writes `count` favourites under `path` in PATCHes of `batch`."""
    for start in range(0, count, batch):
        status, data = call(server, "PATCH", path + ".json?print=silent",
                            json.dumps(favourites(uid, min(count, start + batch), start)), token)
        if status not in (200, 204):
            raise SystemExit(f"PATCH batch at {start}: {status} {data[:300]!r}")


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    if soft < want:
        raise SystemExit(f"open-file limit {soft} too low for {n} connections (hard limit {hard})")


def peek_status_lines(sockets):
    """Counts of status lines at the head of each socket's input, peeked (nothing consumed)."""
    counts = {"200": 0, "503": 0, "other": 0, "nothing yet": 0, "closed": 0}
    for s in sockets:
        try:
            head = s.recv(12, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            counts["nothing yet"] += 1
            continue
        except OSError:
            counts["closed"] += 1
            continue
        if not head:
            counts["closed"] += 1
        elif head.startswith(b"HTTP/1.1 200"):
            counts["200"] += 1
        elif head.startswith(b"HTTP/1.1 503"):
            counts["503"] += 1
        else:
            counts["other"] += 1
    return counts


def run(binary, label):
    server = Server(binary)
    pid = server.proc.pid
    meter = runcpu.Meter(pid)
    res = {"label": label, "binary": binary, "favorites": FAVORITES, "connections": CONNECTIONS,
           "max_unsent_bytes": os.environ.get("HEARTH_MAX_UNSENT_BYTES", "default")}
    try:
        # 1. the user and their favourites
        token, uid, base = anonymous_user(server)
        t0 = time.perf_counter()
        seed_favourites(server, base, token, uid, FAVORITES, BATCH)
        res["seed_seconds"] = round(time.perf_counter() - t0, 1)
        status, data = call(server, "GET", base + ".json", token=token)
        if status != 200:
            raise SystemExit(f"GET {base}.json: {status} {data[:300]!r}")
        res["response_bytes"] = len(data)
        res["response_items"] = len(json.loads(data))
        del data
        # 2. quiet
        time.sleep(SETTLE_SECONDS)
        res["rss_before_mib"] = rss_mib(pid)
        res["kernel_tcp_before_mib"] = kernel_tcp_mib()
        res["unsent_refusals_before"] = server.metric("hearth_http_unsent_refusals_total")
        # 3. connections that never read
        request = (f"GET {base}.json HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                   f"Authorization: Bearer {token}\r\nAccept: application/json\r\n\r\n").encode()
        samples, stop = [], threading.Event()

        def sample():
            while True:
                heads = peek_status_lines(list(_sockets))
                samples.append({"t": round(time.perf_counter() - t_open, 2), "rss_mib": rss_mib(pid),
                                "kernel_tcp_mib": kernel_tcp_mib(),
                                "unsent_bytes": server.metric("hearth_http_unsent_bytes"),
                                "heads_200": heads["200"], "heads_503": heads["503"]})
                if stop.wait(1.0):
                    return

        t_open = time.perf_counter()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        connect_errors = 0
        for i in range(CONNECTIONS):
            if time.perf_counter() - t_open > SAMPLE_SECONDS * 0.75:
                break  # a slow machine: stop opening, keep some of the window for sampling
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(10)
            try:
                s.connect(("127.0.0.1", server.port))
                s.sendall(request)
                s.setblocking(False)  # peeks below must never wait
            except OSError:
                connect_errors += 1
                s.close()
                continue
            _sockets.append(s)
        res["opened"] = len(_sockets)
        res["connect_errors"] = connect_errors
        res["open_seconds"] = round(time.perf_counter() - t_open, 2)
        remaining = SAMPLE_SECONDS - (time.perf_counter() - t_open)
        if remaining > 0:
            time.sleep(remaining)
        # 4. status lines, peeked
        res["status_lines"] = peek_status_lines(_sockets)
        res["window_seconds"] = round(time.perf_counter() - t_open, 2)
        stop.set()
        sampler.join(10)
        res["samples"] = samples
        res["rss_peak_mib"] = max(x["rss_mib"] for x in samples)
        res["kernel_tcp_peak_mib"] = max(x["kernel_tcp_mib"] for x in samples)
        unsent = [x["unsent_bytes"] for x in samples if x["unsent_bytes"] is not None]
        res["unsent_peak_mib"] = max(unsent) / MIB if unsent else None
        refusals = server.metric("hearth_http_unsent_refusals_total")
        res["unsent_refusals"] = (refusals - (res["unsent_refusals_before"] or 0)) if refusals is not None else None
        # 5. close everything
        close_sockets()
        time.sleep(SETTLE_SECONDS)
        res["rss_after_close_mib"] = rss_mib(pid)
        res["kernel_tcp_after_mib"] = kernel_tcp_mib()
        after_unsent = server.metric("hearth_http_unsent_bytes")
        res["unsent_after_close_bytes"] = after_unsent
        res["server_alive"] = server.proc.poll() is None
        res.update(meter.read())
    finally:
        close_sockets()
        server.stop()
    return res


def default_label(binary):
    """The checkout a binary was built in (<dir>/.build/release/hearth), else its path."""
    parts = os.path.abspath(binary).split(os.sep)
    return parts[parts.index(".build") - 1] if ".build" in parts[1:] else binary


def main():
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(__doc__)
    raise_nofile(CONNECTIONS)
    labels = os.environ.get("LABELS", ",".join(default_label(b) for b in binaries)).split(",")
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load = open("/proc/loadavg").read().split()[:3]
    results = [run(b, l) for b, l in zip(binaries, labels)]
    print(json.dumps(results, indent=1))
    print()
    print(f"started {started}; load average before: {' '.join(load)}, "
          f"after: {' '.join(open('/proc/loadavg').read().split()[:3])}; "
          f"{FAVORITES:,} favourites, {CONNECTIONS:,} connections, {SAMPLE_SECONDS:g} s window, "
          f"settle {SETTLE_SECONDS:g} s")
    print()
    print("| binary | maxUnsentBytes | response | connections (opened in) | RSS before | peak RSS during | "
          "RSS after close | (peak − before) per 200 | peak kernel TCP buffers | peak unsent (metric) | "
          "status lines peeked at the end |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        bound = r["max_unsent_bytes"]
        bound = "default" if bound == "default" else f"{int(bound) / MIB:g} MiB"
        s = r["status_lines"]
        seen = f"at {r['window_seconds']:.0f} s: 200: {s['200']}, 503: {s['503']}"
        for k in ("other", "nothing yet", "closed"):
            if s[k]:
                seen += f", {k}: {s[k]}"
        unsent = "—" if r["unsent_peak_mib"] is None else f"{r['unsent_peak_mib']:.0f} MiB"
        per = (r["rss_peak_mib"] - r["rss_before_mib"]) / s["200"] if s["200"] else float("nan")
        print(f"| {r['label']} | {bound} | {r['response_bytes'] / 1e6:.2f} MB | {r['opened']:,} "
              f"({r['open_seconds']:.1f} s) | {r['rss_before_mib']:.0f} MiB | {r['rss_peak_mib']:.0f} MiB | "
              f"{r['rss_after_close_mib']:.0f} MiB | {per:.2f} MiB | {r['kernel_tcp_peak_mib']:.0f} MiB | {unsent} | "
              f"{seen} |")
    print()
    for r in results:
        print(f"{r['label']}: load average before its run {r['load_before']}; over its {r['metered_seconds']:.0f} s, "
              f"CPU in % of a core: server {r['server_cpu_pct']:.0f}, this driver {r['driver_cpu_pct']:.0f}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)

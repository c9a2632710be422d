#!/usr/bin/env python3
"""Huge writes: what one very large write costs the other writers, and the
memory the server keeps afterwards. Not a test: numbers for docs/bench/history.md.

For each binary given (e.g. the commit before the limit and the current one), a fresh
server on 127.0.0.1 (port 0, temp data dir, open rules, synchronous=full) and:

1. idle RSS;
2. small writes alone: one client PUTs a favourite-sized object in a closed loop for
   BASE_SECONDS; latency p50/p99/max;
3. small writes beside huge ones: the same loop while another client PUTs BIG_ROUNDS
   writes of BIG_NODES leaves each (default 100,000, the default maxNodesPerWrite) at
   /big/<i>, then DELETEs them; latency p50/p99/max of the small writes in that window,
   and each huge write's and delete's own time and status;
4. RSS right after, and RSS once the server had SETTLE_SECONDS with no requests (the
   MemoryTrimmer runs 1 s after a large exchange);
5. one PUT of HUGE_NODES leaves (default 10^6, ~9 MB): its status and time (413 with the
   limit: refused after parsing, before the writer), then RSS again after SETTLE_SECONDS.

Usage: scripts/bench/huge_writes.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): BIG_NODES BIG_ROUNDS HUGE_NODES BASE_SECONDS SETTLE_SECONDS.
Everything on 127.0.0.1; every server is stopped and its temp dir removed at the end.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import runcpu

BIG_NODES = int(os.environ.get("BIG_NODES", "100000"))
BIG_ROUNDS = int(os.environ.get("BIG_ROUNDS", "3"))
HUGE_NODES = int(os.environ.get("HUGE_NODES", "1000000"))
BASE_SECONDS = float(os.environ.get("BASE_SECONDS", "5"))
SETTLE_SECONDS = float(os.environ.get("SETTLE_SECONDS", "5"))
SMALL = json.dumps({"id": "oslo", "name": "Oslo", "createdAt": 1, "createdBy": "u",
                    "latitude": 59.91, "longitude": 10.75, "note": "x" * 120})


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


OPEN_RULES = '{"rules": {".read": true, ".write": true}}'


class Server:
    """A fresh server: open rules unless `rules` (the file's text) says otherwise, the
    triggers file's text `triggers` if given (wide_updates.py uses both), and on the
    database at `store` (a `postgres://` URL; index_build.py) instead of SQLite if given."""

    def __init__(self, binary, rules=OPEN_RULES, triggers=None, store=None):
        self.dir = tempfile.mkdtemp(prefix="hearth-huge-")
        rules_file = os.path.join(self.dir, "rules.json")
        with open(rules_file, "w") as f:
            f.write(rules)
        args = ["--rules", rules_file] + (["--store", store] if store else [])
        if triggers is not None:
            args += ["--triggers", os.path.join(self.dir, "triggers.json")]
            with open(args[-1], "w") as f:
                f.write(triggers)
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
        env["HEARTH_ACCESS_LOG"] = "false"
        self.proc = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", self.dir + "/data"] + args,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        deadline = time.time() + 60
        self.port = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            raise SystemExit("server did not start")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()  # drain

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def request(conn, method, path, body=None):
    start = time.perf_counter()
    conn.request(method, path, body)
    r = conn.getresponse()
    data = r.read()
    return r.status, (time.perf_counter() - start) * 1000, data


def small_loop(server, stop, out):
    c = server.conn()
    i = 0
    while not stop.is_set():
        status, ms, _ = request(c, "PUT", f"/small/k{i % 500}.json?print=silent", SMALL)
        out.append((ms, status))
        i += 1


def base36(i):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        i, r = divmod(i, 36)
        out = digits[r] + out
        if i == 0:
            return out


def leaves(n):
    """n leaves with short keys: 10^6 of them are ~9 MB, under the 16 MiB body limit."""
    return "{" + ",".join(f'"{base36(i)}":1' for i in range(n)) + "}"


def run(binary, label):
    server = Server(binary)
    meter = runcpu.Meter(server.proc.pid)
    res = {"label": label, "binary": binary}
    try:
        time.sleep(1)
        res["rss_idle_mib"] = rss_mib(server.proc.pid)
        # 2. small writes alone
        stop, base = threading.Event(), []
        t = threading.Thread(target=small_loop, args=(server, stop, base))
        t.start(); time.sleep(BASE_SECONDS); stop.set(); t.join()
        lat = [ms for ms, st in base if st == 204]
        res["alone"] = {"n": len(lat), "p50": pct(lat, 50), "p99": pct(lat, 99), "max": max(lat)}
        # 3. beside huge writes
        body = leaves(BIG_NODES)
        stop, beside = threading.Event(), []
        t = threading.Thread(target=small_loop, args=(server, stop, beside))
        t.start()
        big = server.conn()
        res["big_puts"], res["big_deletes"] = [], []
        peak = 0.0
        for i in range(BIG_ROUNDS):
            status, ms, _ = request(big, "PUT", f"/big/{i}.json?print=silent", body)
            res["big_puts"].append({"status": status, "ms": round(ms, 1)})
            peak = max(peak, rss_mib(server.proc.pid))
        for i in range(BIG_ROUNDS):
            status, ms, _ = request(big, "DELETE", f"/big/{i}.json")
            res["big_deletes"].append({"status": status, "ms": round(ms, 1)})
        stop.set(); t.join()
        lat = [ms for ms, st in beside if st == 204]
        res["beside"] = {"n": len(lat), "p50": pct(lat, 50), "p99": pct(lat, 99), "max": max(lat),
                         "errors": sum(1 for _, st in beside if st != 204)}
        res["rss_peak_mib"] = peak
        res["rss_after_big_mib"] = rss_mib(server.proc.pid)
        time.sleep(SETTLE_SECONDS)
        res["rss_settled_mib"] = rss_mib(server.proc.pid)
        # 5. one huge PUT
        huge = leaves(HUGE_NODES)
        status, ms, data = request(server.conn(), "PUT", "/huge.json?print=silent", huge)
        res["huge"] = {"nodes": HUGE_NODES, "bytes": len(huge), "status": status, "ms": round(ms, 1),
                       "error": json.loads(data).get("error") if data else None}
        if status in (200, 204):
            request(server.conn(), "DELETE", "/huge.json")
        time.sleep(SETTLE_SECONDS)
        res["rss_after_huge_mib"] = rss_mib(server.proc.pid)
        res.update(meter.read())
    finally:
        server.stop()
    return res


def main():
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(__doc__)
    labels = os.environ.get("LABELS", ",".join(os.path.basename(os.path.dirname(b)) or b for b in binaries)).split(",")
    results = [run(b, l) for b, l in zip(binaries, labels)]
    print(json.dumps(results, indent=1))
    print()
    print(f"| figure | " + " | ".join(r["label"] for r in results) + " |")
    print("|---|" + "---|" * len(results))
    def row(name, f):
        print(f"| {name} | " + " | ".join(f(r) for r in results) + " |")
    row("idle RSS (MiB)", lambda r: f"{r['rss_idle_mib']:.1f}")
    row("small PUT alone p50 / p99 / max (ms)", lambda r: f"{r['alone']['p50']:.2f} / {r['alone']['p99']:.2f} / {r['alone']['max']:.1f}")
    row(f"small PUT beside {BIG_ROUNDS}× {BIG_NODES:,}-node PUT+DELETE p50 / p99 / max (ms)",
        lambda r: f"{r['beside']['p50']:.2f} / {r['beside']['p99']:.2f} / {r['beside']['max']:.1f}")
    row(f"{BIG_NODES:,}-node PUT (ms each)", lambda r: ", ".join(f"{p['ms']:.0f} ({p['status']})" for p in r["big_puts"]))
    row(f"{BIG_NODES:,}-node DELETE (ms each)", lambda r: ", ".join(f"{p['ms']:.0f} ({p['status']})" for p in r["big_deletes"]))
    row("RSS peak / right after / settled (MiB)", lambda r: f"{r['rss_peak_mib']:.0f} / {r['rss_after_big_mib']:.0f} / {r['rss_settled_mib']:.0f}")
    row(f"{HUGE_NODES:,}-node PUT ({results[0]['huge']['bytes'] / 1e6:.1f} MB): status, ms",
        lambda r: f"{r['huge']['status']}, {r['huge']['ms']:.0f}")
    row("RSS settled after it (MiB)", lambda r: f"{r['rss_after_huge_mib']:.0f}")
    row("load average before", lambda r: r["load_before"])
    row("CPU, % of a core: server, this driver", lambda r: f"{r['server_cpu_pct']:.0f}, {r['driver_cpu_pct']:.0f}")


if __name__ == "__main__":
    main()

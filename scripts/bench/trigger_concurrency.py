#!/usr/bin/env python3
"""Trigger delivery throughput by maxConcurrency and receiver latency (docs/triggers.md,
"Ordering and concurrency"). Stdlib only; run through scripts/bench/trigger_concurrency.sh.

One Hearth (open rules) with one trigger per cell on /c<cell>/{loc}, each to a local
threaded receiver that sleeps DELAY ms per event, then answers 204. Per cell: N events
written as PATCHes of LOCATIONS children (one event per location per PATCH, so every
location gets a run of events in commit order), the receiver counts arrivals; deliveries
per second = events / (last arrival - first arrival). The receiver also checks each
location's events arrive in commit order (the "out of order" column must be 0). A cell
stops waiting after CELL_SECONDS and reports what arrived by then.

  trigger_concurrency.py --hearth BIN [--delays 0,10,100] [--concurrency 1,16,64]
                         [--locations 64] [--cell-seconds 20] [--work DIR]
"""
import argparse
import http.client
import http.server
import json
import os
import subprocess
import sys
import threading
import time

# ---- receiver ------------------------------------------------------------------------


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.cells = {}  # cell -> {"count", "first", "last", "last_n": {loc: n}, "out_of_order", "active", "most"}

    def cell(self, name):
        return self.cells.setdefault(name, {"count": 0, "first": None, "last": None, "last_n": {},
                                            "out_of_order": 0, "active": 0, "most": 0})


TALLY = Tally()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        _, cell, delay = self.path.split("/")[:3]
        ref = self.headers.get("ce-ref", "")
        n = json.loads(body).get("delta")
        with TALLY.lock:
            c = TALLY.cell(cell)
            c["active"] += 1
            c["most"] = max(c["most"], c["active"])
        if int(delay):
            time.sleep(int(delay) / 1000)
        now = time.monotonic()
        with TALLY.lock:
            c["active"] -= 1
            c["count"] += 1
            c["first"] = now if c["first"] is None else c["first"]
            c["last"] = now
            if isinstance(n, int):
                if n < c["last_n"].get(ref, -1):
                    c["out_of_order"] += 1
                c["last_n"][ref] = n
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


# ---- driver --------------------------------------------------------------------------


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_hearth(binary, work, triggers):
    rules = os.path.join(work, "rules.json")
    with open(rules, "w") as f:
        json.dump({"rules": {".read": True, ".write": True}}, f)
    log = open(os.path.join(work, "hearth.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", os.path.join(work, "data"),
                             "--rules", rules, "--triggers", triggers, "--log-level", "info"],
                            stdout=log, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        log.write(line)
        if "listening on http://127.0.0.1:" in line:
            port = int(line.split("listening on http://127.0.0.1:")[1].split()[0].strip("/,"))
            threading.Thread(target=lambda: [log.write(l) for l in proc.stderr], daemon=True).start()
            return proc, port
        if time.monotonic() > deadline:
            break
    proc.kill()
    sys.exit("hearth did not start; see %s" % log.name)


def events_for(delay, concurrency, cell_seconds):
    """Enough events to keep the cell busy for most of its time at the rate it could reach."""
    if delay == 0:
        return 2000
    return max(40, min(4000, int(concurrency * 1000 / delay * cell_seconds * 0.5)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hearth", required=True)
    ap.add_argument("--delays", default="0,10,100")
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--locations", type=int, default=64)
    ap.add_argument("--cell-seconds", type=float, default=20)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    delays = [int(d) for d in a.delays.split(",")]
    levels = [int(c) for c in a.concurrency.split(",")]
    receiver = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    rport = receiver.server_address[1]
    cells = [(d, c) for d in delays for c in levels]
    triggers = os.path.join(a.work, "triggers.json")
    with open(triggers, "w") as f:
        json.dump({"triggers": [{"name": "c%d" % i, "event": "written", "ref": "/c%d/{loc}" % i,
                                 "url": "http://127.0.0.1:%d/c%d/%d" % (rport, i, d), "retry": True,
                                 "maxConcurrency": c, "maxEventsPerSecond": 100000}
                                for i, (d, c) in enumerate(cells)]}, f)
    hearth, port = start_hearth(a.hearth, a.work, triggers)
    rows = []
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for i, (delay, concurrency) in enumerate(cells):
            n = events_for(delay, concurrency, a.cell_seconds)
            load = open("/proc/loadavg").read().split()[:3]
            cpu0 = cpu_seconds(hearth.pid)
            own0 = time.process_time()  # this process: the writer and the receiver's threads
            t0 = time.monotonic()
            for start in range(0, n, a.locations):
                body = json.dumps({"l%d" % k: start // a.locations for k in range(min(a.locations, n - start))})
                conn.request("PATCH", "/c%d.json?print=silent" % i, body=body, headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                if r.status // 100 != 2:
                    sys.exit("PATCH answered %d" % r.status)
            written = time.monotonic() - t0
            deadline = t0 + a.cell_seconds
            while time.monotonic() < deadline:
                with TALLY.lock:
                    if TALLY.cell("c%d" % i)["count"] >= n:
                        break
                time.sleep(0.05)
            with TALLY.lock:
                c = dict(TALLY.cell("c%d" % i))
            span = (c["last"] - c["first"]) if c["count"] > 1 else None
            rows.append({"delay_ms": delay, "maxConcurrency": concurrency, "events": n, "delivered": c["count"],
                         "written_s": round(written, 2), "span_s": round(span, 2) if span else None,
                         "per_second": round((c["count"] - 1) / span, 1) if span else None,
                         "most_at_once": c["most"], "out_of_order": c["out_of_order"], "load": " ".join(load),
                         "hearth_cpu_s": round(cpu_seconds(hearth.pid) - cpu0, 1),
                         "driver_cpu_s": round(time.process_time() - own0, 1)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            # Let the cell's leftovers (if it timed out) drain elsewhere: the next cell is its own trigger.
    finally:
        hearth.terminate()
        try:
            hearth.wait(timeout=15)
        except subprocess.TimeoutExpired:
            hearth.kill()
    print("| receiver ms/event | maxConcurrency | events | delivered | deliveries/s | most at once (receiver) | out of order | written in | Hearth CPU s | writer + receiver CPU s | load before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %d%s | %s | %d | %d | %.1f s | %.1f | %.1f | %s |" % (
            r["delay_ms"], r["maxConcurrency"], r["events"], r["delivered"],
            "" if r["delivered"] >= r["events"] else " (cut at %g s)" % a.cell_seconds,
            r["per_second"], r["most_at_once"], r["out_of_order"], r["written_s"], r["hearth_cpu_s"], r["driver_cpu_s"], r["load"]))


if __name__ == "__main__":
    main()

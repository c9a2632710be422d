#!/usr/bin/env python3
"""A restart after a crash with many onDisconnect operations left: what running them costs
the starting server. Not a test: numbers for docs/bench/history.md.

Operations queued by connections that were open when the server died run when it starts,
before it serves. For each binary given, a fresh server (`unread_responses.Server`:
127.0.0.1, port 0, temp data dir, the repository's reference rules.json, access log off),
with the onDisconnect byte bounds raised so one address can fill them (the bounds this
measures are the server's, whoever filled them):

1. an anonymous user; CONNS wire connections each register OPS onDisconnect sets of the
   user's list of FAVORITES favourites (~0.96 MB at 4,000);
2. the server is killed (SIGKILL) with the connections open, and started again on the
   same data directory;
3. reported: the seconds until it listens, its peak RSS (VmHWM) by then, and its CPU
   (user + system) over those seconds, in % of a core.

Usage: scripts/bench/ondisconnect_leftovers.py BINARY [BINARY...]   (LABELS=before,after)
Knobs (env): CONNS (16) OPS (16) FAVORITES (4000), and unread_responses.py's NOTE_BYTES.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repo
import runcpu  # noqa: E402
import unread_responses as base  # noqa: E402  (Server, call, favourite, rss_mib)
from resume_replay import peak_mib  # noqa: E402
from request_backlog import register_ondisconnect  # noqa: E402

CONNS = int(os.environ.get("CONNS", "16"))
OPS = int(os.environ.get("OPS", "16"))
FAVORITES = int(os.environ.get("FAVORITES", "4000"))
RAISED = {"HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES": str(64 << 20),
          "HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES_PER_ADDRESS": str(1 << 30),
          "HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES_IN_ALL": str(1 << 30)}


def run(binary, label):
    os.environ.update(RAISED)
    base.PASSED_ENV = tuple(set(base.PASSED_ENV) | set(RAISED))
    server = base.Server(binary)
    restarted = None
    try:
        token, uid, path = base.anonymous_user(server)
        value = base.favourites(uid, FAVORITES)
        statuses, connections = register_ondisconnect(server, token, path, value, CONNS, OPS)
        row = {"label": label, "registered": statuses["ok"], "value_bytes": len(json.dumps(value)),
               "rss_registered": round(base.rss_mib(server.proc.pid), 1), "load_before": runcpu.load_average()}
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        for ws in connections:
            ws.socket.close()
        data_dir = server.dir + "/data"
        row["data_mb"] = round(sum(os.path.getsize(os.path.join(data_dir, f)) for f in os.listdir(data_dir)) / 1e6)
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
        env.update(base.FIXED_ENV)
        env.update(RAISED)
        started = time.monotonic()
        restarted = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir, "--rules", server.dir + "/rules.json",
             "--synchronous", "full"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        lines = []
        listening = threading.Event()

        def drain():
            for line in restarted.stdout:
                lines.append(line.rstrip())
                if "listening on" in line:
                    listening.set()
        threading.Thread(target=drain, daemon=True).start()
        listening.wait(900)
        row["restart_seconds"] = round(time.monotonic() - started, 1)
        row["restart_peak_rss"] = round(peak_mib(restarted.pid), 1)
        cpu = runcpu.process_cpu_seconds(restarted.pid)
        row["restart_cpu_pct"] = round(100 * cpu / max(row["restart_seconds"], 0.1))
        row["ran"] = next((line.split("ran ", 1)[1].split(" ")[0] for line in lines if "onDisconnect operations left" in line), None)
        print(json.dumps(row), flush=True)
        return row
    finally:
        if restarted is not None and restarted.poll() is None:
            restarted.kill()
            restarted.wait()
        server.stop()


def main():
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = runcpu.each_binary(run, __doc__)
    print()
    print(f"started {started}; {CONNS} connections x {OPS} onDisconnect sets of {FAVORITES:,} favourites, then SIGKILL and a restart")
    print()
    print("| binary | registered | data dir | RSS registered | restart: listening after | restart: peak RSS | restart: server CPU % of a core | ran | load before |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['label']} | {r['registered']} × {r['value_bytes'] / 1e6:.2f} MB | {r['data_mb']} MB | {r['rss_registered']:,.0f} MiB | "
              f"{r['restart_seconds']} s | {r['restart_peak_rss']:,.0f} MiB | {r['restart_cpu_pct']} | {r['ran']} | {r['load_before']} |")


if __name__ == "__main__":
    main()

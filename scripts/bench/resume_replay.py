#!/usr/bin/env python3
"""A resume after large writes: what one `Last-Event-ID` reconnect costs the server. Not a
test: numbers for docs/bench/history.md.

A stream resumed with `Last-Event-ID` gets the changes it missed at its location, replayed
from the change log, or a fresh snapshot. A client that wrote large values there and
resumes from before them chooses how much the server reads for it.

For each binary given, a fresh server (`unread_responses.Server`: 127.0.0.1, port 0, temp
data dir, the repository's reference rules.json, access log off) and:

1. an anonymous user (`POST /v1/accounts:signUp`); a stream of
   /users/<uid>/favorites.json (`?auth=<token>`) read to its first event: its id is where
   the resume starts; the stream closed;
2. WRITES PUTs of the whole list, each of FAVORITES favourites
   (`unread_responses.favourite`, ~225 bytes each; the names differ per PUT): each is one
   change of the list's size;
3. the server's RSS after SETTLE_SECONDS, and its peak so far (VmHWM);
4. the stream opened again with `Last-Event-ID` set to that first id, and read for
   READ_SECONDS: the bytes and events received, whether the first is the first missed
   change (its id follows the resume's) or a fresh snapshot (the latest id), and whether a
   `cancel` came; then the server's RSS and peak again.

Usage: scripts/bench/resume_replay.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): FAVORITES (13000: ~2.9 MB a PUT) WRITES (10) READ_SECONDS (5) SETTLE_SECONDS (2),
and unread_responses.py's NOTE_BYTES (46).
"""
import json
import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the repo
import runcpu  # noqa: E402
import unread_responses as base  # noqa: E402  (Server, call, favourite, rss_mib, cleanup)

FAVORITES = int(os.environ.get("FAVORITES", "13000"))
WRITES = int(os.environ.get("WRITES", "10"))
READ_SECONDS = float(os.environ.get("READ_SECONDS", "5"))
SETTLE_SECONDS = float(os.environ.get("SETTLE_SECONDS", "2"))


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024


def stream(server, path, token, last_event_id=None, seconds=None):
    """Opens the stream; without `seconds`, reads its first event and returns its id; with
    them, reads for that long and returns what came."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=120)
    resume = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
    s.sendall(f"GET {path}.json?auth={token} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{resume}\r\n".encode())
    data = b""
    started = time.monotonic()
    first_at = None
    try:
        while True:
            if seconds is not None:
                left = seconds - (time.monotonic() - started)
                if left <= 0:
                    break
                s.settimeout(left)
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
            body = data.split(b"\r\n\r\n", 1)
            if first_at is None and len(body) == 2 and b"\n\n" in body[1]:
                first_at = time.monotonic() - started
                if seconds is None:
                    return int(re.search(rb"id: (\d+)", body[1]).group(1))
    except socket.timeout:
        pass
    finally:
        s.close()
    body = data.split(b"\r\n\r\n", 1)[-1]
    events = body.count(b"\n\n")
    first_id = re.search(rb"id: (\d+)", body.split(b"\n\n", 1)[0])
    return {"bytes": len(body), "events": events, "first_event_s": None if first_at is None else round(first_at, 2),
            "first_id": int(first_id.group(1)) if first_id else None, "cancelled": b"event: cancel" in body}


def run(binary, label):
    server = base.Server(binary)
    pid = server.proc.pid
    meter = runcpu.Meter(pid)
    res = {"label": label, "binary": binary, "favorites": FAVORITES, "writes": WRITES}
    try:
        token, uid, path = base.anonymous_user(server)
        start_id = stream(server, path, token)
        for write in range(WRITES):
            favourites = {}
            for i in range(FAVORITES):
                favourite = base.favourite(i, uid)
                favourite["name"] += f" ({write})"
                favourites[f"f{i:06d}"] = favourite
            body = json.dumps(favourites)
            status, data = base.call(server, "PUT", path + ".json?print=silent", body, token)
            if status not in (200, 204):
                raise SystemExit(f"PUT answered {status}: {data[:200]}")
            res["write_bytes"] = len(body)
        time.sleep(SETTLE_SECONDS)
        res["rss_before"], res["peak_before"] = base.rss_mib(pid), peak_mib(pid)
        res["start_id"] = start_id
        res["resume"] = stream(server, path, token, last_event_id=start_id, seconds=READ_SECONDS)
        res["rss_after"], res["peak_after"] = base.rss_mib(pid), peak_mib(pid)
        res.update(meter.read())
    finally:
        server.stop()
    return res


def main():
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = runcpu.each_binary(run, __doc__)
    print(json.dumps(results, indent=1))
    print()
    print(f"started {started}; {WRITES} PUTs of {FAVORITES:,} favourites, then one resume from before them")
    print()
    print("| binary | each PUT | first event | its kind | received in "
          f"{READ_SECONDS:g} s | cancel | peak RSS before → after the resume | load before | CPU % of a core: server, driver |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        resume = r["resume"]
        if resume["first_id"] is None:
            kind = "none in time"
        elif resume["first_id"] == r["start_id"] + 1:
            kind = "the first missed change"
        else:
            kind = f"a snapshot (id {resume['first_id']})"
        print(f"| {r['label']} | {r['write_bytes'] / 1e6:.2f} MB | {resume['first_event_s'] or '–'} s | {kind} | "
              f"{resume['bytes'] / 1e6:.2f} MB, {resume['events']} events | {'yes' if resume['cancelled'] else 'no'} | "
              f"{r['peak_before']:.0f} → {r['peak_after']:.0f} MiB | {r['load_before']} | "
              f"{r['server_cpu_pct']:.0f}, {r['driver_cpu_pct']:.0f} |")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)

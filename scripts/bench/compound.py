#!/usr/bin/env python3
"""Compound hashes for scripts/bench/compound.sh: a client holding N
cached favourites, K of them changed while it was away, re-listens over /.ws, once as
today's clients do without `ch` (the whole value comes back as `d`) and once as iOS and
Android do with `ch` (the compound hash of its cache; only the changed ranges come back
as `rm`). Per run and mode: bytes the server sent for the listen (WebSocket payload from
the `q` to its `ok`), the request's own bytes, and the time from sending the `q` to the
`ok` (the cache is in sync then). The modes alternate within each run on the same data.
Given the server's pid, also the load average before the runs and the CPU of the server
and of this client over them (scripts/bench/runcpu.py).
Uses the test virtualenv (scripts/python-env.sh: `websockets`) and the tests' compound
hash (Tests/EndToEndTests/Python/compound_hash.py, written from the iOS SDK).

Usage: compound.py <base url> <favourites> <changed> <runs> [<hearth pid>]
"""
import json
import os
import random
import statistics
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../Tests/EndToEndTests/Python"))
sys.dont_write_bytecode = True
import compound_hash  # noqa: E402
import runcpu  # noqa: E402
from websockets.sync.client import connect  # noqa: E402
from wire_frames import Joiner  # noqa: E402

BASE, COUNT, CHANGED, RUNS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
SERVER_PID = int(sys.argv[5]) if len(sys.argv) > 5 else None
LOCATION = "/bench/favourites"


def rest(method, path, body=None):
    request = urllib.request.Request(BASE + path, data=None if body is None else json.dumps(body).encode(), method=method)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read() or b"null")


def favourites():
    rng = random.Random(28)
    return {f"-Nfav{100000 + i:06d}": {"name": f"Place {i}", "createdAt": 1700000000000 + i * 1000,
                                      "createdBy": "user-1", "latitude": round(rng.uniform(-90, 90), 6),
                                      "longitude": round(rng.uniform(-180, 180), 6)} for i in range(COUNT)}


def relisten(ch):
    """One connection: handshake, q (with ch or not), until its ok. Returns (bytes received
    for the listen, request bytes, seconds from q to ok, the pushes)."""
    ws = connect(BASE.replace("http://", "ws://") + "/.ws?v=5&ns=bench", max_size=None, open_timeout=60)
    ws.recv(timeout=60)  # handshake
    body = {"p": LOCATION, "h": ""}
    if ch is not None:
        body["ch"] = ch
    request = json.dumps({"t": "d", "d": {"r": 1, "a": "q", "b": body}}, separators=(",", ":"))
    received, pushes, joiner = 0, [], Joiner()
    start = time.perf_counter()
    ws.send(request)
    while True:
        frame = ws.recv(timeout=120)
        received += len(frame.encode()) if isinstance(frame, str) else len(frame)
        frame = joiner.add(frame)
        if frame is None:
            continue
        message = json.loads(frame)
        if message.get("d", {}).get("r") == 1:
            elapsed = time.perf_counter() - start
            break
        pushes.append(message["d"])
    ws.close()
    return received, len(request.encode()), elapsed, pushes


def main():
    meter = runcpu.Meter(SERVER_PID) if SERVER_PID else None
    cache = favourites()
    keys = sorted(cache)
    rows = {"without": [], "with": []}
    ch_seconds = []
    for run in range(RUNS):
        rest("PUT", LOCATION + ".json?print=silent", cache)
        # K favourites changed while the client was away, spread over the list.
        rng = random.Random(run)
        changes = {f"{key}/name": f"Renamed in run {run}" for key in rng.sample(keys, CHANGED)}
        rest("PATCH", LOCATION + ".json?print=silent", changes)
        expected = rest("GET", LOCATION + ".json")
        t = time.perf_counter()
        ch = compound_hash.compound_hash(cache)
        ch_seconds.append(time.perf_counter() - t)
        for mode in (("without", "with") if run % 2 == 0 else ("with", "without")):
            received, sent, seconds, pushes = relisten(ch if mode == "with" else None)
            if mode == "with":
                assert len(pushes) == 1 and pushes[0]["a"] == "rm", pushes[:1]
                assert compound_hash.apply_rm(cache, pushes[0]["b"]["d"]) == expected, "rm did not give the server's value"
                ranges = len(pushes[0]["b"]["d"])
            else:
                assert len(pushes) == 1 and pushes[0]["a"] == "d" and pushes[0]["b"]["d"] == expected
                ranges = None
            rows[mode].append({"bytes": received, "request": sent, "seconds": seconds, "ranges": ranges})
    result = {"favourites": COUNT, "changed": CHANGED, "runs": RUNS, "ranges_in_ch": len(ch["ps"]) + 1,
              "ch_seconds_median": statistics.median(ch_seconds)}
    for mode, samples in rows.items():
        result[mode] = {"bytes_median": statistics.median(s["bytes"] for s in samples),
                        "request_bytes": statistics.median(s["request"] for s in samples),
                        "ms_median": 1000 * statistics.median(s["seconds"] for s in samples),
                        "ms_min": 1000 * min(s["seconds"] for s in samples),
                        "ms_max": 1000 * max(s["seconds"] for s in samples),
                        "ranges_sent": [s["ranges"] for s in samples]}
    if meter:
        result.update(meter.read())
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

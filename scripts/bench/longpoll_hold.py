#!/usr/bin/env python3
"""Long-poll sessions held by a client that stops polling: the server's memory (RSS) per
held session. Not a test: numbers for docs/bench/history.md.

For each binary given (e.g. the commit before the bound and the current one), a fresh
server on 127.0.0.1 (port 0, temp data dir, open rules, access log off) and three
scenarios, each on its own fresh server:

* `small`: SESSIONS sessions (default 50), each a start (`GET /.lp?start=t&ser=1&cb=7&v=5`)
  then one poll carrying two `g` reads of a SMALL_MIB (3) MiB value, never polled again:
  the first answer goes on that poll (read to the end), the second has no poll to take it
  (8 sessions made at a time);
* `large`: LARGE_SESSIONS (10) sessions, each one poll carrying a read of a tiny value and
  a read of a LARGE_MIB (40) MiB value (five 8 MiB strings): the large answer waits;
* `starts`: STARTS (2,000) session starts from one address: how many are refused (429).

RSS (VmRSS) is read before the sessions and SETTLE_SECONDS (3) after the last one, well
inside the 60 s a session without polls lives, each time after one read of the large value
and 2 s (which has the server's memory trimmer return freed memory to the system); `hearth_http_unsent_bytes` from /metrics
then too; and at the end one poll per session counts the sessions still open (200) and
the ones the server ended (404).

  scripts/bench/longpoll_hold.sh BINARY [BINARY...]    (prints a JSON line per scenario)
"""
import base64
import concurrent.futures
import http.client
import json
import os
import re
import sys
import time

import huge_writes
import runcpu

SESSIONS = int(os.environ.get("SESSIONS", 50))
SMALL_MIB = int(os.environ.get("SMALL_MIB", 3))
LARGE_SESSIONS = int(os.environ.get("LARGE_SESSIONS", 10))
LARGE_MIB = int(os.environ.get("LARGE_MIB", 40))
STARTS = int(os.environ.get("STARTS", 2000))
SETTLE = float(os.environ.get("SETTLE_SECONDS", 3))
START_CALL = re.compile(r"pLPCommand\d+\)\('start','([0-9a-f]+)','([0-9a-f]+)'\)")


class Server(huge_writes.Server):
    """A fresh server on port 0 (huge_writes.py's), with what these scenarios read."""

    def request(self, method, path, body=None, timeout=120):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024

    def unsent(self):
        _, body = self.request("GET", "/metrics")
        found = re.search(r"^hearth_http_unsent_bytes (\S+)$", body.decode(), re.M)
        return int(float(found.group(1))) if found else None


def encoded(messages, first_segment):
    """The query of a poll carrying `messages` (each small enough for one segment)."""
    parts = []
    for index, message in enumerate(messages):
        text = base64.b64encode(json.dumps(message).encode()).decode().replace("+", "-").replace("/", "_").replace("=", ".")
        parts.append(f"seg{index}={first_segment + index}&ts{index}=1&d{index}={text}")
    return "&".join(parts)


def start(server):
    status, body = server.request("GET", "/.lp?start=t&ser=1&cb=7&v=5")
    if status != 200:
        return None, status
    found = START_CALL.search(body.decode())
    return (found.group(1), found.group(2)), status


def hold(server, paths):
    """A session whose one poll carries a `g` read of each path; never polled again."""
    session, status = start(server)
    if session is None:
        return None
    reads = [{"t": "d", "d": {"r": n + 1, "a": "g", "b": {"p": path, "q": {}}}} for n, path in enumerate(paths)]
    server.request("GET", f"/.lp?id={session[0]}&pw={session[1]}&ser=2&{encoded(reads, 0)}")
    return session


def trim(server, path):
    """One read of over 1 MiB, then a wait: the server's memory trimmer (MemoryTrimmer,
    after any exchange that large) gives what was freed back to the system, so RSS shows
    what is held rather than what glibc keeps of freed answers."""
    server.request("GET", path + ".json")
    time.sleep(2)


def still_open(server, sessions):
    open_ = ended = 0
    for id_, pw in sessions:
        status, _ = server.request("GET", f"/.lp?id={id_}&pw={pw}&ser=9")
        open_ += status == 200
        ended += status == 404
    return open_, ended


def scenario(binary, name):
    server = Server(binary)
    meter = runcpu.Meter(server.proc.pid)
    try:
        if name == "starts":
            statuses = {}
            began = time.time()
            for _ in range(STARTS):
                _, status = start(server)
                statuses[status] = statuses.get(status, 0) + 1
            return {"scenario": name, "starts": STARTS, "statuses": statuses, "seconds": round(time.time() - began, 2),
                    **meter.read()}
        if name == "small":
            server.request("PUT", "/big.json", json.dumps("x" * (SMALL_MIB << 20)))
            count, paths = SESSIONS, ["/big", "/big"]
        else:
            for part in range(LARGE_MIB // 8):
                server.request("PUT", f"/large/p{part}.json", json.dumps("y" * (8 << 20)))
            server.request("PUT", "/tiny.json", "1")
            count, paths = LARGE_SESSIONS, ["/tiny", "/large"]
        time.sleep(SETTLE)
        trim(server, paths[-1])
        before = server.rss_mib()
        began = time.time()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:  # well inside the sessions' 60 s
            sessions = [s for s in pool.map(lambda _: hold(server, paths), range(count)) if s]
        held_in = time.time() - began
        time.sleep(SETTLE)
        trim(server, paths[-1])
        after = server.rss_mib()
        unsent = server.unsent()
        open_, ended = still_open(server, sessions)
        return {"scenario": name, "sessions": count, "started": len(sessions), "rss_before_mib": round(before, 1),
                "rss_after_mib": round(after, 1), "mib_per_session": round((after - before) / max(1, count), 2),
                "unsent_bytes": unsent, "still_open": open_, "ended": ended, "seconds_to_hold": round(held_in, 1),
                **meter.read()}
    finally:
        server.stop()


if __name__ == "__main__":
    for binary in sys.argv[1:]:
        for name in ("small", "large", "starts"):
            print(json.dumps({"binary": binary, **scenario(binary, name)}), flush=True)

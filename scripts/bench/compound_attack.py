#!/usr/bin/env python3
"""Cut points under one child, for scripts/bench/compound_attack.sh: `/bench/attack/list =
{"a": {"k000000": "v", …}}` with N children, and one wire listen whose `ch` puts a cut
at each of them (every hash wrong, so every range differs), while another client listens
to `/bench/attack/tick`. Per N: the server's CPU time (utime + stime of its pid, from
/proc) from sending the listen until both its answer and the tick push arrived, this
client's own CPU over the same span and the load average before it; what the
listen got (`rm` with its range count, or the whole value as `d`); and the tick push's
delay: from sending the tick write (right after the listen) to its push at the other
client, which waits behind the answer when that runs on the fan-out queue.

With LARGE (env, sizes like "100000 400000"): for each size, a value of that many
children under `a` listened to once without `ch` and once with one cut (both ranges
differing): the server's CPU for each, and which answer the second got, to show what
`CompoundHash.workBudget` lets through.

Usage: compound_attack.py <base url> <hearth pid> <N> [<N> …]
"""
import json
import os
import sys
import threading
import time
import urllib.request

from websockets.sync.client import connect

sys.dont_write_bytecode = True
import runcpu  # noqa: E402
from wire_frames import Joiner  # noqa: E402

BASE, PID, COUNTS = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3:]]


def cpu_seconds():
    return runcpu.process_cpu_seconds(PID)


def rest(method, path, body=None):
    request = urllib.request.Request(BASE + path, data=None if body is None else json.dumps(body).encode(), method=method)
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read() or b"null")


def put_children(keys):
    """`/bench/attack/list = {"a": {key: "v", …}}`, written in PATCHes of 20,000 children
    (a REST body has a size limit)."""
    rest("DELETE", "/bench/attack/list.json?print=silent")
    for start in range(0, len(keys), 20000):
        rest("PATCH", "/bench/attack/list/a.json?print=silent", {key: "v" for key in keys[start:start + 20000]})


class Socket:
    """One /.ws connection; a thread records when each message arrived."""

    def __init__(self):
        self.ws = connect(BASE.replace("http://", "ws://") + "/.ws?v=5&ns=bench", max_size=None, open_timeout=60)
        self.ws.recv(timeout=60)  # handshake
        self.messages, self.cond, self.number = [], threading.Condition(), 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        joiner = Joiner()
        try:
            while True:
                frame = joiner.add(self.ws.recv())
                if frame is None:
                    continue
                with self.cond:
                    self.messages.append((time.perf_counter(), json.loads(frame)["d"]))
                    self.cond.notify_all()
        except Exception:
            pass

    def send(self, action, body):
        self.number += 1
        self.ws.send(json.dumps({"t": "d", "d": {"r": self.number, "a": action, "b": body}}, separators=(",", ":")))
        return self.number

    def wait(self, predicate, timeout=900):
        deadline = time.perf_counter() + timeout
        with self.cond:
            while True:
                for at, message in self.messages:
                    if predicate(message):
                        return at, message
                if not self.cond.wait(deadline - time.perf_counter()):
                    raise TimeoutError("no such message")


def main():
    watcher = Socket()
    listened = watcher.send("q", {"p": "/bench/attack/tick", "h": ""})
    watcher.wait(lambda m: m.get("r") == listened)
    results = []
    for count in COUNTS:
        keys = [f"k{i:06d}" for i in range(count + 1)]
        put_children(keys)
        ch = {"hs": ["x"] * (count + 1), "ps": ["/a/" + key for key in keys[:count]]}
        listener = Socket()
        load_before = runcpu.load_average()
        before, client_before = cpu_seconds(), runcpu.driver_cpu_seconds()
        number = listener.send("q", {"p": "/bench/attack/list", "h": "", "ch": ch})
        written = time.perf_counter()
        rest("PUT", "/bench/attack/tick.json?print=silent", count)
        pushed, _ = watcher.wait(lambda m: m.get("a") == "d" and m["b"].get("d") == count and m["b"]["p"].endswith("tick"))
        listener.wait(lambda m: m.get("r") == number)
        _, answer = listener.wait(lambda m: m.get("a") in ("d", "rm") and m["b"]["p"].endswith("list"))
        spent, client_spent = cpu_seconds() - before, runcpu.driver_cpu_seconds() - client_before
        sent = "rm of %d ranges" % len(answer["b"]["d"]) if answer["a"] == "rm" else "whole value (d)"
        results.append({"cuts": count, "request_bytes": len(json.dumps(ch)), "server_cpu_s": round(spent, 3),
                        "client_cpu_s": round(client_spent, 3), "load_before": load_before,
                        "tick_push_delay_ms": round(1000 * (pushed - written), 1), "answer": sent})
        print(json.dumps(results[-1]), flush=True)
        listener.ws.close()
    for size in [int(n) for n in os.environ.get("LARGE", "").split()]:
        keys = [f"k{i:07d}" for i in range(size)]
        put_children(keys)
        row = {"children": size}
        for mode, ch in (("without_ch", None), ("one_cut", {"hs": ["x", "x"], "ps": ["/a/" + keys[size // 2]]})):
            listener = Socket()
            body = {"p": "/bench/attack/list", "h": ""}
            if ch:
                body["ch"] = ch
            before = cpu_seconds()
            number = listener.send("q", body)
            listener.wait(lambda m: m.get("r") == number)
            _, answer = listener.wait(lambda m: m.get("a") in ("d", "rm") and m["b"]["p"].endswith("list"))
            row[mode + "_cpu_s"] = round(cpu_seconds() - before, 3)
            row[mode + "_answer"] = answer["a"]
            listener.ws.close()
        print(json.dumps(row), flush=True)
    watcher.ws.close()


if __name__ == "__main__":
    main()

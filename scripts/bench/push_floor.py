#!/usr/bin/env python3
"""push_floor.sh's table: per transport and round, each server's CPU per delivered push,
Hearth's over the floor's, and the latencies and client CPU beside them."""
import json
import statistics
import sys


def per_push_us(r):
    """Server CPU µs per delivered push (user + system, all threads, write window)."""
    if not (r.get("server_cpu_pct") and r.get("window_s") and r.get("events_delivered")):
        return None
    return r["server_cpu_pct"] / 100.0 * r["window_s"] / r["events_delivered"] * 1e6


def fmt(v, nd=2):
    return "–" if v is None else "%.*f" % (nd, v)


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    transports = sorted({r["kind"] for r in rows}, key=lambda k: (k != "wire_fanout", k))
    print("| transport | round | µs per push: Hearth | floor | Hearth ÷ floor | delivered: Hearth / floor | "
          "send→recv p99 ms: Hearth / floor | server CPU %: Hearth / floor | client CPU %: Hearth / floor | other processes % | "
          "write acknowledged p50 ms: Hearth / floor | load before: Hearth / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in transports:
        name = "wire" if kind == "wire_fanout" else "SSE"
        ratios, hearth_us, floor_us = [], [], []
        for rnd in sorted({r["round"] for r in rows if r["kind"] == kind}):
            cell = {r["server"]: r for r in rows if r["kind"] == kind and r["round"] == rnd}
            h, f = cell.get("hearth", {}), cell.get("floor", {})
            hu, fu = per_push_us(h), per_push_us(f)
            ratio = hu / fu if hu and fu else None
            if hu:
                hearth_us.append(hu)
            if fu:
                floor_us.append(fu)
            if ratio:
                ratios.append(ratio)
            print("| %s | %d | %s | %s | **%s** | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s |" % (
                name, rnd, fmt(hu), fmt(fu), fmt(ratio),
                fmt(h.get("delivery_ratio"), 4), fmt(f.get("delivery_ratio"), 4),
                fmt(h.get("lat_send_p99_ms"), 1), fmt(f.get("lat_send_p99_ms"), 1),
                fmt(h.get("server_cpu_pct"), 1), fmt(f.get("server_cpu_pct"), 1),
                fmt(h.get("client_cpu_pct"), 1), fmt(f.get("client_cpu_pct"), 1),
                fmt(h.get("foreign_cpu_pct"), 1), fmt(f.get("foreign_cpu_pct"), 1),
                fmt(h.get("write_ack_p50_ms"), 1), fmt(f.get("write_ack_p50_ms"), 1),
                fmt(h.get("load_before")), fmt(f.get("load_before"))))
        if ratios:
            print("| %s | median | %s | %s | **%s** | | | | | | | |" % (
                name, fmt(statistics.median(hearth_us)), fmt(statistics.median(floor_us)), fmt(statistics.median(ratios))))
    print()
    print("µs per push: the server's CPU seconds (user + system, every thread) over the write window, "
          "divided by the pushes delivered. The floor sends each push with one send() per connection "
          "and nothing else; on loopback its cost includes the client's TCP input and wake-up, which "
          "run inside send(), unless the run split the cores (SPLIT_CPUS=1, the cores line above).")


if __name__ == "__main__":
    main(sys.argv[1])

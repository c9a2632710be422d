#!/usr/bin/env python3
"""Markdown summary of harness.py result lines (stdlib only), with ratios.

  summarize.py RESULTS.jsonl [--ratio 'LABEL=TARGET:SCENARIO/TARGET:SCENARIO[>=MIN]'] ...

Table: one row per (target, scenario, conns): median (min-max) over the runs of req/s,
median p50/p99 latency, server / wrk / other-process CPU (% of one core; the machine
has 200 %), socket errors and non-2xx answers summed over the runs.
Runs that other processes disturbed (other CPU >= --quiet, default $BENCH_QUIET_PCT or 10,
the harness's own threshold) are left out of the medians when at least one clean run
exists; the runs column then says e.g. "3 (1 disturbed, left out)".
Each --ratio prints median req/s of the first over the second (and p50/p99 of the first
over the second); with >=MIN it also prints PASS/FAIL against that minimum.

Result lines of the harness's `sse` scenario (kind "sse") get their own tables, one row
per (writes/s, N, target), medians over runs: send->recv and ack->recv p50/p99, last-of-N
p99, events/s, delivered %, KiB per stream, and, with --sse-pair A/B (e.g.
hearth/pocketbase), a ratio table per (writes/s, N): latency B/A, events/s A/B, KiB per
stream B/A (above 1 = A is faster / leaner).
Written for Hearth's scripts/bench/ (not part of the team's load harness).
"""
import argparse
import json
import os
import statistics
import sys
from collections import OrderedDict


def fnum(v, nd=None):
    if v is None:
        return "–"
    if nd is not None:
        return "%.*f" % (nd, v)
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def med(rs, key):
    vals = [r.get(key) for r in rs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def drop_disturbed(rs, quiet):
    """(runs to use, note for the runs column)."""
    clean = [r for r in rs if r.get("foreign_cpu_pct", 0) < quiet]
    bad = len(rs) - len(clean)
    if bad and clean:
        return clean, "%d (%d disturbed, left out)" % (len(rs), bad)
    if bad:
        return rs, "%d (all disturbed!)" % len(rs)
    return rs, str(len(rs))


def span(rs, key, nd=None, scale=1.0):
    """median, with (min–max) when the runs differ."""
    vals = [r[key] * scale for r in rs if r.get(key) is not None]
    if not vals:
        return "–"
    m = statistics.median(vals)
    if len(vals) == 1 or min(vals) == max(vals):
        return fnum(m, nd)
    return "%s (%s–%s)" % (fnum(m, nd), fnum(min(vals), nd), fnum(max(vals), nd))


def sse_tables(sse_rows, names, pair, quiet):
    use = {}
    print("| writes/s | N | target | runs | streams ready | send→recv p50 / p99 ms | ack→recv p50 / p99 ms "
          "| last of N p99 ms | events/s | delivered | lost streams | KiB per stream | RSS MiB before → with N → peak "
          "| write ack p50 ms | writes/s sent | open all N s | server / client / other CPU % | load before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(sse_rows, key=lambda k: (k[0], k[1], k[2])):
        rate, n, t = key
        rs, note = drop_disturbed(sse_rows[key], quiet)
        use[key] = rs
        ready = "%s / %d" % ("–".join(sorted({str(r["subscribers_ready"]) for r in rs})), n)
        delivered = [100.0 * r["delivery_ratio"] for r in rs if r.get("delivery_ratio") is not None]
        mib = lambda k: fnum(med(rs, k) / 1024.0, 1) if med(rs, k) else "–"  # noqa
        print("| %g | %d | %s | %s | %s | %s / **%s** | %s / **%s** | %s | %s | %s | %d | **%s** | %s → %s → %s "
              "| %s | %s | %s | %s / %s / %s | %s |" % (
                  rate, n, names.get(t, t), note, ready,
                  span(rs, "lat_send_p50_ms"), span(rs, "lat_send_p99_ms"),
                  span(rs, "lat_ack_p50_ms"), span(rs, "lat_ack_p99_ms"),
                  span(rs, "fanout_all_p99_ms"), span(rs, "events_per_s", 0),
                  ("%.2f %%" % min(delivered)) if delivered else "–",
                  sum(r.get("lost_streams", 0) for r in rs),
                  span(rs, "rss_per_conn_kib"),
                  mib("rss_before_kib"), mib("rss_subscribed_kib"), mib("rss_peak_kib"),
                  span(rs, "write_ack_p50_ms"), fnum(med(rs, "write_rate_achieved")),
                  fnum(med(rs, "connect_all_s")),
                  fnum(med(rs, "server_cpu_pct"), 0), fnum(med(rs, "client_cpu_pct"), 0),
                  fnum(med(rs, "foreign_cpu_pct"), 1), span(rs, "load_before")))
    print()
    print("Cells: median (min–max) over runs; 'delivered' is the lowest run. send→recv counts from the write's"
          " scheduled send time, ack→recv from the writer's HTTP response (negative: the event arrived before the"
          " ack); last of N = per write, until the last subscriber had it. KiB per stream = (RSS with N idle"
          " streams open − RSS of the fresh server before) / N.")
    if not pair or "/" not in pair:
        return
    a_t, b_t = pair.split("/", 1)
    an, bn = names.get(a_t, a_t), names.get(b_t, b_t)
    print()
    print("| writes/s | N | send→recv p50 %s/%s | send→recv p99 %s/%s | ack→recv p99 %s/%s | last of N p99 %s/%s "
          "| events/s %s/%s | KiB per stream %s/%s |" % ((bn, an) * 4 + (an, bn) + (bn, an)))
    print("|---|---|---|---|---|---|---|---|")
    for rate, n in sorted({(k[0], k[1]) for k in use}):
        ra, rb = use.get((rate, n, a_t)), use.get((rate, n, b_t))
        if not ra or not rb:
            print("| %g | %d | missing results | | | | | |" % (rate, n))
            continue

        def ratio(key, inverse=False):
            x, y = med(ra, key), med(rb, key)
            if x is None or y is None or x <= 0 or y <= 0:
                return "n/a (%s vs %s)" % (fnum(x), fnum(y))
            return "**%.2f×**" % ((x / y) if inverse else (y / x))
        print("| %g | %d | %s | %s | %s | %s | %s | %s |" % (
            rate, n, ratio("lat_send_p50_ms"), ratio("lat_send_p99_ms"), ratio("lat_ack_p99_ms"),
            ratio("fanout_all_p99_ms"), ratio("events_per_s", inverse=True), ratio("rss_per_conn_kib")))
    print()
    print("Ratios > 1 favour %s (latency and memory: %s's value over %s's; events/s: %s's over %s's)."
          " n/a: a value is ≤ 0 (e.g. an event that arrives before the write's ack)." % (an, bn, an, an, bn))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--ratio", action="append", default=[])
    ap.add_argument("--names", default="", help="comma list target=display name")
    ap.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
    ap.add_argument("--sse-pair", default="", help="A/B: ratio table of sse results, target A vs target B")
    a = ap.parse_args()
    names = dict(x.split("=", 1) for x in a.names.split(",") if "=" in x)

    rows = OrderedDict()
    sse_rows = OrderedDict()
    for path in a.results:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r.get("kind") == "sse":
                    sse_rows.setdefault((r["write_rate"], r["conc"], r["target"]), []).append(r)
                if r.get("kind") != "http":
                    continue
                rows.setdefault((r["target"], r["scenario"], r["conc"]), []).append(r)
    if sse_rows:
        sse_tables(sse_rows, names, a.sse_pair, a.quiet)
        if not rows:
            return 0
        print()
    if not rows:
        sys.exit("no http results in %s" % ", ".join(a.results))
    runs_note = {}
    for k, rs in rows.items():
        clean = [r for r in rs if r.get("foreign_cpu_pct", 0) < a.quiet]
        bad = len(rs) - len(clean)
        if bad and clean:
            runs_note[k] = "%d (%d disturbed, left out)" % (len(rs), bad)
            rows[k] = clean
        elif bad:
            runs_note[k] = "%d (all disturbed!)" % len(rs)
        else:
            runs_note[k] = str(len(rs))

    print("| target | scenario | conns | runs | req/s median (min–max) | p50 ms | p99 ms "
          "| server CPU % | server CPU µs/req | wrk CPU % | other CPU % | errors | non-2xx | load before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (t, s, c), rs in rows.items():
        rps = [r["rps"] for r in rs]
        rng = "" if len(rps) == 1 else " (%s–%s)" % (fnum(min(rps), 0), fnum(max(rps), 0))
        us = [r["server_cpu_pct"] / 100.0 / r["rps"] * 1e6 for r in rs if r.get("server_cpu_pct") and r["rps"]]
        print("| %s | %s | %d | %s | **%s**%s | %s | %s | %s | %s | %s | %s | %d | %d | %s |" % (
            names.get(t, t), s, c, runs_note[(t, s, c)], fnum(statistics.median(rps), 0), rng,
            fnum(med(rs, "p50_ms")), fnum(med(rs, "p99_ms")),
            fnum(med(rs, "server_cpu_pct"), 0), fnum(statistics.median(us) if us else None),
            fnum(med(rs, "wrk_cpu_pct"), 0), fnum(med(rs, "foreign_cpu_pct"), 1),
            sum(r.get("errors", 0) for r in rs), sum(r.get("non2xx", 0) for r in rs), span(rs, "load_before")))

    if a.ratio:
        print()
        print("| ratio | conns | req/s | p50 latency | p99 latency | verdict |")
        print("|---|---|---|---|---|---|")
    failed = False
    for spec in a.ratio:
        label, expr = spec.split("=", 1)
        minimum = None
        if ">=" in expr:
            expr, m = expr.split(">=", 1)
            minimum = float(m)
        num, den = [tuple(x.split(":", 1)) for x in expr.split("/", 1)]
        concs = sorted({k[2] for k in rows if k[:2] == num} & {k[2] for k in rows if k[:2] == den})
        if not concs:
            print("| %s | – | missing results | | | |" % label)
            failed = failed or minimum is not None
            continue
        for c in concs:
            rn, rd = rows[num + (c,)], rows[den + (c,)]
            ratio = statistics.median([r["rps"] for r in rn]) / statistics.median([r["rps"] for r in rd])
            lat = []
            for k in ("p50_ms", "p99_ms"):
                x, y = med(rn, k), med(rd, k)
                lat.append("%.2f×" % (x / y) if x and y else "–")
            verdict = ""
            if minimum is not None:
                ok = ratio >= minimum
                failed = failed or not ok
                verdict = "%s (needs ≥ %.2f)" % ("PASS" if ok else "FAIL", minimum)
            print("| %s | %d | **%.2f×** | %s | %s | %s |" % (label, c, ratio, lat[0], lat[1], verdict))
    print()
    print("CPU columns: server CPU µs/req = server CPU seconds / requests (lower is leaner, and less"
          " dependent on wrk sharing the cores); other columns: %% of one core over the run (the machine has %d %%); 'other' = processes that are"
          " neither the server nor the load generator. Latency ratios > 1 mean the first is slower."
          % (100 * (os.cpu_count() or 1)))
    if failed:
        print("\nAT LEAST ONE RATIO IS BELOW ITS MINIMUM (see 'verdict').")
    return 0


if __name__ == "__main__":
    sys.exit(main())

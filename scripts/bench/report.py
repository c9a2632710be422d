#!/usr/bin/env python3
"""One table for scripts/bench/run: Hearth vs PocketBase (and nginx) on every figure of
the comparison, with ratios, Hearth's targets, an optional section of docs/bench/history.md and a PNG chart.

  report.py --dir RESULTS_DIR [--date D] [--command CMD] [--quick]
            [--benchmarks docs/bench/history.md --chart-ref ratios-D.png]
            [--chart PNG] [--table-out FILE]

Reads the result lines (JSONL) the bench scripts wrote into RESULTS_DIR:
  compare.jsonl   compare.sh      kind "http", targets hearth / pocketbase, list get update create
  compare-nocache.jsonl  compare.sh with HEARTH_READ_CACHE_BYTES=0, list only (context rows)
  streams.jsonl   streams.sh      kind "sse", targets hearth / pocketbase, N subscribers
  startup.jsonl   run (harness.py startup)  kind "startup", targets hearth / pocketbase
  baseline.jsonl  http_baseline.sh (SCENARIOS=none)  kind "http", hearth:healthz vs nginx-healthz:healthz
and run.meta (machine facts, one per line), failed (names of parts that failed, if any).
A missing file only leaves its rows as "missing".

Every figure gets one row: Hearth's value, the peer's (PocketBase, or nginx for the HTTP
layer), and a ratio oriented so that > 1 always means Hearth is better: higher-is-better
figures (req/s, events/s) are Hearth/peer, lower-is-better ones (latency, memory, start
time) peer/Hearth. Rows with a target (Hearth's goal against its peer) are marked met / missed:
  list, get      >= 3x req/s, and a lower p99 (p99 ratio > 1)
  create, update >= 2x req/s
  stream delivery p99 at 1,000 subscribers <= 1/2 of PocketBase's (ratio >= 2)
  memory per open stream <= 1/10 of PocketBase's (ratio >= 10)
  idle memory, start to first answered request: no worse (ratio >= 0.95: 5 % for noise)
  HTTP layer (GET /healthz) >= 0.6x nginx serving the same bytes from a static file
Values are medians over runs. As in summarize.py, runs that other processes disturbed
(other CPU >= --quiet, default $BENCH_QUIET_PCT or 10 %) are left out when a clean run
exists; a row whose runs were all disturbed says so.

Stdlib only, except the chart (--chart), which needs matplotlib (scripts/bench/run installs
it into a cached venv outside the repo and runs this file with that venv's python).
Written for Hearth's scripts/bench/ (not part of the team's load harness).
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
from summarize import drop_disturbed  # noqa: E402

# "No worse" (idle memory, start time) allows 5 % for measurement noise: two RSS readings of
# the same idle server differ by about that much; the table states it.
NO_WORSE = 0.95
NO_WORSE_TEXT = "no worse (≥ 0.95×: within 5 % noise)"


def load(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def median_of(rs, key):
    vals = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


class Row:
    """One figure. better: 'higher' or 'lower'; target: (op, value) or None."""

    def __init__(self, group, short, label, unit, better, hearth, peer, peer_name, target=None, target_text="",
                 runs="", note="", disturbed=False):
        self.group, self.short, self.label, self.unit, self.better = group, short, label, unit, better
        self.hearth, self.peer, self.peer_name = hearth, peer, peer_name
        self.target, self.target_text, self.runs, self.note, self.disturbed = target, target_text, runs, note, disturbed
        self.skipped = False

    @property
    def ratio(self):
        h, p = self.hearth, self.peer
        if h is None or p is None or h <= 0 or p <= 0:
            return None
        return h / p if self.better == "higher" else p / h

    @property
    def direction(self):
        short = "PB" if self.peer_name == "PocketBase" else self.peer_name
        return "Hearth/%s" % short if self.better == "higher" else "%s/Hearth" % short

    @property
    def verdict(self):
        if self.skipped:
            return "skipped"
        if self.hearth is None or self.peer is None:
            return "missing"
        if not self.target:
            return "context"
        r = self.ratio
        if r is None:
            return "n/a"
        op, v = self.target
        return "met" if (r > v if op == ">" else r >= v) else "missed"


def fmt(v, unit):
    if v is None:
        return "–"
    if unit in ("req/s", "events/s"):
        return "{:,.0f}".format(v)
    if unit == "MiB":
        return "%.1f" % v
    if unit == "KiB":
        return "%.2f" % v
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fratio(v):
    """2 decimals; 3 near 1, where 0.997 and 1.004 should not both read 1.00."""
    return "%.3f" % v if 0.9 <= v < 1.1 else "%.2f" % v


def runs_note(note_h, note_p):
    return "%s / %s" % (note_h, note_p)


def side(rs, quiet, foreign_key="foreign_cpu_pct"):
    """(runs to use, note, all disturbed?) for one target's runs."""
    if not rs:
        return [], "0", False
    if foreign_key != "foreign_cpu_pct":
        rs = [dict(r, foreign_cpu_pct=r.get(foreign_key) or 0.0) for r in rs]
    use, note = drop_disturbed(rs, quiet)
    return use, note, "all disturbed" in note


def http_rows(recs, quiet):
    rows = []
    spec = [("list", "GET one user's 20 favourites (list)", 3.0, True),
            ("get", "GET one favourite (get)", 3.0, True),
            ("create", "POST a favourite (create)", 2.0, False),
            ("update", "PATCH one favourite's note (update)", 2.0, False)]
    for scen, what, need, p99_target in spec:
        h, nh, dh = side([r for r in recs if r.get("kind") == "http" and r["target"] == "hearth" and r["scenario"] == scen], quiet)
        p, np_, dp = side([r for r in recs if r.get("kind") == "http" and r["target"] == "pocketbase" and r["scenario"] == scen], quiet)
        errs = sum(r.get("errors", 0) + r.get("non2xx", 0) for r in h + p)
        note = ("%d socket errors / non-2xx answers in the kept runs" % errs) if errs else ""
        common = dict(runs=runs_note(nh, np_), disturbed=dh or dp, note=note)
        rows.append(Row("HTTP (authenticated, %d conns)" % (h[0]["conc"] if h else 64), "%s req/s" % scen,
                        "%s — req/s" % what, "req/s",
                        "higher", median_of(h, "rps"), median_of(p, "rps"), "PocketBase",
                        (">=", need), "≥ %g×" % need, **common))
        rows.append(Row("HTTP (authenticated, %d conns)" % (h[0]["conc"] if h else 64), "%s p99" % scen,
                        "%s — p99 ms" % what, "ms",
                        "lower", median_of(h, "p99_ms"), median_of(p, "p99_ms"), "PocketBase",
                        (">", 1.0) if p99_target else None, "lower p99 (> 1×)" if p99_target else "", **common))
    return rows


def nocache_rows(recs, quiet):
    """list with Hearth's read cache off (compare-nocache.jsonl): context, no target."""
    h, nh, dh = side([r for r in recs if r.get("kind") == "http" and r["target"] == "hearth" and r["scenario"] == "list"], quiet)
    p, np_, dp = side([r for r in recs if r.get("kind") == "http" and r["target"] == "pocketbase" and r["scenario"] == "list"], quiet)
    if not h and not p:
        return []
    common = dict(runs=runs_note(nh, np_), disturbed=dh or dp,
                  note="HEARTH_READ_CACHE_BYTES=0: every read rebuilds the subtree from SQLite (a first read after a write)")
    group = "HTTP, read cache off (Hearth), same run"
    return [Row(group, "list req/s, cache off", "GET one user's 20 favourites (list), cache off — req/s", "req/s",
                "higher", median_of(h, "rps"), median_of(p, "rps"), "PocketBase", **common),
            Row(group, "list p99, cache off", "GET one user's 20 favourites (list), cache off — p99 ms", "ms",
                "lower", median_of(h, "p99_ms"), median_of(p, "p99_ms"), "PocketBase", **common)]


def sse_rows(recs, quiet):
    rows = []
    recs = [r for r in recs if r.get("kind") == "sse"]
    cells = sorted({(r["write_rate"], r["conc"]) for r in recs})
    ns = sorted({n for _, n in cells})
    p99_n = 1000 if 1000 in ns else (ns[0] if ns else None)
    for rate, n in cells:
        h, nh, dh = side([r for r in recs if r["target"] == "hearth" and (r["write_rate"], r["conc"]) == (rate, n)], quiet)
        p, np_, dp = side([r for r in recs if r["target"] == "pocketbase" and (r["write_rate"], r["conc"]) == (rate, n)], quiet)
        group = "Streams, N = {:,} subscribers, {:g} write/s".format(n, rate)
        common = dict(runs=runs_note(nh, np_), disturbed=dh or dp)
        p99_note = "" if n == 1000 else ("target stated for N = 1,000" if n == p99_n else "")
        sn = "streams N={:,}".format(n) + ("" if len({c[0] for c in cells}) == 1 else " @%g w/s" % rate)
        rows.append(Row(group, sn + " send→recv p50", "delivery send→recv p50 ms", "ms", "lower",
                        median_of(h, "lat_send_p50_ms"), median_of(p, "lat_send_p50_ms"), "PocketBase", **common))
        rows.append(Row(group, sn + " send→recv p99", "delivery send→recv p99 ms", "ms", "lower",
                        median_of(h, "lat_send_p99_ms"), median_of(p, "lat_send_p99_ms"), "PocketBase",
                        (">=", 2.0) if n == p99_n else None, "≤ ½ (≥ 2×)" if n == p99_n else "",
                        note=p99_note, **common))
        rows.append(Row(group, sn + " ack→recv p99", "ack→recv p99 ms", "ms", "lower",
                        median_of(h, "lat_ack_p99_ms"), median_of(p, "lat_ack_p99_ms"), "PocketBase",
                        note="from the write's HTTP response; PocketBase acks after its fan-out (≤ 0 → n/a)",
                        **common))
        dl = [100.0 * r["delivery_ratio"] for r in h + p if r.get("delivery_ratio") is not None]
        lost = sum(r.get("lost_streams", 0) for r in h + p)
        rows.append(Row(group, sn + " events/s", "events/s delivered", "events/s", "higher",
                        median_of(h, "events_per_s"), median_of(p, "events_per_s"), "PocketBase",
                        note=("lowest delivered %.2f %%; %d lost streams" % (min(dl), lost)) if dl else "", **common))
        rows.append(Row(group, sn + " KiB per stream", "memory per open idle stream KiB", "KiB", "lower",
                        median_of(h, "rss_per_conn_kib"), median_of(p, "rss_per_conn_kib"), "PocketBase",
                        (">=", 10.0), "≤ 1/10 (≥ 10×)", **common))
    return rows


def startup_rows(recs, quiet):
    rs = [r for r in recs if r.get("kind") == "startup"]
    h, nh, dh = side([r for r in rs if r["target"] == "hearth"], quiet, "foreign_cpu_pct_before")
    p, np_, dp = side([r for r in rs if r["target"] == "pocketbase"], quiet, "foreign_cpu_pct_before")
    kib = lambda v: None if v is None else v / 1024.0  # noqa: E731
    common = dict(runs=runs_note(nh, np_), disturbed=dh or dp)
    failed = [r for r in rs if r.get("startup_ms") is None]
    note = ("%d start(s) never answered" % len(failed)) if failed else ""
    group = "Start and idle (seeded data, fresh process per run)"
    return [
        Row(group, "start → first answer", "start → first answered authenticated request ms", "ms", "lower",
            median_of(h, "startup_ms"), median_of(p, "startup_ms"), "PocketBase", (">=", NO_WORSE), NO_WORSE_TEXT,
            note=note, **common),
        Row(group, "idle memory", "idle memory MiB (RSS 3 s after the first answer)", "MiB", "lower",
            kib(median_of(h, "rss_idle_kib")), kib(median_of(p, "rss_idle_kib")), "PocketBase", (">=", NO_WORSE),
            NO_WORSE_TEXT, **common),
    ]


def baseline_rows(recs, quiet):
    rs = [r for r in recs if r.get("kind") == "http"]
    h, nh, dh = side([r for r in rs if r["target"] == "hearth" and r["scenario"] == "healthz"], quiet)
    s, ns, ds = side([r for r in rs if r["target"] == "nginx-healthz" and r["scenario"] == "healthz"], quiet)
    m, nm, dm = side([r for r in rs if r["target"] == "nginx-healthz" and r["scenario"] == "healthz_mem"], quiet)
    group = "HTTP layer alone: GET /healthz (15 B) vs nginx"
    return [
        Row(group, "healthz req/s vs nginx static", "req/s vs nginx static file", "req/s", "higher", median_of(h, "rps"), median_of(s, "rps"),
            "nginx", (">=", 0.6), "≥ 0.6×", runs=runs_note(nh, ns), disturbed=dh or ds),
        Row(group, "healthz p99 vs nginx static", "p99 ms vs nginx static file", "ms", "lower", median_of(h, "p99_ms"), median_of(s, "p99_ms"),
            "nginx", runs=runs_note(nh, ns), disturbed=dh or ds),
        Row(group, "healthz req/s vs nginx memory", "req/s vs nginx from memory (`return 200`)", "req/s", "higher", median_of(h, "rps"),
            median_of(m, "rps"), "nginx", runs=runs_note(nh, nm), disturbed=dh or dm),
    ]


MARK = {"met": "✅ met", "missed": "❌ missed", "context": "context", "n/a": "n/a", "missing": "missing",
        "skipped": "skipped (SKIP)"}


def table(rows):
    out = ["| figure | Hearth | PocketBase / nginx | ratio (> 1 = Hearth better) | ratio is | target | verdict "
           "| runs Hearth / peer | notes |",
           "|---|---|---|---|---|---|---|---|---|"]
    group = None
    for r in rows:
        if r.group != group:
            group = r.group
            out.append("| **%s** | | | | | | | | |" % group)
        ratio = "**%s×**" % fratio(r.ratio) if r.ratio is not None else ("n/a" if r.hearth is not None and r.peer is not None else "–")
        peer = fmt(r.peer, r.unit) + (" (nginx)" if r.peer_name == "nginx" else "")
        verdict = MARK[r.verdict] + (" (disturbed)" if r.disturbed and r.verdict not in ("missing", "skipped") else "")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r.label, fmt(r.hearth, r.unit), peer, ratio, r.direction, r.target_text or "–", verdict, r.runs, r.note))
    return "\n".join(out)


def chart(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = [r for r in rows if r.ratio is not None]
    if not rs:
        print("no ratios to chart", file=sys.stderr)
        return False
    labels = [r.short for r in rs]
    colors = {"met": "#2e7d32", "missed": "#c62828"}
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(rs) + 1.9))
    y = list(range(len(rs)))[::-1]
    # bars grow from 1 (parity): right = Hearth better, left = Hearth worse
    ax.barh(y, [r.ratio - 1.0 for r in rs], left=1.0, color=[colors.get(r.verdict, "#9e9e9e") for r in rs],
            height=0.65)
    for yi, r in zip(y, rs):
        text = "%s×%s" % (fratio(r.ratio), " (disturbed)" if r.disturbed else "")
        if r.target:
            ax.plot([r.target[1]], [yi], marker="|", markersize=16, color="black", mew=2)
            text += "  (target %s %g×)" % (r.target[0].replace(">=", "≥"), r.target[1])
        x = max(r.ratio, 1.0, r.target[1] if r.target else 0) * 1.06
        ax.text(x, yi, text, va="center", fontsize=8)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    lo = min(0.3, min(r.ratio for r in rs) / 1.5)
    hi = max(200.0, max(r.ratio for r in rs) * 12.0)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=colors["met"], label="target met"), Patch(color=colors["missed"], label="target missed"),
                       Patch(color="#9e9e9e", label="context (no target)")], loc="lower right", fontsize=8)
    ax.set_xlim(lo, hi)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("ratio, > 1 = Hearth better (higher-is-better figures Hearth/peer, lower-is-better peer/Hearth);"
                  " | = target", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.25)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="the run's results directory")
    ap.add_argument("--date", default="", help="date and time of the run (UTC), for the titles")
    ap.add_argument("--command", default="scripts/bench/run")
    ap.add_argument("--quick", action="store_true", help="a QUICK=1 smoke run: say so in every title")
    ap.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
    ap.add_argument("--hearth-sync", default=os.environ.get("HEARTH_SYNC", "full"))
    ap.add_argument("--chart", help="write the ratio chart (PNG) here (needs matplotlib)")
    ap.add_argument("--chart-ref", help="path of the chart relative to the --benchmarks file, for the section")
    ap.add_argument("--benchmarks", help="append the section to this file (docs/bench/history.md)")
    ap.add_argument("--table-out", help="also write the printed section here")
    a = ap.parse_args()

    d = a.dir
    meta = open(os.path.join(d, "run.meta")).read().splitlines() if os.path.exists(os.path.join(d, "run.meta")) else []
    failed = open(os.path.join(d, "failed")).read().split() if os.path.exists(os.path.join(d, "failed")) else []
    skipped = open(os.path.join(d, "skipped")).read().split() if os.path.exists(os.path.join(d, "skipped")) else []
    rows = []
    for part, build, name in (("http", http_rows, "compare.jsonl"), ("http-nocache", nocache_rows, "compare-nocache.jsonl"),
                              ("streams", sse_rows, "streams.jsonl"),
                              ("startup", startup_rows, "startup.jsonl"), ("nginx", baseline_rows, "baseline.jsonl")):
        part_rows = build(load(os.path.join(d, name)), a.quiet)
        for r in part_rows:
            r.skipped = part in skipped
        rows += part_rows

    targeted = [r for r in rows if r.target]
    met = sum(r.verdict == "met" for r in targeted)
    missed = [r for r in targeted if r.verdict == "missed"]
    disturbed = [r for r in rows if r.disturbed]
    smoke = " — QUICK smoke run, not a measurement" if a.quick else ""

    chart_ok = False
    if a.chart:
        try:
            chart_ok = chart(rows, a.chart, "Hearth vs PocketBase / nginx, %s%s" % (a.date, smoke))
        except ImportError:
            print("matplotlib is not installed for %s; no chart" % sys.executable, file=sys.stderr)
        if chart_ok:
            print("chart: %s" % a.chart, file=sys.stderr)

    sync = a.hearth_sync
    lines = ["## Hearth vs PocketBase and nginx, all figures in one run — %s%s" % (a.date, smoke), ""]
    lines += ["```sh", a.command, "```", ""]
    if meta:
        lines += ["    " + m for m in meta] + [""]
    lines += [
        "**Durability:** Hearth synchronous=%s (%s); PocketBase synchronous=NORMAL (its default: SQLite WAL, no"
        " fsync per commit). Both sides authenticate every request and apply per-user owner-only rules (Hearth:"
        " the reference `rules.json` with ID tokens; PocketBase: JWT + list/view/update rules)."
        % (sync, "an fsync per group commit, its default" if sync == "full" else "no fsync per commit, like PocketBase"),
        "The servers alternate run by run (HTTP, streams) and start by start (startup); a fresh server process per"
        " stream run and per start. Values: medians over the kept runs.",
        "**Read cache:** Hearth runs with its read cache on (the default, 64 MiB): repeated plain GETs of an"
        " unchanged path are answered from the rendered body; every request is still authenticated and judged by"
        " the rules, and every write drops the entries it touches before it is acknowledged. The \"cache off\" rows"
        " (HEARTH_READ_CACHE_BYTES=0) show reads that all go to SQLite. PocketBase has no such cache.",
        "",
        table(rows),
        "",
        "Targets: **%d met, %d missed**%s%s." % (
            met, len(missed), (" (" + ", ".join(r.short for r in missed) + ")") if missed else "",
            (", %d without a result (missing, skipped or n/a)" % (len(targeted) - met - len(missed)))
            if len(targeted) > met + len(missed) else ""),
    ]
    if disturbed:
        lines.append("**%d row(s) rest on runs that other processes disturbed** (other CPU ≥ %g %% in every run):"
                     " treat them as indications only." % (len(disturbed), a.quiet))
    if failed:
        lines.append("**Parts that failed:** %s (their rows say \"missing\"; see the run's log)." % ", ".join(failed))
    if skipped:
        lines.append("Parts skipped (SKIP): %s." % ", ".join(skipped))
    if chart_ok and a.chart_ref:
        lines += ["", "![Ratios, > 1 = Hearth better](%s)" % a.chart_ref]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.table_out:
        with open(a.table_out, "w") as f:
            f.write(text)
    if a.benchmarks:
        with open(a.benchmarks) as f:
            old = f.read()
        with open(a.benchmarks, "a") as f:
            f.write(("" if old.endswith("\n\n") else "\n" if old.endswith("\n") else "\n\n") + text)
        print("appended this section to %s" % a.benchmarks, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Helpers for scripts/bench/scaling.sh (stdlib only): seeding big data sets through
`hearth import`, holding N streams open during a wrk run, and the Markdown report.

  scaling.py accounts --base URL --readers R --writers W --out ACCOUNTS.json
      Sign up R + W + 1 anonymous accounts (POST /v1/accounts:signUp, as hearth_setup.py
      --auth does) on a running Hearth: readers, writers, the SSE user, with ID tokens.
  scaling.py data --accounts ACCOUNTS.json --favourites F --out DATA.json --fixtures FX.json
      Write the import file: {"users": {<uid>: {"favorites": {<push id>: favourite}}}},
      20 favourites per user (--per-user), F in all, so F/20 users: the R readers (each
      with a full 20) and made-up users without accounts, in key order. Every favourite has the
      shape of the reference workload's (targets/hearth.json 'put' body, hearth_setup.py):
      id, name, note, createdAt, createdBy, latitude, longitude, with the 20 places of that
      body. Keys are push ids (time-ordered), written in key order like a Firebase or
      `hearth export` file; the file is written as a stream (memory does not grow with F).
      FX.json: the fixtures harness.py reads (hearth_setup.py's keys: readers with their
      20 ids, writers, sse_user).
  scaling.py check --base URL --fixtures FX.json
      Spot checks on the started server: a reader's list is its 20 seeded favourites, one
      favourite reads back, another user's list is refused (rules), a writer starts empty.
  scaling.py hold --target T.json --fixtures FX.json --streams N --server-pid P --out R.jsonl ...
      Open N streams (harness.py's SSE subscriber, the SSE user's favourites, live after
      their first `put`), then run wrk on one scenario (create) while they stay open and
      idle (the writes go to the writers' favourites, which no stream watches); append
      a harness-style 'http' result line with streams_open / streams_ready / lost streams.
  scaling.py report --dir RESULTS_DIR [--command CMD] [--quick]
      The Markdown section (stdout and RESULTS_DIR/scaling.md) from scaling.jsonl (this
      script's and harness.py's result lines), streams.jsonl (streams.sh HEARTH_ONLY=1)
      and scaling.meta.
Written for Hearth's scripts/bench/ (not part of the team's load harness).
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import harness  # noqa: E402
from hearth_setup import Client, uid_for  # noqa: E402

PUSH_CHARS = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"  # ASCII order


def push_id(ms, rnd):
    """A Firebase push id: 8 chars of time (ms), 12 random; ascending with ms."""
    out = []
    for _ in range(8):
        out.append(PUSH_CHARS[ms % 64])
        ms //= 64
    return "".join(reversed(out)) + "".join(rnd.choice(PUSH_CHARS) for _ in range(12))


# ---------------------------------------------------------------- accounts


def cmd_accounts(a):
    c = Client(a.base)
    t0 = time.time()

    def account():
        _, s = c.call("POST", "/v1/accounts:signUp", b'{"returnSecureToken":true}')
        return {"uid": s["localId"], "token": s["idToken"], "ids": []}

    out = {"readers": [account() for _ in range(a.readers)],
           "writers": [account() for _ in range(a.writers)],
           "sse_user": account(),
           "base_url": a.base,
           "auth": "Bearer ID tokens of anonymous accounts, reference rules",
           "created": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(a.out, "w") as f:
        json.dump(out, f)
    print("signed up %d readers, %d writers and the SSE user in %.1fs" % (a.readers, a.writers, time.time() - t0))


# ---------------------------------------------------------------- data


def places(target):
    """The 20 places (name, latitude, longitude) of the reference 'put' body."""
    cfg = harness.load_json(target)
    body = harness.render(cfg["scenarios"]["put"]["body"], {"uid": "u", "seq": 0, "rand": "x", "now_ms": 0})
    return [(f["name"], f["latitude"], f["longitude"]) for f in json.loads(body).values()]


def cmd_data(a):
    acc = harness.load_json(a.accounts)
    per = a.per_user
    n_users = math.ceil(a.favourites / per)
    readers = acc["readers"]
    if len(readers) > a.favourites // per:
        sys.exit("%d readers need %d favourites; only %d asked for" % (len(readers), len(readers) * per, a.favourites))
    spots = places(a.target)
    rnd = random.Random("scaling-%d" % a.favourites)
    uids = [r["uid"] for r in readers] + [uid_for("filler", i) for i in range(n_users - len(readers))]
    counts = {u: per for u in uids}
    if a.favourites % per:
        counts[uids[-1]] = a.favourites % per  # the last made-up user holds the rest
    reader_ids = {r["uid"]: None for r in readers}
    # createdAt: a year ago onwards, one ms apart per favourite, so every push id is unique
    # and ascending in the order written per user
    t0 = time.time()
    ms = int(time.time() * 1000) - 365 * 86400 * 1000
    written = 0
    with open(a.out, "w") as f:
        f.write('{"users":{')
        for ui, uid in enumerate(sorted(uids)):  # key order, like an export
            favs = []
            keys = []
            for i in range(counts[uid]):
                ms += 1
                key = push_id(ms, rnd)
                name, lat, lon = spots[i % len(spots)]
                # members in key order too (createdAt createdBy id latitude longitude name note)
                favs.append('"%s":{"createdAt":%d,"createdBy":"%s","id":"%s","latitude":%s,"longitude":%s,'
                            '"name":%s,"note":"Favourite %d, seeded"}'
                            % (key, ms, uid, key, repr(lat), repr(lon), json.dumps(name), i + 1))
                keys.append(key)
            f.write('%s"%s":{"favorites":{%s}}' % ("," if ui else "", uid, ",".join(favs)))
            written += len(favs)
            if uid in reader_ids:
                reader_ids[uid] = keys
        f.write("}}\n")
    assert written == a.favourites, (written, a.favourites)
    for r in readers:
        r["ids"] = sorted(reader_ids[r["uid"]])
    with open(a.fixtures, "w") as f:
        json.dump(acc, f)
    size = os.path.getsize(a.out)
    print("wrote %d favourites of %d users (%d with accounts) to %s: %.1f MiB in %.1fs"
          % (written, n_users, len(readers), a.out, size / 1048576.0, time.time() - t0))


# ---------------------------------------------------------------- check


def cmd_check(a):
    fx = harness.load_json(a.fixtures)
    c = Client(a.base)
    r0, w0 = fx["readers"][0], fx["writers"][0]
    _, favs = c.call("GET", "/users/%s/favorites.json" % r0["uid"], token=r0["token"])
    assert sorted(favs) == r0["ids"] and len(favs) == 20, "reader 0's favourites differ from the seeded ones"
    one = favs[r0["ids"][0]]
    assert one["id"] == r0["ids"][0] and one["createdBy"] == r0["uid"], one
    _, back = c.call("GET", "/users/%s/favorites/%s.json" % (r0["uid"], r0["ids"][-1]), token=r0["token"])
    assert back == favs[r0["ids"][-1]], back
    rl = fx["readers"][-1]
    _, last = c.call("GET", "/users/%s/favorites.json?shallow=true" % rl["uid"], token=rl["token"])
    assert sorted(last) == rl["ids"], "the last reader's favourites differ from the seeded ones"
    c.call("GET", "/users/%s/favorites.json" % r0["uid"], expect=(401,), token=w0["token"])
    _, empty = c.call("GET", "/users/%s/favorites.json" % w0["uid"], token=w0["token"])
    assert empty is None, empty
    print("checked: readers' favourites as seeded, single favourite, another user's refused, empty writer")


# ---------------------------------------------------------------- hold N streams + wrk


def cmd_hold(a):
    harness._raise_nofile()
    cfg, fx = harness.load_json(a.target), harness.load_json(a.fixtures)
    host, port = harness.target_addr(cfg)
    url = "http://%s:%d/" % (host, port)
    ctx = mp.get_context("fork")
    prefix = "hold%d-" % random.randrange(10 ** 8)
    procs = max(1, min(a.procs, a.streams)) if a.streams else 0
    rss0 = harness.proc_rss_kib(a.server_pid)
    workers, ready, failed, msgs, t_open = [], 0, 0, [], 0.0
    try:
        for i in range(procs):
            share = a.streams // procs + (1 if i < a.streams % procs else 0)
            parent, child = ctx.Pipe()
            p = ctx.Process(target=harness.subscriber_proc,
                            args=(cfg, fx, share, prefix, child, a.open_conc, a.ready_timeout), daemon=True)
            p.start()
            workers.append((p, parent))
        for p, c in workers:
            if not c.poll(a.ready_timeout + 60):
                raise RuntimeError("subscriber worker did not report")
            _, r, f, dt, fm = c.recv()
            ready, failed, t_open, msgs = ready + r, failed + f, max(t_open, dt), msgs + fm
        print("%d of %d streams open in %.1fs%s" % (ready, a.streams, t_open, (" (failures: %s)" % msgs[:3]) if failed else ""),
              file=sys.stderr, flush=True)
        time.sleep(a.settle)
        rss_open = harness.proc_rss_kib(a.server_pid)
        plan = os.path.join(a.workdir, "plan-hold-%s.bin" % a.scenario)
        harness.write_plan(harness.make_plan(cfg, fx, a.scenario, a.pool), plan)
        t = min(a.threads, a.conns)
        if a.warmup > 0:
            harness.run_wrk_once(url, plan, a.conns, t, a.warmup, 10, None)
        for run in range(1, a.runs + 1):
            for attempt in range(a.retries + 1):
                harness.wait_quiet(a.quiet, a.quiet_wait, a.server_pid)
                res = harness.run_wrk_once(url, plan, a.conns, t, a.duration, 10, a.server_pid)
                if res["foreign_cpu_pct"] < a.quiet:
                    break
                print("run disturbed by %.0f%% foreign CPU; %s" % (
                    res["foreign_cpu_pct"], "retrying" if attempt < a.retries else "keeping it (flagged)"),
                    file=sys.stderr, flush=True)
            lost = 0
            for p, c in workers:
                c.send("count")
                lost += c.recv()[2]
            res.update({"kind": "http", "target": a.label, "scenario": a.scenario, "attempts": attempt + 1,
                        "conc": a.conns, "threads": t, "run": run, "duration_s": a.duration,
                        "streams_open": a.streams, "streams_ready": ready, "streams_failed": failed,
                        "streams_lost": lost, "open_all_s": round(t_open, 2), "rss_before_kib": rss0,
                        "rss_streams_kib": rss_open, "server_rss_kib": harness.proc_rss_kib(a.server_pid)})
            harness.append_result(a.out, res)
    finally:
        for p, c in workers:
            try:
                c.send("stop")
                c.poll(30) and c.recv()
            except (OSError, EOFError):
                pass
            p.join(10)
            if p.is_alive():
                p.terminate()
                p.join(5)


# ---------------------------------------------------------------- report


from report import load  # noqa: E402  (the same result-file reader as the run's report)


def keep(rs, quiet, key="foreign_cpu_pct"):
    """(runs to use, all disturbed?): disturbed runs are left out when a clean one exists."""
    clean = [r for r in rs if (r.get(key) or 0) < quiet]
    return (clean, False) if clean else (rs, bool(rs))


def med(rs, key, scale=1.0):
    vals = [r[key] * scale for r in rs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def num(v, kind="ms"):
    if v is None:
        return "–"
    if kind == "int":
        return "{:,.0f}".format(v)
    if kind == "pct":
        return "%.2f" % v if v < 100 else "100"
    if kind == "mib":
        return "%.1f" % v
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def cpu_table(recs, rows, first, match, quiet):
    """The load average before each kept run and the CPU of the server and of the load
    generator (wrk, or the subscriber processes and the writer), in % of one core, medians
    over a cell's kept runs; one line per cell that has runs."""
    L = ["The machine during each cell: the 1-minute load average as its run started, and the"
         " CPU of the server and of the load generator in % of one core (medians over the kept runs).", "",
         "| %s | run | load before | Hearth CPU %% | load generator CPU %% |" % first, "|---|---|---|---|---|"]
    for key, shown in rows:
        for kind, scen in [("sse", None), ("http", "list"), ("http", "get"), ("http", "update"), ("http", "create")]:
            rs, _ = keep([r for r in recs if r.get("kind") == kind and match(r, key)
                          and (scen is None or r.get("scenario") == scen)], quiet)
            if not rs:
                continue
            gen = [r.get("wrk_cpu_pct", r.get("loadgen_cpu_pct")) for r in rs]
            L.append("| %s | %s | %s | %s | %s |" % (
                shown, "streams" if kind == "sse" else scen, num(med(rs, "load_before")), num(med(rs, "server_cpu_pct")),
                num(statistics.median(g for g in gen if g is not None) if any(g is not None for g in gen) else None)))
    return L + [""] if len(L) > 4 else []


def cmd_report(a):
    d = a.dir
    recs = load(os.path.join(d, "scaling.jsonl"))
    sse_recs = [r for r in load(os.path.join(d, "streams.jsonl")) if r.get("kind") == "sse" and r.get("target") == "hearth"]
    meta = open(os.path.join(d, "scaling.meta")).read().splitlines() if os.path.exists(os.path.join(d, "scaling.meta")) else []
    q = a.quiet
    flagged = []  # cells whose runs were all disturbed

    def mark(disturbed, what):
        if disturbed:
            flagged.append(what)
            return " †"
        return ""

    smoke = " — QUICK smoke run, not a measurement" if a.quick else ""
    L = ["## Scaling curves: data size and number of streams — %s%s" % (a.date, smoke), "",
         "```sh", a.command, "```", ""]
    L += ["    " + m for m in meta] + [""]

    # ---- data size
    seeds = sorted((r for r in recs if r.get("kind") == "seed"), key=lambda r: r["size"])
    sizes = [r["size"] for r in seeds]
    if sizes:
        L += ["### Data size", "",
              "A fresh server per size, on a data directory seeded with `hearth import` (a JSON file in the"
              " export format: /users/<uid>/favorites/<push id>, 20 favourites per user, the reference"
              " workload's favourite shape). Only the readers, writers and the SSE user have accounts (signed up"
              " anonymously before the import); the other users exist only as data. Reference rules.json, every"
              " request with its user's ID token.", "",
              "Setup and memory:", "",
              "| favourites | users (with accounts) | import file MiB | write file s | `hearth import` s | database MiB "
              "| start → listening s | RSS MiB seeded (idle) | RSS MiB after the runs |",
              "|---|---|---|---|---|---|---|---|---|"]
        for s in seeds:
            L.append("| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s |" % (
                num(s["size"], "int"), num(s["users"], "int"), num(s["accounts"], "int"),
                num(s["file_bytes"] / 1048576.0, "mib"), num(s["gen_s"]), num(s["import_s"]),
                num(s["db_bytes"] / 1048576.0, "mib"), num(s.get("start_s")),
                num(s["rss_seeded_kib"] / 1024.0 if s.get("rss_seeded_kib") else None, "mib"),
                num(s["rss_after_kib"] / 1024.0 if s.get("rss_after_kib") else None, "mib")))
        L += ["", "Database MiB: hearth.sqlite and its WAL after the import (before the server starts). RSS: the"
              " server's resident memory after start and the spot checks, and after all the runs below.", ""]
        scen = ["list", "get", "update", "create"]
        hdr = ["favourites"]
        for sc in scen:
            hdr += ["%s req/s" % sc, "%s p99 ms" % sc]
        hdr += ["stream send→recv p50 ms", "stream send→recv p99 ms", "delivered %"]
        conns = sorted({r["conc"] for r in recs if r.get("kind") == "http" and str(r.get("target", "")).startswith("size-")})
        ssen = sorted({r["conc"] for r in recs if r.get("kind") == "sse"})
        L += ["Throughput and latency (wrk -c%s, %s; streams: %s subscribers on one user's favourites, 1 write/s;"
              " medians over the kept runs):" % ("/".join(map(str, conns)) or "?", "authenticated",
                                                  "/".join("{:,}".format(n) for n in ssen) or "?"), "",
              "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        notes = []
        for size in sizes:
            label = "size-%d" % size
            cells = [num(size, "int")]
            errs = 0
            for sc in scen:
                rs, dist = keep([r for r in recs if r.get("kind") == "http" and r.get("target") == label
                                 and r["scenario"] == sc], q)
                errs += sum(r.get("errors", 0) + r.get("non2xx", 0) for r in rs)
                m = mark(dist, "%s %s" % (label, sc))
                cells += [num(med(rs, "rps"), "int") + m, num(med(rs, "p99_ms")) + m]
            rs, dist = keep([r for r in recs if r.get("kind") == "sse" and r.get("size") == size], q)
            m = mark(dist, "%s streams" % label)
            cells += [num(med(rs, "lat_send_p50_ms")) + m, num(med(rs, "lat_send_p99_ms")) + m,
                      num(med(rs, "delivery_ratio", 100.0), "pct") + m]
            if errs:
                notes.append("{:,} favourites: {} socket errors / non-2xx answers".format(size, errs))
            L.append("| " + " | ".join(cells) + " |")
        L += ["", "Order per size: streams first (fresh server), then list, get, update, and create last, since"
              " create adds favourites (thousands per second: at the smallest size the data grows noticeably"
              " during that run). Reads and updates go to the readers' favourites (at most %s users of each"
              " size, spread over its key range), so their working set stays the same while the database grows:"
              " the curve shows the cost of a bigger database, not of a working set beyond the page cache."
              % "{:,}".format(max(s.get("readers", 0) for s in seeds))]
        L += [n + "." for n in notes]
        L.append("")
        L += ["Reads with the read cache off (`HEARTH_READ_CACHE_BYTES=0`, a fresh server on the same data after"
              " the runs above): every read goes to SQLite, so this is the storage's own curve.", "",
              "| favourites | list req/s | list p99 ms | get req/s | get p99 ms |", "|---|---|---|---|---|"]
        for size in sizes:
            label = "size-%d-nocache" % size
            cells = [num(size, "int")]
            for sc in ["list", "get"]:
                rs, dist = keep([r for r in recs if r.get("kind") == "http" and r.get("target") == label
                                 and r["scenario"] == sc], q)
                m = mark(dist, "%s %s" % (label, sc))
                cells += [num(med(rs, "rps"), "int") + m, num(med(rs, "p99_ms")) + m]
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
        L += cpu_table(recs, [("size-%d" % size, num(size, "int")) for size in sizes]
                       + [("size-%d-nocache" % size, num(size, "int") + ", read cache off") for size in sizes],
                       "favourites", lambda r, label: r.get("target") == label
                       or (r.get("kind") == "sse" and "size-%s" % r.get("size") == label), q)

    # ---- streams
    holds = [r for r in recs if r.get("kind") == "http" and r.get("target") == "streams-idle"]
    ns = sorted({r["conc"] for r in sse_recs} | {r["streams_open"] for r in holds})
    if ns:
        ref = next((m for m in meta if m.startswith("streams data:")), "")
        ref = ref.split(":", 1)[1].split("(")[0].strip() if ref else "1000 users x 20 favourites"
        L += ["### Number of streams", "",
              "Reference data size (%s). Delivery: streams.sh HEARTH_ONLY=1 — N subscribers on one user's"
              " favourites, that user writes 1 favourite/s, fresh server per run; send→recv from the write's"
              " scheduled send time; KiB per stream = (RSS with N idle streams − RSS of the fresh server) / N."
              " Writes with N streams open: N idle streams held on the SSE user's favourites while wrk creates"
              " favourites for the writers (paths no stream watches), a fresh server and data copy per N"
              " (data seeded with `hearth import`; for delivery streams.sh seeds the same size over HTTP)." % ref, "",
              "| streams N | ready | send→recv p50 ms | send→recv p99 ms | last of N p99 ms | events/s | delivered % "
              "| lost streams | KiB per stream | RSS MiB with N | create req/s with N idle streams | create p99 ms |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for n in ns:
            rs, dist = keep([r for r in sse_recs if r["conc"] == n], q)
            m = mark(dist, "streams N=%d delivery" % n)
            hs, hdist = keep([r for r in holds if r["streams_open"] == n], q)
            hm = mark(hdist, "streams N=%d create" % n)
            ready = "–"
            if rs:
                ready = "/".join(sorted({str(r["subscribers_ready"]) for r in rs}))
            elif hs:
                ready = "/".join(sorted({str(r["streams_ready"]) for r in hs}))
            lost = sum(r.get("lost_streams", 0) for r in rs) + sum(r.get("streams_lost", 0) for r in hs)
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                num(n, "int"), ready if n else "–",
                num(med(rs, "lat_send_p50_ms")) + (m if rs else ""), num(med(rs, "lat_send_p99_ms")) + (m if rs else ""),
                num(med(rs, "fanout_all_p99_ms")) + (m if rs else ""), num(med(rs, "events_per_s"), "int") + (m if rs else ""),
                num(med(rs, "delivery_ratio", 100.0), "pct"), lost if (rs or hs) else "–",
                num(med(rs, "rss_per_conn_kib")), num(med(rs, "rss_subscribed_kib", 1 / 1024.0), "mib"),
                num(med(hs, "rps"), "int") + (hm if hs else ""), num(med(hs, "p99_ms")) + (hm if hs else "")))
        L.append("")
        L.append("N = 0: no stream open (the write baseline). Ready: streams live (first `put` received) of N.")
        L.append("")
        L += cpu_table(sse_recs + holds, [(n, num(n, "int")) for n in ns], "streams N",
                       lambda r, n: (r["conc"] if r.get("kind") == "sse" else r.get("streams_open")) == n, q)
    if flagged:
        L.append("† every run of these cells was disturbed by other processes (other CPU ≥ %g %%): %s."
                 " Treat them as indications only." % (q, ", ".join(flagged)))
        L.append("")
    text = "\n".join(L).rstrip() + "\n"
    print(text)
    with open(os.path.join(d, "scaling.md"), "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    p = sp.add_parser("accounts")
    p.add_argument("--base", required=True)
    p.add_argument("--readers", type=int, default=1000)
    p.add_argument("--writers", type=int, default=50)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_accounts)

    p = sp.add_parser("data")
    p.add_argument("--accounts", required=True)
    p.add_argument("--favourites", type=int, required=True)
    p.add_argument("--per-user", type=int, default=20)
    p.add_argument("--target", default=os.path.join(HERE, "targets", "hearth.json"))
    p.add_argument("--out", required=True)
    p.add_argument("--fixtures", required=True)
    p.set_defaults(fn=cmd_data)

    p = sp.add_parser("check")
    p.add_argument("--base", required=True)
    p.add_argument("--fixtures", required=True)
    p.set_defaults(fn=cmd_check)

    p = sp.add_parser("hold")
    p.add_argument("--target", required=True)
    p.add_argument("--fixtures", required=True)
    p.add_argument("--streams", type=int, required=True)
    p.add_argument("--scenario", default="create")
    p.add_argument("--label", default="streams-idle")
    p.add_argument("--server-pid", type=int, required=True)
    p.add_argument("--conns", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--retries", type=int, default=3)
    p.add_argument("--pool", type=int, default=4096)
    p.add_argument("--procs", type=int, default=1, help="subscriber processes")
    p.add_argument("--open-conc", type=int, default=200)
    p.add_argument("--ready-timeout", type=float, default=120.0)
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
    p.add_argument("--quiet-wait", type=float, default=float(os.environ.get("BENCH_QUIET_WAIT", 300)))
    p.add_argument("--workdir", default=os.environ.get("BENCH_WORK", "/tmp"))
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_hold)

    p = sp.add_parser("report")
    p.add_argument("--dir", required=True)
    p.add_argument("--date", default=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    p.add_argument("--command", default="scripts/bench/scaling.sh")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--quiet", type=float, default=float(os.environ.get("BENCH_QUIET_PCT", 10)))
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()

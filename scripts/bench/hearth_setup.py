#!/usr/bin/env python3
"""Seed a running Hearth server (open to anonymous requests, empty data dir) for
scripts/bench/harness.py and write the fixtures file (stdlib only, http.client).

Written for this repo after the team's load harness's pocketbase_setup.py; the fixtures
have the same keys:
  readers:  [{uid, token, ids: [20 favourite keys]}]   list / get / put / update
  writers:  [{uid, token, ids: []}]                     create (so the readers' lists stay at 20)
  sse_user: {uid, token, ids: []}                       streams (streams.sh)

Every reader is seeded with the target's own "put" scenario body (the whole
20-favourite subtree), so the seed data has exactly the shape the PUT traffic writes
and the favourite keys come from one place (targets/hearth.json).

token is "" for everyone: accounts do not exist yet; the server runs with --no-rules
(older builds) or an open rules file, and the target config sends no auth header.
"""
import argparse
import http.client
import json
import os
import random
import string
import sys
import time
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import harness  # noqa: E402  (render() and the template conventions)


def uid_for(kind, i):
    # Firebase Auth uids are 28 alphanumerics; deterministic so runs are comparable.
    rnd = random.Random("%s-%d" % (kind, i))
    return "".join(rnd.choices(string.ascii_letters + string.digits, k=28))


class Client:
    def __init__(self, base):
        u = urlsplit(base)
        if u.hostname not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("refusing non-loopback Hearth address")
        self.conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)

    def call(self, method, path, body=None, expect=(200,), token=None):
        hdrs = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            hdrs["Authorization"] = "Bearer " + token
        self.conn.request(method, path, body=body, headers=hdrs)
        resp = self.conn.getresponse()
        raw = resp.read()
        if expect and resp.status not in expect:
            raise RuntimeError("%s %s -> %d %s" % (method, path, resp.status, raw[:300]))
        return resp.status, (json.loads(raw) if raw else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="http://127.0.0.1:PORT of a running hearth")
    ap.add_argument("--target", default=os.path.join(HERE, "targets", "hearth.json"))
    ap.add_argument("--readers", type=int, default=50)
    ap.add_argument("--writers", type=int, default=50)
    ap.add_argument("--out", required=True)
    ap.add_argument("--auth", action="store_true",
                    help="sign every user up anonymously (POST /v1/accounts:signUp) and use their ID tokens; "
                         "for a server with accounts serving the reference rules.json")
    a = ap.parse_args()

    cfg = harness.load_json(a.target)
    put = cfg["scenarios"]["put"]
    c = Client(a.base)

    t0 = time.time()
    readers = []
    def account(kind, i):
        if not a.auth:
            return uid_for(kind, i), ""
        _, session = c.call("POST", "/v1/accounts:signUp", b'{"returnSecureToken":true}')
        return session["localId"], session["idToken"]

    for i in range(a.readers):
        uid, token = account("reader", i)
        env = {"uid": uid, "seq": 0, "rand": "seed", "now_ms": int(time.time() * 1000)}
        body = harness.render(put["body"], env)
        sent = json.loads(body)
        c.call("PUT", harness.render(put["path"], env), body.encode(), token=token)
        _, back = c.call("GET", "/users/%s/favorites.json" % uid, token=token)
        if back != sent:
            raise RuntimeError("read-back of %s's favorites differs from what was written" % uid)
        readers.append({"uid": uid, "token": token, "ids": sorted(sent)})
    n_favs = sum(len(r["ids"]) for r in readers)
    print("seeded %d readers x %d favourites (%d) in %.1fs" % (len(readers), n_favs // max(1, len(readers)),
                                                            n_favs, time.time() - t0))

    # spot checks: one favourite, shallow list, a writer starts empty
    r0 = readers[0]
    _, one = c.call("GET", "/users/%s/favorites/%s.json" % (r0["uid"], r0["ids"][0]), token=r0["token"])
    assert one["id"] == r0["ids"][0] and one["createdBy"] == r0["uid"], one
    _, shallow = c.call("GET", "/users/%s/favorites.json?shallow=true" % r0["uid"], token=r0["token"])
    assert sorted(shallow) == r0["ids"], shallow
    writers = []
    for i in range(a.writers):
        uid, token = account("writer", i)
        writers.append({"uid": uid, "token": token, "ids": []})
    _, empty = c.call("GET", "/users/%s/favorites.json" % writers[0]["uid"], token=writers[0]["token"])
    assert empty is None, empty
    if a.auth:
        # The rules really apply: another user's favourites are refused.
        status, _ = c.call("GET", "/users/%s/favorites.json" % r0["uid"], expect=(401,), token=writers[0]["token"])
        print("checked: another user's favourites are refused (%d)" % status)
    sse_uid, sse_token = account("sse", 0)
    print("checked: single favourite, shallow list, empty writer")

    with open(a.out, "w") as f:
        json.dump({"readers": readers, "writers": writers,
                   "sse_user": {"uid": sse_uid, "token": sse_token, "ids": []},
                   "base_url": a.base,
                   "auth": "Bearer ID tokens of anonymous accounts, reference rules" if a.auth
                           else "none (anonymous; server opened with --no-rules or open rules)",
                   "created": time.strftime("%Y-%m-%d %H:%M:%S")}, f, indent=1)
    print("wrote", a.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# Copied from the team's load harness, unchanged
# except the path in the docstring (scripts/bench/harness.py).
"""Create the favorites collection, users, records and tokens on a running
PocketBase (>= 0.23 API), check the access rules, and write a fixtures file
for scripts/bench/harness.py.  Stdlib only.

Fixtures layout (the same keys any target's setup must write):
  readers:  [{uid, email, token, ids: [20 record ids]}]   list/get/update
  writers:  [{uid, email, token, ids: []}]                create
  sse_user: {uid, email, token, ids: []}                  SSE fan-out
"""
import argparse
import http.client
import json
import sys
import time
from urllib.parse import urlsplit

USERS_COLLECTION_ID = "_pb_users_auth_"  # PocketBase's built-in "users" auth collection

FAVORITES = {
    "name": "favorites",
    "type": "base",
    "fields": [
        {"name": "name", "type": "text", "required": True, "max": 200},
        {"name": "note", "type": "text", "max": 2000},
        {"name": "createdAt", "type": "number"},
        {"name": "createdBy", "type": "relation", "required": True,
         "collectionId": USERS_COLLECTION_ID, "maxSelect": 1, "cascadeDelete": True},
        {"name": "latitude", "type": "number"},
        {"name": "longitude", "type": "number"},
    ],
    "indexes": ["CREATE INDEX idx_favorites_createdBy ON favorites (createdBy)"],
    # each user sees and edits only the records they own
    "listRule": "createdBy = @request.auth.id",
    "viewRule": "createdBy = @request.auth.id",
    "createRule": "@request.auth.id != '' && @request.body.createdBy = @request.auth.id",
    "updateRule": "createdBy = @request.auth.id && "
                  "(@request.body.createdBy:isset = false || @request.body.createdBy = @request.auth.id)",
    "deleteRule": "createdBy = @request.auth.id",
}


class Client:
    def __init__(self, base):
        u = urlsplit(base)
        if u.hostname not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("refusing non-loopback PocketBase address")
        self.host, self.port = u.hostname, u.port or 80
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def call(self, method, path, body=None, token=None, expect=(200,)):
        hdrs = {"Content-Type": "application/json"}
        if token:
            hdrs["Authorization"] = token
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt:
                    raise
        out = json.loads(raw) if raw else None
        if expect and resp.status not in expect:
            raise RuntimeError("%s %s -> %d %s" % (method, path, resp.status, raw[:500]))
        return resp.status, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="http://127.0.0.1:8090")
    ap.add_argument("--admin-email", required=True)
    ap.add_argument("--admin-pass", required=True)
    ap.add_argument("--readers", type=int, default=50)
    ap.add_argument("--writers", type=int, default=50)
    ap.add_argument("--per-user", type=int, default=20)
    ap.add_argument("--password", default="bench-pass-123")
    ap.add_argument("--out")
    ap.add_argument("--set-log-days", type=int,
                    help="only change settings.logs.maxDays (0 = no request logging; PocketBase default 5) and exit")
    a = ap.parse_args()
    c = Client(a.base)

    _, auth = c.call("POST", "/api/collections/_superusers/auth-with-password",
                     {"identity": a.admin_email, "password": a.admin_pass})
    su = auth["token"]

    if a.set_log_days is not None:
        _, st = c.call("PATCH", "/api/settings", {"logs": {"maxDays": a.set_log_days}}, token=su)
        print("settings.logs.maxDays =", st["logs"]["maxDays"])
        return
    if not a.out:
        sys.exit("--out is required")

    st, _ = c.call("GET", "/api/collections/favorites", token=su, expect=None)
    if st == 200:
        c.call("DELETE", "/api/collections/favorites", token=su, expect=(204,))
    c.call("POST", "/api/collections", FAVORITES, token=su)
    print("created collection favorites")

    def make_user(email):
        c.call("POST", "/api/collections/users/records",
               {"email": email, "password": a.password, "passwordConfirm": a.password, "verified": True},
               token=su)
        _, r = c.call("POST", "/api/collections/users/auth-with-password",
                      {"identity": email, "password": a.password})
        return {"uid": r["record"]["id"], "email": email, "token": r["token"], "ids": []}

    t0 = time.time()
    readers = [make_user("reader%03d@bench.test" % i) for i in range(a.readers)]
    writers = [make_user("writer%03d@bench.test" % i) for i in range(a.writers)]
    sse_user = make_user("sse@bench.test")
    print("created %d users (password auth) in %.1fs" % (len(readers) + len(writers) + 1, time.time() - t0))

    t0 = time.time()
    for u in readers:
        for k in range(a.per_user):
            _, rec = c.call("POST", "/api/collections/favorites/records", {
                "name": "Favorite %d" % k, "note": "seed note %d" % k,
                "createdAt": int(time.time() * 1000), "createdBy": u["uid"],
                "latitude": 40.0 + k / 100.0, "longitude": -3.0 - k / 100.0}, token=u["token"])
            u["ids"].append(rec["id"])
    print("created %d favorites (as their owners) in %.1fs" % (a.readers * a.per_user, time.time() - t0))

    # --- access-rule checks ------------------------------------------------
    A, B = readers[0], readers[1]
    _, lst = c.call("GET", "/api/collections/favorites/records?perPage=1000", token=A["token"])
    assert lst["totalItems"] == a.per_user and all(r["createdBy"] == A["uid"] for r in lst["items"]), lst
    st, _ = c.call("GET", "/api/collections/favorites/records/" + B["ids"][0], token=A["token"], expect=None)
    assert st == 404, "A could read B's record: %d" % st
    st, _ = c.call("PATCH", "/api/collections/favorites/records/" + B["ids"][0], {"note": "x"},
                   token=A["token"], expect=None)
    assert st == 404, "A could update B's record: %d" % st
    st, _ = c.call("POST", "/api/collections/favorites/records",
                   {"name": "spoof", "createdBy": B["uid"]}, token=A["token"], expect=None)
    assert st in (400, 403), "A could create a record owned by B: %d" % st
    st, _ = c.call("PATCH", "/api/collections/favorites/records/" + A["ids"][0], {"createdBy": B["uid"]},
                   token=A["token"], expect=None)
    assert st in (400, 403, 404), "A could hand a record to B: %d" % st
    st, _ = c.call("GET", "/api/collections/favorites/records", expect=None)
    assert st == 200  # guests get an empty list (rule filters everything out)
    _, anon = c.call("GET", "/api/collections/favorites/records")
    assert anon["totalItems"] == 0, anon
    st, _ = c.call("DELETE", "/api/collections/favorites/records/" + B["ids"][0], token=A["token"], expect=None)
    assert st == 404, "A could delete B's record: %d" % st
    print("access rules verified: own list=%d, cross-user get/patch/delete=404, spoofed owner rejected, guest sees 0"
          % lst["totalItems"])

    with open(a.out, "w") as f:
        json.dump({"readers": readers, "writers": writers, "sse_user": sse_user,
                   "base_url": a.base, "created": time.strftime("%Y-%m-%d %H:%M:%S")}, f, indent=1)
    print("wrote", a.out)


if __name__ == "__main__":
    main()

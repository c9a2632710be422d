"""Our own Firebase wire-protocol client (docs/protocol/wire.md), driving a Hearth
binary over /.ws with the `websockets` package. Each mode runs one scenario, checks every
answer itself, prints `ok <check>` per passed check and exits 1 on the first failure.

Usage: wire_client.py <mode> <port>
Modes: handshake, listen_write, query, transaction, ondisconnect, reconnect, crash, revoke, reload, namespace, chunked, auth, failed_auth, lapse, bad_paths, oracle, limits,
       refusals, partials, neighbours, burst, backlog, ondisconnect_bytes, ondisconnect_auth_bytes, cross_node, start_over, lease_cut, pause, silent, emulator_namespaces,
       emulator_default_names
Every wait has a timeout (WAIT seconds); the whole run is bounded by the Swift test too.
"""
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.request

from websockets.sync.client import connect

WAIT = 20
PORT = int(sys.argv[2])
BASE = f"http://127.0.0.1:{PORT}"


def check(condition, name, detail=""):
    if not condition:
        print(f"FAILED {name}: {detail}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"ok {name}", flush=True)


def rest(method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def sign_up():
    status, body = rest("POST", "/v1/accounts:signUp", {"returnSecureToken": True})
    assert status == 200, body
    return body["idToken"], body["localId"]


def favorite(fid, uid, created):
    return {"id": fid, "name": fid.title(), "createdAt": created, "createdBy": uid, "latitude": 59.9, "longitude": 10.7}


class Client:
    """One connection: requests numbered from 1, answers matched by `r`, pushes kept in
    arrival order together with the answers (to check push-before-answer ordering)."""

    def __init__(self, namespace="demo", last_session=None, headers=None, port=None):
        extra = f"&ls={last_session}" if last_session else ""
        self.ws = connect(f"ws://127.0.0.1:{port or PORT}/.ws?v=5{extra}&ns={namespace}", open_timeout=WAIT, max_size=None,
                          additional_headers=headers)
        self.number = 0
        self.log = []  # every data-layer message received, in order
        self.handshake = self.recv()  # or, for a refused namespace, the shutdown
        self.cond = threading.Condition()
        self.closed = False
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.reader.start()

    def recv(self):
        return json.loads(self.ws.recv(timeout=WAIT))

    def read_loop(self):
        """Joins chunked messages as the SDKs do (docs/protocol/wire.md §2.1): a frame of at most 6 characters
        that is a number announces that many frames, concatenated into one message."""
        self.chunked = 0
        try:
            while True:
                frame = self.ws.recv()
                if len(frame) <= 6 and frame.isdigit():
                    frame = "".join(self.ws.recv() for _ in range(int(frame)))
                    self.chunked += 1
                message = json.loads(frame)
                with self.cond:
                    self.log.append(message)
                    self.cond.notify_all()
        except Exception:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def send_raw(self, text):
        self.ws.send(text)

    def request(self, action, body):
        self.number += 1
        number = self.number
        self.ws.send(json.dumps({"t": "d", "d": {"r": number, "a": action, "b": body}}))
        return number

    def wait_for(self, predicate, what):
        deadline = time.time() + WAIT
        with self.cond:
            while True:
                for index, message in enumerate(self.log):
                    if predicate(message):
                        return index, message
                remaining = deadline - time.time()
                if remaining <= 0:
                    raise AssertionError(f"timed out waiting for {what}; got {self.log}")
                self.cond.wait(remaining)

    def answer(self, number):
        index, message = self.wait_for(lambda m: m.get("t") == "d" and m["d"].get("r") == number, f"answer {number}")
        return index, message["d"]["b"]

    def call(self, action, body):
        return self.answer(self.request(action, body))[1]

    def push(self, action, predicate=lambda b: True, what="push"):
        """The first push `action` whose body satisfies `predicate`: (its index, its body)."""
        index, message = self.wait_for(
            lambda m: m.get("t") == "d" and "r" not in m["d"] and m["d"].get("a") == action and predicate(m["d"]["b"]), what)
        return index, message["d"]["b"]

    def pushes(self, action):
        with self.cond:
            return [m["d"]["b"] for m in self.log if m.get("t") == "d" and m["d"].get("a") == action]

    def close(self):
        self.ws.close()


def mode_handshake():
    c = Client()
    h = c.handshake
    check(h["t"] == "c" and h["d"]["t"] == "h", "handshake first", h)
    d = h["d"]["d"]
    check(abs(d["ts"] - time.time() * 1000) < 60_000, "handshake ts is server epoch ms", d)
    check(d["v"] == "5", "handshake v", d)
    check(d["h"] == f"127.0.0.1:{PORT}", "handshake h echoes the Host", d)
    check(isinstance(d["s"], str) and len(d["s"]) > 0, "handshake session id", d)
    c.send_raw(json.dumps({"t": "c", "d": {"t": "p", "d": {}}}))
    _, pong = c.wait_for(lambda m: m.get("t") == "c" and m["d"]["t"] == "o", "pong")
    check("d" in pong["d"], "pong carries d", pong)
    check(c.call("s", {"c": {"sdk.js.12-18-0": 1}}) == {"s": "ok", "d": ""}, "stats answered ok")
    c.send_raw("0")  # keep-alive: ignored, not a message
    check(c.call("appcheck", {"token": "x"})["s"] == "ok", "appcheck accepted as a no-op")
    bad = c.call("frobnicate", {})
    check(bad["s"] == "invalid_action" and isinstance(bad["d"], str) and bad["d"], "unknown action answered invalid_action", bad)
    zero = c.request("s", {})  # r 0 (Android) is answered too
    c.ws.send(json.dumps({"t": "d", "d": {"r": 0, "a": "s", "b": {}}}))
    _, z = c.wait_for(lambda m: m.get("t") == "d" and m["d"].get("r") == 0, "answer to r 0")
    check(z["d"]["b"]["s"] == "ok", "request number 0 answered")
    c.answer(zero)
    info = c.call("g", {"p": "/.info/serverTimeOffset", "q": {}})
    check(info == {"s": "ok", "d": None}, "a get of .info is answered ok with null", info)
    c.send_raw("not json")
    check(c.call("s", {})["s"] == "ok", "a malformed message does not end the connection")
    c.close()


def mode_listen_write():
    token, uid = sign_up()
    other_token, other = sign_up()
    a = Client()
    check(a.call("auth", {"cred": token})["s"] == "ok", "auth with a Hearth ID token")
    path = f"/users/{uid}/favorites"
    number = a.request("q", {"p": path, "h": ""})
    index_answer, answer = a.answer(number)
    index_data, data = a.push("d", lambda b: b["p"].rstrip("/") == path, "first data")
    check(answer == {"s": "ok", "d": {}}, "listen answered ok with an object", answer)
    check(index_data < index_answer, "the listen's data arrives before its ok", a.log)
    check(data["d"] is None, "nothing there yet", data)

    # A second connection of the same user sees the first one's writes.
    b = Client()
    b.call("auth", {"cred": token})
    check(b.call("q", {"p": path, "h": ""})["s"] == "ok", "second listener")

    put = a.request("p", {"p": f"{path}/oslo", "d": favorite("oslo", uid, {".sv": "timestamp"})})
    index_ok, ok = a.answer(put)
    check(ok["s"] == "ok", "put accepted", ok)
    index_push, pushed = a.push("d", lambda b: b["p"].endswith("/oslo"), "the put's own push")
    check(index_push < index_ok, "the writer's push arrives before its ok", a.log)
    check(isinstance(pushed["d"]["createdAt"], int) and pushed["d"]["createdAt"] > 1_600_000_000_000, "server timestamp resolved", pushed)
    _, seen = b.push("d", lambda b: b["p"].endswith("/oslo"), "the other connection sees it")
    check(seen["d"]["name"] == "Oslo", "another connection of the user sees the put", seen)

    merged = a.call("m", {"p": f"{path}/oslo", "d": {"name": "Oslo S", "latitude": 60.0}})
    check(merged["s"] == "ok", "merge accepted", merged)
    _, merge_push = b.push("m", lambda b: b["p"].endswith("/oslo"), "merge push")
    check(merge_push["d"] == {"name": "Oslo S", "latitude": 60.0}, "merge pushed as m with relative paths", merge_push)

    got = a.call("g", {"p": f"{path}/oslo/name", "q": {}})
    check(got == {"s": "ok", "d": "Oslo S"}, "get returns the value", got)

    # Rules: a failed .validate is refused with a string d, and nothing is pushed.
    before = len(b.pushes("d")) + len(b.pushes("m"))
    denied = a.call("p", {"p": f"{path}/rome", "d": favorite("rome", "someone-else", 1)})
    check(denied["s"] == "permission_denied" and isinstance(denied["d"], str) and denied["d"], "validate failure refused", denied)
    check(b.call("s", {})["s"] == "ok", "(sync)")
    check(len(b.pushes("d")) + len(b.pushes("m")) == before, "a refused write pushes nothing")

    # Another user may not listen to or read these favourites.
    c = Client()
    c.call("auth", {"cred": other_token})
    refused = c.call("q", {"p": path, "h": ""})
    check(refused["s"] == "permission_denied" and refused["d"], "listen on another user's data refused", refused)
    refused_get = c.call("g", {"p": path, "q": {}})
    check(refused_get["s"] == "permission_denied" and refused_get["d"], "get of another user's data refused", refused_get)

    # Unlisten stops pushes; delete is p with null.
    check(b.call("n", {"p": path})["s"] == "ok", "unlisten answered")
    check(a.call("p", {"p": f"{path}/oslo", "d": None})["s"] == "ok", "delete")
    a.push("d", lambda b: b["p"].endswith("/oslo") and b["d"] is None, "delete push")
    check(b.call("s", {})["s"] == "ok", "(sync)")
    check(not any(p["d"] is None for p in b.pushes("d") if p["p"].endswith("/oslo")), "no push after unlisten")
    for client in (a, b, c):
        client.close()


def mode_query():
    token, uid = sign_up()
    a = Client()
    a.call("auth", {"cred": token})
    path = f"/users/{uid}/favorites"
    for i, name in enumerate(["a", "b", "c"]):
        assert a.call("p", {"p": f"{path}/{name}", "d": favorite(name, uid, 1000 + i)})["s"] == "ok"
    number = a.request("q", {"p": path, "q": {"i": "createdAt", "l": 2, "vf": "r"}, "t": 7, "h": ""})
    _, answer = a.answer(number)
    check(answer["s"] == "ok" and "w" not in answer["d"], "indexed query listen ok without a warning", answer)
    _, first = a.push("d", lambda b: b.get("t") == 7, "tagged first window")
    check(sorted(first["d"].keys()) == ["b", "c"], "limitToLast(2) window", first)
    assert a.call("p", {"p": f"{path}/d", "d": favorite("d", uid, 2000)})["s"] == "ok"
    _, moved = a.push("d", lambda b: b.get("t") == 7 and "d" in (b["d"] or {}), "window after a newer child")
    check(sorted(moved["d"].keys()) == ["c", "d"], "a child enters and another leaves the window", moved)
    untagged = a.call("q", {"p": path, "q": {"i": "createdAt", "l": 1, "vf": "r"}, "h": ""})
    check(untagged["s"] == "invalid_action" and "tag" in untagged["d"], "a query with a limit but no tag is refused", untagged)
    unindexed = a.call("q", {"p": path, "q": {"i": "name", "l": 1, "vf": "l"}, "t": 8, "h": ""})
    check(unindexed["s"] == "ok" and unindexed["d"].get("w") == ["no_index"], "no_index warning for an unindexed child", unindexed)
    got = a.call("g", {"p": path, "q": {"i": "createdAt", "sp": 1001, "ep": 1001}})
    check(got["s"] == "ok" and list(got["d"].keys()) == ["b"], "get with equalTo", got)
    # Paging with startAt(value, key): two more children share c's createdAt; the page
    # after "c" starts at c and takes the next key at that value.
    for name in ["c2", "c1"]:
        assert a.call("p", {"p": f"{path}/{name}", "d": favorite(name, uid, 1002)})["s"] == "ok"
    page = a.call("g", {"p": path, "q": {"i": "createdAt", "sp": 1002, "sn": "c1", "l": 2, "vf": "l"}})
    check(page["s"] == "ok" and sorted(page["d"].keys()) == ["c1", "c2"], "startAt(value, key) breaks ties by key", page)
    after = a.call("g", {"p": path, "q": {"i": "createdAt", "sp": 1002, "sn": "c1", "sin": False, "l": 2, "vf": "l"}})
    check(after["s"] == "ok" and sorted(after["d"].keys()) == ["c2", "d"], "startAfter(value, key) leaves the key out", after)
    a.close()


def mode_transaction():
    """Two connections increment one counter N times each with the SDK's hash protocol:
    the end value is exactly 2N."""
    rounds = 25
    def worker(results):
        c = Client()
        c.call("q", {"p": "/open/counter", "h": ""})
        done = 0
        stale = 0
        while done < rounds:
            # The newest value this client has is the last push at the path.
            pushes = [p for p in c.pushes("d") if p["p"].rstrip("/") == "/open/counter"]
            current = pushes[-1]["d"] if pushes else None
            value = (current or 0) + 1
            h = "" if current is None else sdk_hash(current)
            answer = c.call("p", {"p": "/open/counter", "d": value, "h": h})
            if answer["s"] == "ok":
                done += 1
            elif answer["s"] == "datastale":
                stale += 1
            else:
                raise AssertionError(answer)
        results.append(stale)
        c.close()
    results = []
    threads = [threading.Thread(target=worker, args=(results,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(len(results) == 2, "both workers finished", results)
    status, value = rest("GET", "/open/counter.json")
    check(value == 2 * rounds, f"counter is exactly {2 * rounds}", value)
    c = Client()
    stale = c.call("p", {"p": "/open/counter", "d": 0, "h": "wrong"})
    check(stale["s"] == "datastale" and isinstance(stale["d"], str) and stale["d"], "a wrong hash is datastale", stale)
    # A value whose hash begins with "W/" (base64: about one in 4,096) matches its own hash.
    weak = next(f"w{i}" for i in range(1_000_000) if sdk_hash(f"w{i}").startswith("W/"))
    check(c.call("p", {"p": "/open/weak", "d": weak})["s"] == "ok", "a value hashing to W/... written")
    answer = c.call("p", {"p": "/open/weak", "d": "next", "h": sdk_hash(weak)})
    check(answer["s"] == "ok", "a hash beginning with W/ matches its value", answer)
    c.close()


def sdk_hash(value):
    import base64, hashlib, struct
    if isinstance(value, bool):
        pre = "boolean:" + ("true" if value else "false")
    elif isinstance(value, (int, float)):
        pre = "number:" + struct.pack(">d", float(value)).hex()
    elif isinstance(value, str):
        pre = "string:" + value
    else:
        raise ValueError(value)
    return base64.b64encode(hashlib.sha1(pre.encode()).digest()).decode()


def mode_ondisconnect():
    token, uid = sign_up()
    watcher = Client()
    watcher.call("q", {"p": "/open/presence", "h": ""})
    a = Client()
    a.call("auth", {"cred": token})
    check(a.call("p", {"p": f"/open/presence/{uid}", "d": {"online": True}})["s"] == "ok", "online")
    check(a.call("o", {"p": f"/open/presence/{uid}", "d": {"online": False, "at": {".sv": "timestamp"}}})["s"] == "ok", "onDisconnect set registered")
    check(a.call("o", {"p": f"/open/presence/{uid}/cancelled", "d": True})["s"] == "ok", "second onDisconnect registered")
    check(a.call("oc", {"p": f"/open/presence/{uid}/cancelled", "d": None})["s"] == "ok", "onDisconnect cancelled")
    denied = a.call("o", {"p": "/users/someone/favorites/x", "d": True})
    check(denied["s"] == "permission_denied", "onDisconnect checked against the rules when registered", denied)
    a.close()
    _, gone = watcher.push("d", lambda b: b["p"].endswith(f"/presence/{uid}") and b["d"] and b["d"].get("online") is False, "offline after close")
    check(isinstance(gone["d"]["at"], int), "server value resolved when it ran", gone)
    status, value = rest("GET", f"/open/presence/{uid}.json")
    check(value.get("online") is False and "cancelled" not in value, "the cancelled operation did not run", value)
    watcher.close()


def mode_ondisconnect_bytes():
    """Run with 1,000 bytes of onDisconnect operations a connection and 1,500 an address:
    each bound is crossed by one, cancelling or running operations gives their bytes back,
    and the ones kept run when their connection ends."""
    a = Client()
    check(a.call("o", {"p": "/open/odb/a1", "d": "x" * 600})["s"] == "ok", "600 bytes queued on a connection")
    over = a.call("o", {"p": "/open/odb/a2", "d": "y" * 600})
    check(over["s"] == "too_many_ondisconnect" and "on this connection" in over["d"], "past the connection's bytes", over)
    check(a.call("oc", {"p": "/open/odb/a1", "d": None})["s"] == "ok", "cancelled")
    check(a.call("o", {"p": "/open/odb/a2", "d": "y" * 600})["s"] == "ok", "after a cancel it fits")
    b = Client()
    check(b.call("o", {"p": "/open/odb/b1", "d": "z" * 600})["s"] == "ok", "another connection of the address")
    over = b.call("o", {"p": "/open/odb/b2", "d": "w" * 200})
    check(over["s"] == "too_many_ondisconnect" and "from your address" in over["d"], "past the address's bytes", over)
    watcher = Client()
    watcher.call("q", {"p": "/open/odb", "h": ""})
    a.close()
    watcher.push("d", lambda body: body["p"] == "/open/odb/a2" and body["d"] == "y" * 600, "a's operation ran")
    status, value = rest("GET", "/open/odb.json")
    check(status == 200 and sorted(value) == ["a2"], "only the operation kept ran", value)
    # a's bytes were given back when its connection ended: b's second fits now.
    answer = b.call("o", {"p": "/open/odb/b2", "d": "w" * 200})
    check(answer["s"] == "ok", "the address's bytes came back when a's connection ended", answer)
    b.close()
    watcher.push("d", lambda body: body["p"] == "/open/odb/b2", "b's operations ran")
    watcher.close()


def mode_ondisconnect_auth_bytes():
    """Run with 1,000 bytes of onDisconnect operations a connection: an operation's bytes
    count its registrant's auth too, which its record keeps beside it. Signed out, an
    operation of 300 bytes is counted at about 360 and two fit; signed in, its auth (the ID
    token's claims, about 350 bytes of JSON for an anonymous user) counts with each, so the
    second is refused."""
    token, uid = sign_up()
    anonymous = Client()
    for key in ("n1", "n2"):
        answer = anonymous.call("o", {"p": f"/open/oda/{key}", "d": "x" * 300})
        check(answer["s"] == "ok", f"signed out: {key} queued", answer)
    signed = Client()
    check(signed.call("auth", {"cred": token})["s"] == "ok", "signed in")
    check(signed.call("o", {"p": "/open/oda/s1", "d": "y" * 300})["s"] == "ok", "signed in: the first queued")
    over = signed.call("o", {"p": "/open/oda/s2", "d": "y" * 300})
    check(over["s"] == "too_many_ondisconnect" and "on this connection" in over["d"],
          "signed in: the second passes the connection's bytes with its auth", over)
    watcher = Client()
    watcher.call("q", {"p": "/open/oda", "h": ""})
    signed.close()
    anonymous.close()
    watcher.push("d", lambda body: body["p"] == "/open/oda/n2", "the signed-out operations ran")
    watcher.push("d", lambda body: body["p"] == "/open/oda/s1", "the signed-in one ran")
    status, value = rest("GET", "/open/oda.json")
    check(status == 200 and sorted(value) == ["n1", "n2", "s1"], "only the operations kept ran", value)
    watcher.close()


def mode_reconnect():
    """A client reconnecting with ls=<old session id> ends the old session first: its
    onDisconnect writes are in before the new session's first request is answered."""
    old = Client()
    session_id = old.handshake["d"]["d"]["s"]
    check(old.call("p", {"p": "/open/presence/me", "d": "online"})["s"] == "ok", "online")
    check(old.call("o", {"p": "/open/presence/me", "d": "offline"})["s"] == "ok", "onDisconnect registered")
    new = Client(last_session=session_id)
    got = new.call("g", {"p": "/open/presence/me", "q": {}})
    check(got == {"s": "ok", "d": "offline"}, "the old session's onDisconnect ran before the new session's first answer", got)
    check(wait_closed(old, "old session") in (1000, 1006, None), "the old session was closed")
    check(new.call("p", {"p": "/open/presence/me", "d": "online"})["s"] == "ok", "online again on the new session")
    new.close()


def mode_crash():
    """Registers onDisconnect operations, then SIGKILLs the server (pid in argv[3]) while
    the connection is open: the Swift test restarts it and checks that they ran."""
    import os, signal
    c = Client()
    check(c.call("p", {"p": "/open/presence/me", "d": {"state": "online"}})["s"] == "ok", "online")
    check(c.call("o", {"p": "/open/presence/me/state", "d": "offline"})["s"] == "ok", "onDisconnect set registered")
    check(c.call("om", {"p": "/open/presence/me", "d": {"at": {".sv": "timestamp"}}})["s"] == "ok", "onDisconnect update registered")
    check(c.call("o", {"p": "/open/presence/me/cancelled", "d": True})["s"] == "ok", "a third registered")
    check(c.call("oc", {"p": "/open/presence/me/cancelled", "d": None})["s"] == "ok", "and cancelled")
    os.kill(int(sys.argv[3]), signal.SIGKILL)
    check(wait_closed(c, "server killed") is not None or True, "the server is gone")


def mode_revoke():
    """Run with a fast revocation check: an account deleted while its listen is open gets
    `ac` (the SDK then reconnects with a fresh token), and the connection is signed out."""
    token, uid = sign_up()
    c = Client()
    c.call("auth", {"cred": token})
    check(c.call("q", {"p": f"/users/{uid}/favorites", "h": ""})["s"] == "ok", "listening")
    status, _ = rest("POST", "/v1/accounts:delete", {"idToken": token})
    check(status == 200, "account deleted", status)
    _, revoked = c.push("ac", what="auth revoked")
    check(revoked["s"] == "expired_token" and revoked["d"], "ac pushed when the account is gone", revoked)
    refused = c.call("g", {"p": f"/users/{uid}/favorites", "q": {}})
    check(refused["s"] == "permission_denied", "signed out after ac", refused)
    c.close()


def mode_reload():
    """Rules replaced on disk and reloaded with SIGHUP (argv[3] pid, argv[4] rules file):
    a listen that lost read access gets `c`; one that kept it stays."""
    import os, signal
    c = Client()
    check(c.call("q", {"p": "/open/secret", "h": ""})["s"] == "ok", "listening to a path about to close")
    check(c.call("q", {"p": "/open/public", "h": ""})["s"] == "ok", "listening to a path that stays open")
    with open(sys.argv[4], "w") as f:
        f.write('{"rules": {"open": {"public": {".read": true}, ".write": true}}}')
    os.kill(int(sys.argv[3]), signal.SIGHUP)
    _, cancelled = c.push("c", what="listen revoked")
    check(cancelled["p"] == "/open/secret" and "q" not in cancelled, "c pushed for the listen that lost access", cancelled)
    check(c.call("p", {"p": "/open/public", "d": 1})["s"] == "ok", "write")
    _, still = c.push("d", lambda b: b["p"] == "/open/public" and b["d"] == 1, "push to the listen that kept access")
    check(still["d"] == 1, "the other listen still gets pushes")
    c.close()


def mode_namespace():
    """Run with HEARTH_NAMESPACES=demo: another namespace gets the shutdown control
    message (the SDK stops reconnecting) and the connection ends; demo is served."""
    refused = Client(namespace="elsewhere")
    first = refused.handshake
    check(first["t"] == "c" and first["d"]["t"] == "s" and "elsewhere" in first["d"]["d"], "an unknown namespace gets shutdown", first)
    wait_closed(refused, "refused namespace")
    check(True, "and the connection ends")
    served = Client(namespace="demo")
    check(served.handshake["d"]["t"] == "h", "the configured namespace gets the handshake", served.handshake)
    check(served.call("s", {})["s"] == "ok", "and is served")
    served.close()


def mode_emulator_namespaces():
    """Run in emulator mode without a namespaces file, rules letting anyone write /open: two
    clients on ns=alpha and ns=beta, without any rules replacement, each its own database."""
    alpha, beta = Client(namespace="alpha"), Client(namespace="beta")
    check(alpha.handshake["d"]["t"] == "h" and beta.handshake["d"]["t"] == "h", "both namespaces get the handshake")
    for client in (alpha, beta):
        check(client.call("q", {"p": "/open", "h": ""})["s"] == "ok", "listen on /open")
        client.push("d", lambda b: b["p"].strip("/") == "open" and b["d"] is None, "the empty start")
    check(beta.call("p", {"p": "/open/x", "d": "b"})["s"] == "ok", "beta writes")
    beta.push("d", lambda b: b["d"] == "b", "beta's own write")
    check(alpha.call("p", {"p": "/open/x", "d": "a"})["s"] == "ok", "alpha writes")
    alpha.push("d", lambda b: b["d"] == "a", "alpha's own write")
    check(all(b["d"] != "b" for b in alpha.pushes("d")), "no push of beta's write in alpha", alpha.log)
    check(alpha.call("g", {"p": "/open/x", "q": {}})["d"] == "a", "alpha reads its own value")
    check(beta.call("g", {"p": "/open/x", "q": {}})["d"] == "b", "beta reads its own value")
    check(all(b["d"] != "a" for b in beta.pushes("d")), "no push of alpha's write in beta", beta.log)
    alpha.close()
    beta.close()


def mode_emulator_default_names():
    """Run in emulator mode with project id demo-proj and HEARTH_NAMESPACES=demo, rules letting
    anyone write /open: the default namespace's names reach it over /.ws too, each client
    writing /open/<its name>."""
    for name in ("demo", "demo-proj", "demo-proj-default-rtdb"):
        client = Client(namespace=name)
        check(client.handshake["d"]["t"] == "h", f"{name} gets the handshake", client.handshake)
        check(client.call("p", {"p": f"/open/{name}", "d": name})["s"] == "ok", f"{name} writes")
        client.close()


def mode_chunked():
    c = Client()
    big = "x" * 40_000
    message = json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/open/big", "d": big}}})
    chunks = [message[i:i + 16384] for i in range(0, len(message), 16384)]
    c.send_raw(str(len(chunks)))
    for chunk in chunks:
        c.send_raw(chunk)
    _, answer = c.answer(1)
    c.number = 1
    check(answer["s"] == "ok", f"a message in {len(chunks)} chunks", answer)
    got = c.call("g", {"p": "/open/big", "q": {}})
    check(got["d"] == big, "the chunked value round-trips")
    check(c.chunked >= 1, "the long answer came in chunks", c.chunked)
    accents = "é✓𝄞" * 10_000  # multi-byte characters across chunk boundaries
    check(c.call("p", {"p": "/open/accents", "d": accents})["s"] == "ok", "put of a long multi-byte value")
    check(c.call("g", {"p": "/open/accents", "q": {}})["d"] == accents, "multi-byte characters survive the chunking")
    c.close()


def mode_auth():
    c = Client()
    bad = c.call("auth", {"cred": "not-a-token"})
    check(bad["s"] in ("invalid_token", "expired_token") and bad["d"], "a bad token is refused", bad)
    token, uid = sign_up()
    check(c.call("auth", {"cred": token})["s"] == "ok", "a good token after a bad one")
    check(c.call("q", {"p": f"/users/{uid}/favorites", "h": ""})["s"] == "ok", "authenticated listen")
    check(c.call("unauth", {})["s"] == "ok", "unauth")
    _, revoked = c.push("c", lambda b: b["p"] == f"/users/{uid}/favorites", "listen revoked after unauth")
    check("q" not in revoked, "listen revoked after unauth", revoked)
    refused = c.call("g", {"p": f"/users/{uid}/favorites", "q": {}})
    check(refused["s"] == "permission_denied", "signed out: refused", refused)
    c.close()


def mode_external_token():
    """A Firebase project's ID token in `auth`: EXTERNAL_TOKEN for EXTERNAL_UID."""
    token, uid = os.environ["EXTERNAL_TOKEN"], os.environ["EXTERNAL_UID"]
    c = Client()
    answer = c.call("auth", {"cred": token})
    check(answer["s"] == "ok", "a Firebase project's token is accepted", answer)
    check(c.call("p", {"p": f"/{uid}/state", "d": "online"})["s"] == "ok", "its user writes its own data")
    refused = c.call("p", {"p": "/someone-else/state", "d": "x"})
    check(refused["s"] == "permission_denied", "and not another user's", refused)
    c.close()


def mode_lapse():
    """An identity that lapses on an open connection. Once this prints
    `ready <uid>`, the Swift test deletes, disables or revokes the user and answers `go`.
    Every later request is judged by the identity as it is now: `ac` comes before the
    first answer, the listen is cancelled with `c`, writes, reads and onDisconnect
    registrations are refused, and the onDisconnect operation registered while valid does
    not run (a reconnect with ls= ends the old session before its first answer)."""
    token, uid = sign_up()
    c = Client()
    session_id = c.handshake["d"]["d"]["s"]
    check(c.call("auth", {"cred": token})["s"] == "ok", "signed in")
    check(c.call("q", {"p": f"/users/{uid}/favorites", "h": ""})["s"] == "ok", "listening")
    check(c.call("p", {"p": f"/users/{uid}/favorites/f1", "d": favorite("f1", uid, 1)})["s"] == "ok", "a write while valid")
    check(c.call("o", {"p": f"/open/presence/{uid}", "d": "offline"})["s"] == "ok", "onDisconnect registered while valid")
    print(f"ready {uid}", flush=True)
    check(sys.stdin.readline().strip() == "go", "the test changed the account")
    number = c.request("p", {"p": f"/users/{uid}/favorites/f2", "d": favorite("f2", uid, 2)})
    answer_index, answer = c.answer(number)
    check(answer["s"] == "permission_denied", "a write after the lapse is refused", answer)
    lapsed_index, lapsed = c.push("ac", what="auth lapsed")
    check(lapsed["s"] == "expired_token" and lapsed["d"], "ac pushed", lapsed)
    check(lapsed_index < answer_index, "ac before the answer", (lapsed_index, answer_index))
    c.push("c", lambda b: b["p"] == f"/users/{uid}/favorites", "the listen cancelled")
    check(c.call("g", {"p": f"/users/{uid}/favorites", "q": {}})["s"] == "permission_denied", "a read after the lapse is refused")
    check(c.call("m", {"p": f"/users/{uid}/favorites/f1", "d": {"name": "x"}})["s"] == "permission_denied", "a merge after the lapse is refused")
    refused = c.call("o", {"p": f"/users/{uid}/favorites/f3", "d": favorite("f3", uid, 3)})
    check(refused["s"] == "permission_denied", "an onDisconnect after the lapse is refused", refused)
    check(len(c.pushes("ac")) == 1, "one ac", c.pushes("ac"))
    new = Client(last_session=session_id)
    got = new.call("g", {"p": f"/open/presence/{uid}", "q": {}})
    check(got == {"s": "ok", "d": None}, "the onDisconnect registered before the lapse did not run", got)
    new.close()


def mode_failed_auth():
    """A failed `auth` signs the connection out (docs/protocol/wire.md §4.7): the identity it held
    does not stay in force, and its listens are cancelled."""
    token, uid = sign_up()
    c = Client()
    check(c.call("auth", {"cred": token})["s"] == "ok", "signed in")
    check(c.call("q", {"p": f"/users/{uid}/favorites", "h": ""})["s"] == "ok", "listening")
    bad = c.call("auth", {"cred": "not-a-token"})
    check(bad["s"] == "invalid_token" and bad["d"], "a bad token is refused", bad)
    c.push("c", lambda b: b["p"] == f"/users/{uid}/favorites", "the listen cancelled")
    check(c.call("g", {"p": f"/users/{uid}/favorites", "q": {}})["s"] == "permission_denied", "signed out: a read is refused")
    written = c.call("p", {"p": f"/users/{uid}/favorites/f1", "d": favorite("f1", uid, 1)})
    check(written["s"] == "permission_denied", "signed out: a write is refused", written)
    check(c.call("auth", {"cred": token})["s"] == "ok", "signed in again")
    check(c.call("g", {"p": f"/users/{uid}/favorites", "q": {}})["s"] == "ok", "and reads again")
    c.close()


def mode_owner_only_direct():
    """The emulator's `owner` token is an admin's only on a connection straight from this
    machine: an upgrade a proxy forwarded (X-Forwarded-For), or one a web page of another
    origin opened (its Origin), is refused it; a loopback page's is not."""
    for name, headers in (("straight from this machine", {}), ("from a loopback page", {"Origin": "http://localhost:3000"})):
        direct = Client(headers=headers)
        check(direct.call("gauth", {"cred": "owner"})["s"] == "ok", f"owner, {name}")
        check(direct.call("p", {"p": "/owner-only/x", "d": 1})["s"] == "ok", f"writes as an admin ({name})")
        direct.close()
    for name, headers in (("through a proxy", {"X-Forwarded-For": "203.0.113.9"}),
                          ("from a page of another origin", {"Origin": "https://evil.example"})):
        refused_client = Client(headers=headers)
        refused = refused_client.call("gauth", {"cred": "owner"})
        check(refused["s"] == "invalid_token", f"owner {name} is refused", refused)
        written = refused_client.call("p", {"p": "/owner-only/y", "d": 1})
        check(written["s"] == "permission_denied", f"and is no admin ({name})", written)
        refused_client.close()


def mode_bad_paths():
    """A path that is not valid in a write, a read, a listen or an onDisconnect request, or
    an increment past the largest number, is answered `invalid_data` with the reason, not
    a generic `invalid_action`; a put's hash or a request's action of the wrong type is
    `invalid_action`; the connection stays usable."""
    c = Client()
    bad = {".info": "/.info/connected", ".settings": "/.settings/rules", "..": "/open/../x",
           "a control character": "/open/a\u0001b", "an over-long key": "/open/" + "k" * 800}
    for name, path in bad.items():
        for action, body in (("p", {"p": path, "d": 1}), ("m", {"p": path, "d": {"a": 1}}), ("o", {"p": path, "d": 1}),
                             ("om", {"p": path, "d": {"a": 1}}), ("q", {"p": path, "h": ""})):
            answer = c.call(action, body)
            check(answer["s"] == "invalid_data" and answer["d"].startswith("Invalid path: "), f"{action} on {name}: invalid_data", answer)
    missing = c.call("p", {"d": 1})
    check(missing["s"] == "invalid_action" and missing["d"] == "put needs p", "no p: invalid_action", missing)
    # Data that is only invalid once applied: an increment past the largest number, in a
    # put, an update and an onDisconnect (judged when registered); the number stays.
    check(c.call("p", {"p": "/open/n", "d": 1e308})["s"] == "ok", "a large number")
    over = {".sv": {"increment": 1e308}}
    for action, body in (("p", {"p": "/open/n", "d": over}), ("m", {"p": "/open", "d": {"n": over}}),
                         ("o", {"p": "/open/n", "d": over})):
        answer = c.call(action, body)
        check(answer["s"] == "invalid_data" and "the increment would pass the largest number" in answer["d"],
              f"{action} of an increment past the largest number: invalid_data", answer)
    check(rest("GET", "/open/n.json") == (200, 1e308), "the number stays")
    # A transaction's put whose hash is not a string is refused, not run unconditionally.
    answer = c.call("p", {"p": "/open/n", "d": 1, "h": 7})
    check(answer["s"] == "invalid_action" and "must be a string" in answer["d"], "a put with a hash that is not a string: invalid_action", answer)
    check(rest("GET", "/open/n.json") == (200, 1e308), "and nothing is written")
    # A numbered request without a string action is answered, not left waiting.
    for action in (None, 5):
        c.number += 1
        data = {"r": c.number, "b": {"p": "/open/n", "d": 1}}
        if action is not None:
            data["a"] = action
        c.send_raw(json.dumps({"t": "d", "d": data}))
        answer = c.answer(c.number)[1]
        check(answer["s"] == "invalid_action" and "needs its action" in answer["d"], f"a request whose a is {action}: invalid_action", answer)
    check(c.call("p", {"p": "/open/fine", "d": 1})["s"] == "ok", "the connection is still usable")
    c.close()


def mode_oracle():
    """A compare-and-set where the caller may write but not read: `p` with `h`
    is refused before comparing, whatever the hash (the right one, a wrong one, the empty
    hash on data and on nothing), so the answer tells nothing of the data. Rules:
    /drop/$k .write auth != null, no .read. The Swift test checks nothing was written."""
    token, uid = sign_up()
    c = Client()
    check(c.call("auth", {"cred": token})["s"] == "ok", "signed in")
    check(c.call("p", {"p": "/drop/k", "d": "secret"})["s"] == "ok", "a plain write is allowed")
    for name, h in (("the right hash", sdk_hash("secret")), ("a wrong hash", "wrong"), ("the empty hash on data", "")):
        answer = c.call("p", {"p": "/drop/k", "d": "guess", "h": h})
        check(answer["s"] == "permission_denied", f"{name}: permission_denied", answer)
    answer = c.call("p", {"p": "/drop/none", "d": "x", "h": ""})
    check(answer["s"] == "permission_denied", "the empty hash on nothing: permission_denied", answer)
    c.close()


def masked_frame(text, fin=True, zero_key=False):
    """One masked text frame (RFC 6455 §5.2) as a client sends it; `fin=False` leaves the
    message unfinished; the key 0 leaves a long payload as it is (valid, and no work)."""
    payload = text.encode()
    key = b"\0\0\0\0" if zero_key else os.urandom(4)
    head = bytes([0x81 if fin else 0x01])
    if len(payload) < 126:
        head += bytes([0x80 | len(payload)])
    elif len(payload) <= 0xFFFF:
        head += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
    return head + key + (payload if zero_key else bytes(b ^ key[i % 4] for i, b in enumerate(payload)))


def mode_burst():
    """Many messages in one TCP write, so the server reads them in one frame loop: what
    it answers while taking them (pong, invalid_action, ok, its close) comes out in order,
    and a close decided in the middle of the loop ends the connection cleanly."""
    c = Client()
    messages = [
        json.dumps({"t": "c", "d": {"t": "p", "d": {}}}),
        json.dumps({"t": "d", "d": {"r": 1, "a": "frobnicate", "b": {}}}),
        json.dumps({"t": "d", "d": {"r": 2, "a": "s", "b": {}}}),
        "not json",
        "0",
        json.dumps({"t": "d", "d": {"r": 3, "a": "p", "b": {"p": "/open/burst", "d": {"n": 1}}}}),
        json.dumps({"t": "d", "d": {"r": 4, "a": "g", "b": {"p": "/open/burst", "q": {}}}}),
        json.dumps({"t": "d", "d": {"r": 5, "a": "frobnicate", "b": {}}}),
    ]
    c.ws.socket.sendall(b"".join(masked_frame(m) for m in messages))
    c.number = 5  # the burst's numbers, written by hand above
    positions = [c.answer(n)[0] for n in range(1, 6)]
    check(positions == sorted(positions), "answers to one burst come in request order", positions)
    check(c.answer(1)[1]["s"] == "invalid_action" and c.answer(5)[1]["s"] == "invalid_action", "bad requests in a burst answered")
    check(c.answer(3)[1]["s"] == "ok" and c.answer(4)[1] == {"s": "ok", "d": {"n": 1}}, "the write and the read in a burst", c.log)
    c.wait_for(lambda m: m.get("t") == "c" and m["d"]["t"] == "o", "pong to the burst's ping")
    check(c.call("s", {})["s"] == "ok", "the connection serves on after the burst")
    c.close()

    flood = Client()
    flood.ws.socket.sendall(b"".join(masked_frame(json.dumps({"t": "d", "d": {"r": i, "a": "nope", "b": {}}})) for i in range(1, 101)))
    check(wait_closed(flood, "a burst of bad messages") == 1008, "a burst of bad messages closes with 1008 from inside the read loop")
    with flood.cond:
        numbers = [m["d"]["r"] for m in flood.log if m.get("t") == "d"]
    check(numbers == list(range(1, len(numbers) + 1)) and 0 < len(numbers) < 100,
          "the answers before the close are in order and stop at the limit", numbers)


def mode_backlog():
    """Run with the server's waiting-request bound at 64 KiB: 300 puts of ~20 KB in one
    TCP write, far faster than the database takes them. The server stops reading rather
    than hold them all (the pause counts in /metrics), and answers every one, in order,
    on a connection that stays open; the last value is the last written."""
    c = Client()
    count = 300
    frames = b"".join(
        masked_frame(json.dumps({"t": "d", "d": {"r": i, "a": "p", "b": {"p": "/open/backlog", "d": f"{i:04d}" + "v" * 20000}}}),
                     zero_key=True)
        for i in range(1, count + 1))
    sender = threading.Thread(target=lambda: c.ws.socket.sendall(frames), daemon=True)
    sender.start()
    c.number = count  # the numbers written by hand above
    answers = [c.answer(n) for n in range(1, count + 1)]
    sender.join(WAIT)
    check(not sender.is_alive(), "the whole backlog was sent")
    check(all(a[1]["s"] == "ok" for a in answers), "every put of the backlog answered ok",
          [a[1] for a in answers if a[1]["s"] != "ok"][:3])
    positions = [a[0] for a in answers]
    check(positions == sorted(positions), "answered in request order")
    with urllib.request.urlopen(BASE + "/metrics", timeout=WAIT) as response:
        metrics = response.read().decode()
    pauses = [line for line in metrics.splitlines() if line.startswith("hearth_http_read_pauses_total ")]
    check(pauses and float(pauses[0].split()[1]) >= 1, "the connection stopped reading at least once", pauses)
    check("hearth_http_incomplete_refusals_total 0" in metrics or "hearth_http_incomplete_refusals_total" not in metrics,
          "nothing was refused", [line for line in metrics.splitlines() if "incomplete_refusals" in line])
    last = c.call("g", {"p": "/open/backlog", "q": {}})
    check(last["s"] == "ok" and last["d"].startswith(f"{count:04d}"), "the last put is the value", last["d"][:8])
    check(c.call("s", {})["s"] == "ok", "the connection serves on")
    c.close()


def wait_closed(client, what):
    deadline = time.time() + WAIT
    with client.cond:
        while not client.closed:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError(f"{what}: the connection stayed open")
            client.cond.wait(remaining)
    return client.ws.close_code


def mode_limits():
    """Run with HEARTH_WIRE_MAX_LISTENS=2, _ON_DISCONNECT=2, _BAD_MESSAGES=3,
    _AUTH_FAILURES=2, _PENDING_REQUESTS=4: each limit is crossed by one."""
    c = Client()
    check(c.call("q", {"p": "/open/a", "h": ""})["s"] == "ok", "listen 1")
    check(c.call("q", {"p": "/open/b", "h": ""})["s"] == "ok", "listen 2")
    third = c.call("q", {"p": "/open/c", "h": ""})
    check(third["s"] == "max_listens" and third["d"], "a third listen is refused", third)
    check(c.call("n", {"p": "/open/a"})["s"] == "ok" and c.call("q", {"p": "/open/c", "h": ""})["s"] == "ok", "after an unlisten it fits")
    check(c.call("o", {"p": "/open/x", "d": 1})["s"] == "ok" and c.call("om", {"p": "/open", "d": {"y": 2}})["s"] == "ok", "two onDisconnect")
    over = c.call("o", {"p": "/open/z", "d": 3})
    check(over["s"] == "too_many_ondisconnect" and over["d"], "a third onDisconnect is refused", over)
    c.close()

    bad = Client()
    for i in range(3):
        check(bad.call("nope", {})["s"] == "invalid_action", f"bad message {i + 1} answered")
    bad.request("nope", {})
    check(wait_closed(bad, "fourth bad message") == 1008, "the fourth bad message closes with 1008")

    auth = Client()
    for i in range(2):
        check(auth.call("auth", {"cred": "bad"})["s"] == "invalid_token", f"failed auth {i + 1} answered")
    auth.request("auth", {"cred": "bad"})
    check(wait_closed(auth, "third failed auth") == 1008, "the third failed auth closes with 1008")

    # Past the pending bound the server stops reading instead of closing: an SDK that
    # reconnects re-sends every unanswered write, and a close would have it do so forever.
    flood = Client()
    numbers = [flood.request("g", {"p": "/open", "q": {}}) for _ in range(200)]
    answers = [flood.answer(n) for n in numbers]
    check(all(a[1]["s"] == "ok" for a in answers), "200 requests past the pending bound of 4 all answered")
    positions = [a[0] for a in answers]
    check(positions == sorted(positions) and not flood.closed, "in order, on a connection still open")
    flood.close()


def close_reason(client):
    received = client.ws.protocol.close_rcvd
    return received.reason if received else ""


def raw_upgrade(version):
    """A handshake by hand with `Sec-WebSocket-Version: version`; the status line and head."""
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=WAIT)
    sock.sendall((f"GET /.ws?v=5&ns=demo HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  f"Sec-WebSocket-Version: {version}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    sock.close()
    lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
    return lines[0], {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}


def mode_refusals():
    """What the server refuses is answered, in words."""
    c = Client()
    deep = "[" * 600 + "]" * 600
    c.send_raw('{"t":"d","d":{"r":1,"a":"p","b":{"p":"/open/deep","d":' + deep + '}}}')
    _, answer = c.answer(1)
    c.number = 1
    check(answer["s"] == "invalid_data" and "nested deeper than 512" in answer["d"], "a message nested too deep is answered", answer)
    check(c.call("s", {})["s"] == "ok", "the connection serves on after it")
    c.close()

    status, headers = raw_upgrade("8")
    check(status == "HTTP/1.1 426 Upgrade Required", "version 8 gets 426 Upgrade Required", status)
    check(headers.get("sec-websocket-version") == "13" and headers.get("upgrade") == "websocket", "naming version 13", headers)

    chunks = Client()
    chunks.send_raw("1026")
    check(wait_closed(chunks, "a chunk count no message fits") == 1009, "a chunk count past the message limit closes with 1009 at once")
    reason = close_reason(chunks)
    check("1025 chunks" in reason and "16 MiB" in reason, "the close reason says why in words", reason)


def mode_partials():
    """Run with HEARTH_MAX_INCOMPLETE_BYTES_PER_ADDRESS=1 MiB: messages
    left incomplete on several sockets count together against the address's share, be they
    WebSocket fragments without FIN or wire chunks; the socket that passes it is closed
    with 1008 and a reason; small requests are served throughout.

    Held bytes are counted as allocated (buffer capacity), which depends on how the bytes
    arrived (a buffer grows to at most twice what it holds, in each of the two buffers a
    fragment passes through): so the holders are small enough that two of them stay under
    the share however their buffers grew (2 x 4 x 100 KB), and the third large enough to
    pass it with them whatever its own growth (900 KB + 2 x 100 KB)."""
    holders = []
    for i in range(2):
        c = Client()
        c.ws.socket.sendall(masked_frame("a" * 100_000, fin=False, zero_key=True))
        check(c.ws.ping().wait(WAIT), f"fragment {i + 1} without FIN held (its ping answered)")
        holders.append(c)
    over = Client()
    try:
        over.ws.socket.sendall(masked_frame("b" * 900_000, fin=False, zero_key=True))
    except OSError:
        pass  # the server may close while the fragment is still being sent
    check(wait_closed(over, "a third partial message") == 1008, "the third partial message passes the share: 1008")
    check("incomplete input from your address" in close_reason(over), "its reason says why", close_reason(over))
    served = Client()
    check(served.call("s", {})["s"] == "ok", "a small request from the same address is served meanwhile")
    for c in holders:
        c.close()

    chunks = Client()
    chunks.send_raw("100")
    try:
        for _ in range(80):
            chunks.send_raw("c" * 16_384)
    except Exception:
        pass  # the server may close while the chunks are still being sent
    check(wait_closed(chunks, "chunks past the share") == 1008, "wire chunks held past the share: 1008")
    check(served.call("s", {})["s"] == "ok", "the other connection is still served")
    served.close()
    counted = Client()
    counted.send_raw("1026")
    check(wait_closed(counted, "a chunk count no message fits") == 1009, "a chunk count no message fits: 1009")
    with urllib.request.urlopen(BASE + "/metrics", timeout=WAIT) as response:
        metrics = response.read().decode()
    check("hearth_http_incomplete_refusals_total 2" in metrics, "both refusals in /metrics", metrics[:0])


def mode_neighbours():
    """Run with HEARTH_MAX_STREAMS_PER_ADDRESS=8: one connection's
    listens stop at a quarter of its address's streams (2), so a neighbour behind the same
    address still listens, over the wire and over SSE."""
    greedy = Client()
    answers = [greedy.call("q", {"p": f"/open/greedy{i}", "h": ""})["s"] for i in range(3)]
    check(answers == ["ok", "ok", "max_listens"], "one connection stops at a quarter of the address's streams", answers)
    neighbour = Client()
    check(all(neighbour.call("q", {"p": f"/open/n{i}", "h": ""})["s"] == "ok" for i in range(2)), "a neighbour on the same address listens")
    request = urllib.request.Request(BASE + "/open.json", headers={"Accept": "text/event-stream"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        check(response.status == 200 and response.readline().startswith(b"event:"), "and opens an SSE stream")
    status, _ = rest("GET", "/healthz")
    check(status == 200, "health answered")
    greedy.close()
    neighbour.close()


def mode_cross_node():
    """Several nodes on one database: a wire listener on this node (PORT) sees,
    in order, writes made through the wire protocol on another node (argv[3]) and through
    REST on a third (argv[4])."""
    global PORT
    listen_port, wire_port, rest_port = PORT, int(sys.argv[3]), int(sys.argv[4])
    listener = Client()
    check(listener.call("q", {"p": "/open/room", "h": ""})["s"] == "ok", "listen on this node")
    PORT = wire_port
    writer = Client()
    PORT = listen_port
    for i in range(5):
        check(writer.call("p", {"p": f"/open/room/w{i}", "d": i})["s"] == "ok", f"wire write {i} on another node")
        request = urllib.request.Request(f"http://127.0.0.1:{rest_port}/open/room/r{i}.json", data=json.dumps(i).encode(), method="PUT")
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            check(response.status == 200, f"REST write {i} on a third node")
    _, last = listener.push("d", lambda b: b["p"].endswith("/r4"), "the last write's push")
    order = [b["p"].rsplit("/", 1)[-1] for b in listener.pushes("d") if b["p"].startswith("open/room/") or b["p"].startswith("/open/room/")]
    expected = [name for i in range(5) for name in (f"w{i}", f"r{i}")]
    check(order == expected, "every write pushed once, in commit order", order)
    writer.close()
    listener.close()


def mode_start_over():
    """A node that missed changes closes every listen's connection (1001); the client
    connects again and listens again, getting the whole value."""
    c = Client()
    check(c.call("p", {"p": "/open/room/a", "d": 1})["s"] == "ok", "written")
    check(c.call("q", {"p": "/open/room", "h": ""})["s"] == "ok", "listening")
    check(wait_closed(c, "start over") == 1001, "closed as going away", c.ws.close_code)
    again = Client()
    check(again.call("q", {"p": "/open/room", "h": ""})["s"] == "ok", "listening again")
    _, whole = again.push("d", lambda b: b["p"].strip("/") == "open/room", "the whole value")
    check(whole["d"] == {"a": 1}, "the whole value again", whole)
    again.close()


def mode_lease_cut():
    """Several nodes: registers an onDisconnect on this node (PORT), then waits
    while the Swift test cuts this node off from the database. The node must close the
    connection once its lease may run out; the client then says so through another node
    (argv[3]), so a listener there sees "closed" before the onDisconnect's write."""
    other = int(sys.argv[3])
    c = Client()
    check(c.call("o", {"p": "/open/presence/me", "d": "offline"})["s"] == "ok", "onDisconnect registered")
    check(c.call("p", {"p": "/open/presence/me", "d": "online"})["s"] == "ok", "online")
    deadline = time.time() + 3 * WAIT
    with c.cond:
        while not c.closed:
            remaining = deadline - time.time()
            check(remaining > 0, "the node closed the connection", "it stayed open")
            c.cond.wait(remaining)
    check(c.ws.close_code == 1001, "closed as going away", c.ws.close_code)
    request = urllib.request.Request(f"http://127.0.0.1:{other}/open/log/closed.json", data=b'"closed"', method="PUT")
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        check(response.status == 200, "said so through another node")


def online_with_offline(count):
    """`count` clients on this node, client i online at /open/presence/i with an
    onDisconnect setting it false."""
    clients = []
    for i in range(count):
        c = Client()
        check(c.call("o", {"p": f"/open/presence/{i}", "d": False})["s"] == "ok", f"onDisconnect {i} registered", i)
        check(c.call("p", {"p": f"/open/presence/{i}", "d": True})["s"] == "ok", f"{i} online")
        clients.append(c)
    return clients


def wait_stopped(pid):
    """Returns once every thread of `pid` is stopped. kill() returns when SIGSTOP is sent,
    not when the threads have stopped: a thread still running on another CPU could read a
    request sent right after and answer it under its live lease."""
    deadline = time.time() + WAIT
    while True:
        states = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass  # the thread ended
        if states and all(state in ("T", "t") for state in states):
            return
        check(time.time() < deadline, "the node stopped", states)
        time.sleep(0.001)


def mode_pause():
    """Several nodes: 20 clients on this node (PORT) go online with an onDisconnect
    "offline"; the node is paused (SIGSTOP, pid argv[4]) past its lease. Meanwhile every
    client sends a write it never sees answered and drops its connection; client 13
    reconnects to another node (argv[3]) naming its old session and goes online there.
    The other node runs the 19 others' operations once the lease ran out; then the node
    wakes (SIGCONT) and must write nothing for its old sessions: the Swift test checks
    that each "offline" arrives exactly once, 13 ends online, and no write sent to the
    paused node is in the data."""
    import signal
    other, pid, count = int(sys.argv[3]), int(sys.argv[4]), 20
    watcher = Client(port=other)
    watcher.call("q", {"p": "/open", "h": ""})
    clients = online_with_offline(count)
    def presence():
        events = []
        for body in watcher.pushes("d"):
            path = body["p"].strip("/")
            if path == "open/presence" or path == "open":
                data = (body["d"] or {}).get("presence", {}) if path == "open" else body["d"]
                events += [(int(k), v) for k, v in (data or {}).items()]
            elif path.startswith("open/presence/"):
                events.append((int(path.split("/")[-1]), body["d"]))
        return events
    sessions = [c.handshake["d"]["d"]["s"] for c in clients]
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_stopped(pid)
        for i, c in enumerate(clients):
            c.request("p", {"p": f"/open/ghost/{i}", "d": True})
            c.ws.socket.shutdown(socket.SHUT_RDWR)
            c.ws.socket.close()
        again = Client(port=other, last_session=sessions[13])
        got = again.call("g", {"p": "/open/presence/13", "q": {}})
        check(got == {"s": "ok", "d": False}, "the old session's onDisconnect ran on the other node before the new session's first answer", got)
        check(again.call("p", {"p": "/open/presence/13", "d": True})["s"] == "ok", "13 online again on the other node")
        # The other node runs the rest once the paused node's lease ran out.
        deadline = time.time() + 2 * WAIT
        with watcher.cond:
            while sum(1 for i, v in presence() if v is False) < count:
                remaining = deadline - time.time()
                check(remaining > 0, "every offline ran on the other node", presence())
                watcher.cond.wait(remaining)
    finally:
        os.kill(pid, signal.SIGCONT)
    # Awake: the Swift test waits for the node to hold a lease again, writes through it and
    # checks the presence timeline a listener on a third node heard, and the ghosts.
    check(sorted(i for i, v in presence() if v is False) == list(range(count)), "each offline once while it was stopped", presence())


def mode_silent():
    """Several nodes: 20 clients on this node (PORT) go online with an onDisconnect
    "offline"; then the Swift test makes the node's database silent (a proxy holds the
    bytes). The node must close every connection (1001) once its lease may run out; client
    13 then reconnects to another node (argv[3]) naming its old session and goes online
    there. The Swift test checks the presence timeline another listener heard. It makes
    the database silent once this says /open/ready (through the other node): only then
    are all the answers in (a commit's answer held by the proxy would never come)."""
    other, count = int(sys.argv[3]), 20
    clients = online_with_offline(count)
    # Every answer is in: the Swift test may make the database silent now (it listens).
    request = urllib.request.Request(f"http://127.0.0.1:{other}/open/ready.json", data=b"true", method="PUT")
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        check(response.status == 200, "said ready through another node")
    deadline = time.time() + 3 * WAIT
    for i, c in enumerate(clients):
        with c.cond:
            while not c.closed:
                remaining = deadline - time.time()
                check(remaining > 0, f"the node closed connection {i}", "it stayed open")
                c.cond.wait(remaining)
        check(c.ws.close_code == 1001, f"connection {i} closed as going away", c.ws.close_code)
    again = Client(port=other, last_session=clients[13].handshake["d"]["d"]["s"])
    got = again.call("g", {"p": "/open/presence/13", "q": {}})
    check(got == {"s": "ok", "d": False}, "13's old onDisconnect ran before the new session's first answer", got)
    check(again.call("p", {"p": "/open/presence/13", "d": True})["s"] == "ok", "13 online again on the other node")


if __name__ == "__main__":
    globals()["mode_" + sys.argv[1]]()
    print("done", flush=True)

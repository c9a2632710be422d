"""A Firebase long-polling client (docs/protocol/wire.md §8), written from the JS
SDK's BrowserPollConnection.ts and PacketReceiver.ts: the start request with its callback
id, the script answers (`pLPCommand<cb>('start', id, pw)`, `pRTLPCB<cb>(n, [msgs])`,
`pLPCommand<cb>('close'[, n])`) re-ordered by response number, one poll kept open at all
times and a second one carrying the client's messages (web-safe base64 with `.` padding,
cut into 1,840-character segments numbered across the session, `seg<i>`/`ts<i>`/`d<i>`,
as many as fit in 1,870 characters), the hidden disconnect frame (`dframe=t`) loaded at
start. Each mode checks every answer itself, prints `ok <check>` per passed check and
exits 1 on the first failure.

Usage: lp_client.py <mode> <port> [host]
Modes: session, proxy, hold, idle, max_sessions, pending_out, pending_in, shutdown, reconnect,
first_message, unsent, per_address, emulator_referer
Every wait has a timeout (WAIT seconds).
"""
import base64
import http.client
import json
import queue
import random
import re
import sys
import threading
import time
import urllib.request

WAIT = 20
MODE = sys.argv[1]
PORT = int(sys.argv[2])
HOST = "127.0.0.1"
BASE = f"http://{HOST}:{PORT}"
MAX_URL_DATA_SIZE = 1870
SEG_HEADER_SIZE = 30
MAX_PAYLOAD_SIZE = MAX_URL_DATA_SIZE - SEG_HEADER_SIZE
CALL = re.compile(r"\(window\.(pLPCommand|pRTLPCB)(\d+)\|\|parent\.(?:pLPCommand|pRTLPCB)\d+\)\((.*)\);")


def check(condition, name, detail=""):
    if not condition:
        print(f"FAILED {name}: {detail}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"ok {name}", flush=True)


def get(path, timeout=WAIT + 10, headers=None):
    """One GET as a script tag makes it: the path as is (the SDK does not percent-encode);
    `headers`: what the browser adds (a Referer), or a proxy (X-Forwarded-For)."""
    connection = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": f"{HOST}:{PORT}", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read().decode()
    finally:
        connection.close()


def rest(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_for(condition, what):
    deadline = time.monotonic() + WAIT * 3
    while time.monotonic() < deadline:
        if condition():
            return check(True, what)
        time.sleep(0.05)
    check(False, what, "timed out")


def websafe_b64(text):
    return base64.b64encode(text.encode()).decode().replace("+", "-").replace("/", "_").replace("=", ".")


class Session:
    """One long-poll connection, as the SDK's FirebaseIFrameScriptHolder drives it."""

    def __init__(self, namespace="demo", poll=True, last_session=None, headers=None):
        self.headers = headers or {}
        self.cb = str(random.randint(1, 999))
        self.serial = random.randint(0, 100000000)
        self.segment = 0
        self.pending = []            # segments waiting for a poll: (seg, ts, d)
        self.responses = {}          # response number -> messages
        self.next_response = 0
        self.messages = queue.Queue()
        self.closed = threading.Event()
        self.close_command = False
        self.close_after = None
        self.lock = threading.Lock()
        self.outstanding = 0
        self.id = self.pw = None
        self.number = 0
        last = f"&ls={last_session}" if last_session else ""
        status, kind, body = get(f"/.lp?start=t&ser={random.randint(0, 100000000)}&cb={self.cb}&v=5{last}&ns={namespace}",
                                 headers=self.headers)
        self.start_status, self.start_type, self.start_body = status, kind, body
        if status != 200:
            return
        self.run(body)
        if poll:
            self.start_polling()

    def start_polling(self):
        with self.lock:
            self.alive = True
        self.new_request()

    def run(self, script):
        """Runs an answer script: the calls, in order."""
        for command, callback, arguments in CALL.findall(script):
            if callback != self.cb:
                check(False, "callback id", f"{callback} != {self.cb}")
            if command == "pLPCommand":
                args = json.loads("[" + arguments.replace("'", '"') + "]")
                if args[0] == "start":
                    self.id, self.pw = args[1], args[2]
                elif args[0] == "close":
                    self.close_command = True
                    if len(args) > 1 and args[1] is not None and args[1] >= self.next_response:
                        self.close_after = args[1]
                    else:
                        self.closed.set()
            else:
                number, messages = json.loads("[" + arguments + "]")
                with self.lock:
                    self.responses[number] = messages
                    while self.next_response in self.responses:
                        for message in self.responses.pop(self.next_response):
                            self.messages.put(message)
                        if self.close_after == self.next_response:
                            self.closed.set()
                        self.next_response += 1

    def new_request(self):
        """newRequest_: one poll open at all times, a second while segments wait."""
        with self.lock:
            if self.closed.is_set() or not getattr(self, "alive", False):
                return False
            if self.outstanding >= (2 if self.pending else 1):
                return False
            self.serial += 1
            url = f"/.lp?id={self.id}&pw={self.pw}&ser={self.serial}"
            data, i = "", 0
            while self.pending:
                seg, ts, d = self.pending[0]
                if len(d) + SEG_HEADER_SIZE + len(data) > MAX_URL_DATA_SIZE:
                    break
                self.pending.pop(0)
                data += f"&seg{i}={seg}&ts{i}={ts}&d{i}={d}"
                i += 1
            self.outstanding += 1
        threading.Thread(target=self.poll, args=(url + data,), daemon=True).start()
        return True

    def poll(self, url):
        try:
            status, _, body = get(url, headers=self.headers)
        except Exception:
            status, body = 0, ""
        with self.lock:
            self.outstanding -= 1
        if status != 200:
            self.closed.set()   # the script failed to load: the SDK closes the transport
            return
        self.run(body)
        while self.new_request():
            pass

    def send(self, message):
        text = websafe_b64(json.dumps(message, separators=(",", ":")))
        parts = [text[i:i + MAX_PAYLOAD_SIZE] for i in range(0, len(text), MAX_PAYLOAD_SIZE)]
        with self.lock:
            for part in parts:
                self.pending.append((self.segment, len(parts), part))
                self.segment += 1
        while self.new_request():
            pass

    def next_message(self, what):
        try:
            return self.messages.get(timeout=WAIT)
        except queue.Empty:
            check(False, what, "no message")

    def request(self, action, body):
        """Sends request r and returns (pushes before the answer, the answer's b)."""
        self.number += 1
        number = self.number
        self.send({"t": "d", "d": {"r": number, "a": action, "b": body}})
        pushes = []
        while True:
            message = self.next_message(f"answer to {action}")
            data = message.get("d", {})
            if message.get("t") == "d" and data.get("r") == number:
                return pushes, data["b"]
            pushes.append(message)

    def handshake(self):
        message = self.next_message("handshake")
        check(message.get("t") == "c" and message["d"]["t"] == "h", "the first message is the handshake", str(message))
        return message["d"]["d"]

    def dframe(self):
        return get(f"/.lp?dframe=t&id={self.id}&pw={self.pw}")

    def leave(self):
        """What the disconnect frame's page does when it goes away."""
        return get(f"/.lp?disconn=t&id={self.id}&pw={self.pw}")


def ws_upgrade(path):
    """A WebSocket upgrade request as a browser sends it: (status, body) of the answer."""
    connection = http.client.HTTPConnection(HOST, PORT, timeout=WAIT)
    connection.request("GET", path, headers={
        "Host": f"{HOST}:{PORT}", "Connection": "Upgrade", "Upgrade": "websocket",
        "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode(), "Sec-WebSocket-Version": "13"})
    response = connection.getresponse()
    status = response.status
    body = response.read().decode() if status != 101 else ""
    connection.close()
    return status, body


def mode_session(expected_host=None):
    lp = Session()
    check(lp.start_status == 200 and "javascript" in lp.start_type, "start answers a script", f"{lp.start_status} {lp.start_type}")
    check(lp.id and lp.pw and lp.id != lp.pw, "start gives id and pw", lp.start_body)
    hello = lp.handshake()
    check(hello["v"] == "5" and len(hello["s"]) == 32, "handshake v and s", str(hello))
    check(hello["h"] == (expected_host or f"{HOST}:{PORT}"), "handshake h echoes the Host", hello["h"])
    status, body = ws_upgrade(f"/.ws?v=5&s={hello['s']}&ns=demo")
    check(status == 400, "the SDK's upgrade of the session to a WebSocket is refused before the upgrade", f"{status} {body}")
    status, kind, page = lp.dframe()
    check(status == 200 and "text/html" in kind and "disconn=t" in page, "the disconnect frame is a page that reports leaving", page)
    _, answer = lp.request("s", {"c": {"sdk.js.12-18-0": 1}})
    check(answer == {"s": "ok", "d": ""}, "stats answered", str(answer))
    rest("PUT", "/lp/room.json", {"topic": "hello"})
    pushes, answer = lp.request("q", {"p": "/lp/room", "h": ""})
    check(answer["s"] == "ok" and answer["d"] == {}, "listen answered ok {}", str(answer))
    check(pushes and pushes[0]["d"]["a"] == "d" and pushes[0]["d"]["b"] == {"p": "/lp/room", "d": {"topic": "hello"}},
          "the listen's data comes before its ok", str(pushes))
    pushes, answer = lp.request("p", {"p": "/lp/room/topic", "d": "changed"})
    check(answer["s"] == "ok", "put answered ok", str(answer))
    check(any(p["d"]["b"].get("d") == "changed" for p in pushes), "own write pushed before the ok", str(pushes))
    # Another client's write reaches this one on a poll.
    rest("PUT", "/lp/room/topic.json", "from rest")
    message = lp.next_message("push of another client's write")
    check(message["d"]["b"] == {"p": "/lp/room/topic", "d": "from rest"}, "another client's write is pushed", str(message))
    # A message of many segments (about 14,000 characters of base64).
    large = "x" * 10000
    _, answer = lp.request("p", {"p": "/lp/large", "d": large})
    check(answer["s"] == "ok", "a message of several segments is joined", str(answer))
    check(rest("GET", "/lp/large.json") == (200, large), "its value stored whole")
    # onDisconnect runs when the client leaves (the disconnect frame's page goes away).
    _, answer = lp.request("o", {"p": "/lp/presence", "d": "offline"})
    check(answer["s"] == "ok", "onDisconnect registered", str(answer))
    rest("PUT", "/lp/presence.json", "online")
    status, _, _ = lp.leave()
    check(status == 200, "disconn answered")
    wait_for(lambda: rest("GET", "/lp/presence.json") == (200, "offline"), "onDisconnect ran when the client left")
    lp.closed.wait(WAIT)
    check(lp.closed.is_set(), "the held poll got the close command")
    status, _, body = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 404 and "error" in json.loads(body), "a poll of the ended session is refused", body)
    status, _, body = get(f"/.lp?id={lp.id}&pw={'0' * 32}&ser=1")
    check(status == 404, "a wrong password is refused", body)


def mode_proxy():
    """Through a proxy that refuses the WebSocket upgrade: /.ws fails, /.lp works."""
    status, body = ws_upgrade("/.ws?v=5&ns=demo")
    check(status == 400, "the proxy passed no upgrade: /.ws is refused", f"{status} {body}")
    mode_session(expected_host=f"{HOST}:{PORT}")


def mode_hold():
    """pollHoldSeconds is small: an idle poll is answered empty, and the session lives on."""
    lp = Session(poll=False)
    lp.handshake()
    status, _, body = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 200 and body == "", "an idle poll is answered empty after the hold time", repr(body))
    lp.start_polling()
    _, answer = lp.request("s", {"c": {}})
    check(answer["s"] == "ok", "the session lives on after an empty answer", str(answer))
    lp.leave()


def mode_idle():
    """sessionIdleSeconds is small: a client that stops polling loses its session, whose
    onDisconnect runs."""
    lp = Session()
    lp.handshake()
    _, answer = lp.request("o", {"p": "/lp/idle", "d": "gone"})
    check(answer["s"] == "ok", "onDisconnect registered", str(answer))
    with lp.lock:
        lp.alive = False      # stop polling; the poll held now is answered at its hold time
    wait_for(lambda: rest("GET", "/lp/idle.json") == (200, "gone"), "onDisconnect ran after the idle timeout")
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 404, "the idle session is gone")


def mode_max_sessions():
    """maxSessions is 2: the third start is refused with 503 until one leaves."""
    first, second = Session(), Session()
    first.handshake()
    second.handshake()
    status, kind, body = get("/.lp?start=t&ser=1&cb=7&v=5&ns=demo")
    check(status == 503 and "error" in json.loads(body), "a third session is refused", f"{status} {body}")
    first.leave()
    wait_for(lambda: Session(poll=False).start_status == 200, "a session can start once one left")
    second.leave()


def mode_pending_out():
    """maxPendingBytes is small: a listener that stops polling while data for it piles up
    loses its session (onDisconnect runs)."""
    lp = Session()
    lp.handshake()
    _, answer = lp.request("o", {"p": "/lp/overflow", "d": "ended"})
    check(answer["s"] == "ok", "onDisconnect registered")
    _, answer = lp.request("q", {"p": "/lp/feed", "h": ""})
    check(answer["s"] == "ok", "listening")
    with lp.lock:
        lp.alive = False
    for i in range(40):
        rest("PUT", f"/lp/feed/{i}.json", "y" * 512)
    wait_for(lambda: rest("GET", "/lp/overflow.json") == (200, "ended"), "the session ended past its pending bytes")
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 404, "the overflowed session is gone")


def mode_pending_in():
    """maxPendingBytes is small: segments of a message never finished end the session."""
    lp = Session(poll=False)
    lp.handshake()
    # Segments 1.. of a message of 100 segments whose segment 0 never comes.
    data = "&".join(f"seg{i}={i + 1}&ts{i}=100&d{i}={'A' * 1000}" for i in range(5))
    status, _, body = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1&{data}")
    check(status == 200 and "'close'" in body, "the poll gets the close command", body)
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=2")
    check(status == 404, "the session is gone")
    # A message announced in chunks (the WebSocket's framing, spec 2.1) held past the bound.
    chunked = Session()
    chunked.handshake()
    chunked.send(3)                       # "3": three chunks follow
    chunked.send("x" * 2500)              # two of them (each in segments under the bound)
    chunked.send("y" * 2500)              # make over 4 KiB held for the third
    chunked.closed.wait(WAIT)
    check(chunked.close_command, "a chunked message held past the bound ends the session")
    status, _, body = get(f"/.lp?id=x&pw=y&ser=1&seg0=zz")
    check(status == 404, "an unknown session is refused before its segments are read", body)


def poll_by_hand(lp, messages):
    """One poll carrying `messages` whole, made by hand (the session's own polling is off):
    (status, content type, body) once it is answered."""
    data, i = "", 0
    for message in messages:
        text = websafe_b64(json.dumps(message, separators=(",", ":")))
        parts = [text[k:k + MAX_PAYLOAD_SIZE] for k in range(0, len(text), MAX_PAYLOAD_SIZE)]
        for part in parts:
            data += f"&seg{i}={lp.segment}&ts{i}={len(parts)}&d{i}={part}"
            lp.segment += 1
            i += 1
    lp.serial += 1
    return get(f"/.lp?id={lp.id}&pw={lp.pw}&ser={lp.serial}{data}", headers=lp.headers)


def request_by_hand(lp, number, action, body):
    """Sends request `number` on a poll made by hand, then polls by hand (one at a time,
    each answered before the next) until its answer came; the answer's b. Other messages
    (pushes) are dropped."""
    deadline = time.monotonic() + WAIT
    messages = [{"t": "d", "d": {"r": number, "a": action, "b": body}}]
    while time.monotonic() < deadline:
        status, _, script = poll_by_hand(lp, messages)
        check(status == 200, f"a poll for {action}", script)
        messages = []
        lp.run(script)
        while not lp.messages.empty():
            message = lp.messages.get()
            if message.get("t") == "d" and message["d"].get("r") == number:
                return message["d"]["b"]
    check(False, f"the answer to {action}", "timed out")


def unsent_bytes():
    with urllib.request.urlopen(BASE + "/metrics", timeout=WAIT) as response:
        text = response.read().decode()
    return int(float(re.search(r"^hearth_http_unsent_bytes (\S+)$", text, re.M).group(1)))


def mode_first_message():
    """maxPendingBytes is 64 KiB: a read larger than that goes out on a poll held for it,
    but one that would wait for a poll (the client polls no more) ends the session."""
    big = "x" * 100_000
    check(rest("PUT", "/lp/big.json", big)[0] == 200, "a 100 KB value")
    # Every poll by hand: no poll of the session's own is in flight to take an answer.
    lp = Session(poll=False)
    lp.handshake()
    check(request_by_hand(lp, 1, "o", {"p": "/lp/first", "d": "ended"})["s"] == "ok", "onDisconnect registered")
    # Two reads on one poll: the first answer goes on that poll, the second has none.
    reads = [{"t": "d", "d": {"r": 100 + n, "a": "g", "b": {"p": "/lp/big", "q": {}}}} for n in range(2)]
    status, _, body = poll_by_hand(lp, reads)
    check(status == 200 and big in body, "a message over the bound goes out on the poll held for it", body[:200])
    wait_for(lambda: rest("GET", "/lp/first.json") == (200, "ended"), "the session ended: the second read had no poll")
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 404, "the session is gone")


def mode_unsent():
    """The server's maxUnsentBytes is 256 KiB and maxPendingBytes the default 8 MiB: pushes
    waiting for a client that does not poll are counted in the server's unsent bytes (the
    /metrics gauge), and the session ends once they would pass them; its bytes are
    released."""
    # Every poll by hand, each answered before the next: no poll of the session's own is
    # held or in flight to take a push.
    lp = Session(poll=False)
    lp.handshake()
    check(request_by_hand(lp, 1, "o", {"p": "/lp/unsent", "d": "ended"})["s"] == "ok", "onDisconnect registered")
    check(request_by_hand(lp, 2, "q", {"p": "/lp/feed", "h": ""})["s"] == "ok", "listening")
    for i in range(0, 6):
        check(rest("PUT", f"/lp/feed/{i}.json", "y" * 20_000)[0] == 200, f"push {i} written")
    wait_for(lambda: unsent_bytes() >= 5 * 20_000, "pushes waiting for a poll count as unsent bytes")
    for i in range(6, 40):
        rest("PUT", f"/lp/feed/{i}.json", "y" * 20_000)
    wait_for(lambda: rest("GET", "/lp/unsent.json") == (200, "ended"), "the session ended past the server's unsent bytes")
    wait_for(lambda: unsent_bytes() == 0, "its bytes are released")
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser=1")
    check(status == 404, "the session is gone")


def mode_per_address():
    """maxSessionsPerAddress is 2, behind a trusted proxy (127.0.0.1): a third session of
    one forwarded client is refused with 429 and an error; another client, and the proxy's
    own address, still get sessions; one that leaves makes room."""
    one = {"X-Forwarded-For": "203.0.113.7"}
    first, second = Session(headers=one), Session(headers=one)
    first.handshake()
    second.handshake()
    status, _, body = get("/.lp?start=t&ser=1&cb=7&v=5&ns=demo", headers=one)
    check(status == 429 and "error" in json.loads(body), "a third session of one address is refused", f"{status} {body}")
    other = Session(headers={"X-Forwarded-For": "203.0.113.8"})
    check(other.start_status == 200, "another address still gets a session", other.start_body)
    other.handshake()
    direct = Session()
    check(direct.start_status == 200, "and so does the proxy's own", direct.start_body)
    first.leave()
    wait_for(lambda: Session(poll=False, headers=one).start_status == 200, "a session of that address once one left")


def mode_emulator_referer():
    """Emulator mode: a long-poll session started from a page of another origin (its script
    loads carry that page as Referer), or with no Referer at all, is refused `owner`; one
    from a loopback page is an admin."""
    for name, headers in (("a hostile page", {"Referer": "https://evil.example/page.html"}),
                          ("a look-alike host", {"Referer": "http://localhost.evil.example/"}),
                          ("no Referer", {})):
        lp = Session(headers=headers)
        lp.handshake()
        _, answer = lp.request("auth", {"cred": "owner"})
        check(answer["s"] != "ok", f"owner from {name} is refused", str(answer))
        _, answer = lp.request("p", {"p": "/closed/x", "d": 1})
        check(answer["s"] == "permission_denied", f"and is no admin ({name})", str(answer))
        lp.leave()
    local = Session(headers={"Referer": "http://localhost:5173/index.html"})
    local.handshake()
    _, answer = local.request("auth", {"cred": "owner"})
    check(answer["s"] == "ok", "owner from a loopback page", str(answer))
    _, answer = local.request("p", {"p": "/closed/x", "d": 1})
    check(answer["s"] == "ok", "writes as an admin", str(answer))
    local.leave()


def mode_reconnect():
    """A client that reconnects names its previous session (`ls`): that session ends
    first, its onDisconnect operations committed before the new session's handshake, and
    its held poll gets the close command."""
    old = Session()
    hello = old.handshake()
    _, answer = old.request("o", {"p": "/lp/presence2", "d": "offline"})
    check(answer["s"] == "ok", "onDisconnect registered on the first session")
    rest("PUT", "/lp/presence2.json", "online")
    new = Session(last_session=hello["s"])
    new.handshake()
    check(rest("GET", "/lp/presence2.json") == (200, "offline"), "the old session's onDisconnect ran before the new handshake")
    old.closed.wait(WAIT)
    check(old.close_command, "the old session's poll got the close command")
    _, answer = new.request("p", {"p": "/lp/presence2", "d": "online"})
    check(answer["s"] == "ok" and rest("GET", "/lp/presence2.json") == (200, "online"), "the new session writes after it")
    new.leave()


def mode_shutdown():
    """Interactive: a session with a poll held; the test stops the server: the poll gets
    the close command (not a cut connection). Two polls are sent at once: the server
    answers one of them (empty) when the other arrives, so once one came back the other is
    being held."""
    lp = Session(poll=False)
    lp.handshake()
    answers = queue.Queue()

    def poll(serial):
        status, _, body = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser={serial}")
        answers.put((status, body))

    for serial in (1, 2):
        threading.Thread(target=poll, args=(serial,), daemon=True).start()
    status, body = answers.get(timeout=WAIT)
    check(status == 200 and body == "", "the older poll is released when a newer one comes", repr(body))
    print("ready", flush=True)
    status, body = answers.get(timeout=WAIT * 3)
    lp.run(body)
    check(status == 200 and lp.close_command, "the held poll got the close command at shutdown", f"{status} {body!r}")


def mode_namespace():
    """Namespaces on /.lp: a session opened with ns=env-a reads and writes that namespace only
    (its polls, like this client's, need not repeat ns); an unlisted name gets the shutdown."""
    rest("PUT", "/x.json?ns=env-a", "a")
    rest("PUT", "/x.json", "default")
    lp = Session(namespace="env-a")
    lp.handshake()
    pushes, answer = lp.request("q", {"p": "/x", "h": ""})
    check(answer["s"] == "ok" and pushes and pushes[0]["d"]["b"] == {"p": "/x", "d": "a"}, "a listen reads its namespace", str(pushes))
    _, answer = lp.request("p", {"p": "/y", "d": "from lp"})
    check(answer["s"] == "ok", "put answered ok", str(answer))
    check(rest("GET", "/y.json?ns=env-a") == (200, "from lp"), "the write is in its namespace")
    check(rest("GET", "/y.json") == (200, None), "and not in the default")
    lp.leave()
    unknown = Session(namespace="nope")
    message = unknown.next_message("the shutdown of an unknown namespace")
    check(message.get("t") == "c" and message["d"].get("t") == "s", "an unknown namespace gets the shutdown", str(message))


def answers_by_hand(lp, messages, numbers):
    """Sends `messages` on one poll made by hand, then polls by hand until the answers to
    request `numbers` all came: {number: answer's b}. Checks that no close command came."""
    deadline = time.monotonic() + WAIT
    answers = {}
    while time.monotonic() < deadline and len(answers) < len(numbers):
        status, _, script = poll_by_hand(lp, messages)
        check(status == 200, "a poll", script)
        messages = []
        lp.run(script)
        check(not lp.close_command, "the session stays open", script)
        while not lp.messages.empty():
            message = lp.messages.get()
            if message.get("t") == "d" and message["d"].get("r") in numbers:
                answers[message["d"]["r"]] = message["d"]["b"]
    check(len(answers) == len(numbers), "every answer came", str(answers))
    return answers


def puts(first, count, value, path="/lp/waiting"):
    return [{"t": "d", "d": {"r": first + n, "a": "p", "b": {"p": f"{path}/{first + n}", "d": value}}}
            for n in range(count)]


def ends_behind_one_poll(lp, messages, what):
    """Sends `messages` on one poll made by hand: its answer is the close command, the
    session's onDisconnect ran, and the session is gone."""
    status, _, body = poll_by_hand(lp, messages)
    check(status == 200 and "'close'" in body, f"{what}: the poll gets the close command", body[:300])
    wait_for(lambda: rest("GET", "/lp/ended.json") == (200, "ended"), f"{what}: onDisconnect ran")
    status, _, _ = get(f"/.lp?id={lp.id}&pw={lp.pw}&ser={lp.serial + 1}")
    check(status == 404, f"{what}: the session is gone")


def mode_waiting_bytes():
    """maxPendingBytes is 2 KiB: requests that arrive while one runs wait whole, and a long
    poll cannot stop the next poll from bringing more. Under the bound they are answered
    in order; past it the session ends (rather than holding them), and its onDisconnect
    runs."""
    lp = Session(poll=False)
    lp.handshake()
    check(request_by_hand(lp, 1, "o", {"p": "/lp/ended", "d": "ended"})["s"] == "ok", "onDisconnect registered")
    # Three puts of 600 bytes on one poll: one runs, two wait (~1.3 KB, under 2 KiB).
    answers = answers_by_hand(lp, puts(10, 3, "u" * 600), [10, 11, 12])
    check(all(answer["s"] == "ok" for answer in answers.values()), "under the bound every put is answered ok", str(answers))
    check(rest("GET", "/lp/waiting/12.json") == (200, "u" * 600), "the last put is written")
    # Five puts of 900 bytes: one runs, four wait (~3.9 KB, past 2 KiB).
    ends_behind_one_poll(lp, puts(20, 5, "v" * 900), "past the waiting bytes")


def mode_waiting_count():
    """The wire's maxPendingRequests is 4: a WebSocket would stop reading there, but a long
    poll cannot, so the session ends past it; under it every request is answered."""
    lp = Session(poll=False)
    lp.handshake()
    check(request_by_hand(lp, 1, "o", {"p": "/lp/ended", "d": "ended"})["s"] == "ok", "onDisconnect registered")
    # Four small puts on one poll: one runs, at most three wait.
    answers = answers_by_hand(lp, puts(10, 4, "s"), [10, 11, 12, 13])
    check(all(answer["s"] == "ok" for answer in answers.values()), "under the bound every put is answered ok", str(answers))
    # Twenty: one runs, and the sixth to arrive finds four waiting.
    ends_behind_one_poll(lp, puts(20, 20, "t"), "past the waiting requests")


def mode_garbled():
    """A poll whose second message is not base64: the session ends, and the first (a put)
    is not run either: a poll's messages are decoded before any is taken."""
    garbled = Session(poll=False)
    garbled.handshake()
    put = websafe_b64(json.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/lp/garbled", "d": 1}}}))
    status, _, body = get(f"/.lp?id={garbled.id}&pw={garbled.pw}&ser=1&seg0=0&ts0=1&d0={put}&seg1=1&ts1=1&d1=%21%21%21")
    check(status == 200 and "'close'" in body, "a message that is not base64 ends the session", body)
    check(rest("GET", "/lp/garbled.json") == (200, None), "and no message of its poll ran")
    status, _, _ = get(f"/.lp?id={garbled.id}&pw={garbled.pw}&ser=2")
    check(status == 404, "the session is gone")


if __name__ == "__main__":
    {"session": mode_session, "proxy": mode_proxy, "hold": mode_hold, "idle": mode_idle,
     "max_sessions": mode_max_sessions, "pending_out": mode_pending_out, "pending_in": mode_pending_in,
     "shutdown": mode_shutdown, "reconnect": mode_reconnect, "namespace": mode_namespace,
     "first_message": mode_first_message, "unsent": mode_unsent, "per_address": mode_per_address,
     "emulator_referer": mode_emulator_referer, "waiting_bytes": mode_waiting_bytes,
     "waiting_count": mode_waiting_count, "garbled": mode_garbled}[MODE]()
    print("done", flush=True)

#!/usr/bin/env python3
"""Incomplete messages: the server's memory (RSS) when unauthenticated
sockets each send most of a large WebSocket message on /.ws and never finish it, and
whether legitimate clients are still served meanwhile. Not a test: numbers for
docs/bench/history.md.

For each binary given (e.g. the commit before the bound and the current one), a fresh
server (unread_responses.Server: 127.0.0.1, port 0, temp data dir, the reference rules,
HEARTH_MAX_CONNECTIONS(_PER_ADDRESS)=5000) and:

1. RSS after SETTLE_SECONDS ("before");
2. ATTACKERS raw sockets, spread round-robin over ADDRESSES loopback source addresses
   (127.0.0.1, 127.0.0.2, ...), each upgrading /.ws?v=5&ns=demo and then sending, per MODE:
   `fragments`: one text frame without FIN of PARTIAL_MIB MiB (mask key 0, so the payload
   needs no masking work), never the rest; `chunks`: the wire protocol's chunk count 1025
   then PARTIAL_MIB MiB in 16,384-byte chunks, never the last ones. Eight sender threads;
   RSS sampled every 0.5 s during the sends and HOLD_SECONDS after, the peak reported;
3. while they hold (after the sends), legitimate clients: from 127.0.0.1 (the attacker's
   address) a small wire `g` and GET /healthz; from a loopback address no attacker uses a
   2 MiB `p` in SDK-sized chunks (answered, here permission_denied by the reference rules:
   an answer is what counts) and a small `g`;
4. each attacker socket's fate: closed by the server with a close code (1008, 1009, 1013),
   or still open (peeked with MSG_PEEK-free reads after the hold);
5. every socket closed; RSS after SETTLE_SECONDS ("after close").

Usage: scripts/bench/incomplete_messages.py BINARY [BINARY...]   (LABELS=before,after)
Knobs (env): ATTACKERS (80) PARTIAL_MIB (15) ADDRESSES (1) MODE (fragments) HOLD_SECONDS (5)
SETTLE_SECONDS (5). HEARTH_MAX_INCOMPLETE_BYTES(_PER_ADDRESS) are passed on when set.
Everything on 127.0.0.0/8; sockets closed and servers stopped at the end (also on errors).
"""
import json
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runcpu  # noqa: E402
import unread_responses as ur  # noqa: E402  (its Server, RSS sampling and cleanup)

ATTACKERS = int(os.environ.get("ATTACKERS", "80"))
PARTIAL_MIB = float(os.environ.get("PARTIAL_MIB", "15"))
ADDRESSES = int(os.environ.get("ADDRESSES", "1"))
MODE = os.environ.get("MODE", "fragments")
HOLD_SECONDS = float(os.environ.get("HOLD_SECONDS", "5"))
SETTLE_SECONDS = float(os.environ.get("SETTLE_SECONDS", "5"))
ur.PASSED_ENV = ("HEARTH_MAX_INCOMPLETE_BYTES", "HEARTH_MAX_INCOMPLETE_BYTES_PER_ADDRESS")
CHUNK = 16_384
LEGIT_ADDRESS = "127.0.0.250"


def frame(payload, fin=True, opcode=0x1):
    """A client text frame masked with the key 0 (valid, and the payload stays as it is)."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n <= 0xFFFF:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + b"\0\0\0\0" + payload


def upgrade(port, source):
    sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    sock.sendall((f"GET /.ws?v=5&ns=demo HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(4096)
        if not data:
            raise OSError("closed during the handshake")
        head += data
    if not head.startswith(b"HTTP/1.1 101"):
        raise OSError(head.split(b"\r\n")[0].decode())
    return sock, head.split(b"\r\n\r\n", 1)[1]


def read_frames(sock, buffered, until):
    """Server frames (opcode, payload) until `until(opcode, payload)` or the end."""
    buffer = bytearray(buffered)
    while True:
        while len(buffer) >= 2:
            n = buffer[1] & 0x7F
            start = 2
            if n == 126:
                if len(buffer) < 4:
                    break
                n, start = struct.unpack(">H", buffer[2:4])[0], 4
            elif n == 127:
                if len(buffer) < 10:
                    break
                n, start = struct.unpack(">Q", buffer[2:10])[0], 10
            if len(buffer) < start + n:
                break
            opcode, payload = buffer[0] & 0x0F, bytes(buffer[start:start + n])
            del buffer[:start + n]
            if until(opcode, payload):
                return opcode, payload
        data = sock.recv(1 << 16)
        if not data:
            return None, b""
        buffer += data


def wire_call(port, source, message, chunked=False):
    """One wire request on a fresh connection; the status of its answer (or why none)."""
    try:
        sock, rest = upgrade(port, source)
        text = json.dumps(message).encode()
        if chunked and len(text) > CHUNK:
            parts = [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)]
            sock.sendall(frame(str(len(parts)).encode()) + b"".join(frame(p) for p in parts))
        else:
            sock.sendall(frame(text))
        opcode, payload = read_frames(sock, rest, lambda o, p: o == 0x8 or b'"r":1' in p)
        sock.close()
        if opcode == 0x1:
            return json.loads(payload)["d"]["b"]["s"]
        return f"closed {struct.unpack('>H', payload[:2])[0] if len(payload) >= 2 else '-'}"
    except OSError as error:
        return f"error {error}"


def healthz(port, source):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        line = sock.recv(64).split(b"\r\n")[0].decode()
        sock.close()
        return line
    except OSError as error:
        return f"error {error}"


def attack(port, sources, size, results, index_range):
    payload = b"a" * size
    for i in index_range:
        try:
            sock, rest = upgrade(port, sources[i % len(sources)])
            ur._sockets.append(sock)
            results[i] = (sock, rest, "open")
            if MODE == "chunks":
                chunk = frame(b"c" * CHUNK)
                data = frame(b"1025") + chunk * (size // CHUNK)
            else:
                data = frame(payload, fin=False)
            sock.sendall(data)
        except OSError as error:
            results[i] = (results[i][0] if results[i] else None, b"", f"send failed: {type(error).__name__}")


def fate(sock, rest):
    """The close code the server sent, or 'open' if it sent none within a second."""
    sock.settimeout(1)
    try:
        opcode, payload = read_frames(sock, rest, lambda o, p: o == 0x8)
    except socket.timeout:
        return "open"
    except OSError as error:
        return f"reset ({type(error).__name__})"
    if opcode == 0x8 and len(payload) >= 2:
        return f"close {struct.unpack('>H', payload[:2])[0]}"
    return "ended without a close frame"


def run(binary, label):
    server = ur.Server(binary)
    pid, port = server.proc.pid, server.port
    meter = runcpu.Meter(pid)
    time.sleep(SETTLE_SECONDS)
    before = ur.rss_mib(pid)
    sources = [f"127.0.0.{i + 1}" for i in range(ADDRESSES)]
    size = int(PARTIAL_MIB * 1024 * 1024)
    results = [None] * ATTACKERS
    threads = [threading.Thread(target=attack, args=(port, sources, size, results, range(t, ATTACKERS, 8)))
               for t in range(8)]
    peak, started = before, time.time()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, ur.rss_mib(pid))
        time.sleep(0.5)
    sent_seconds = time.time() - started
    hold_end = time.time() + HOLD_SECONDS
    while time.time() < hold_end:
        peak = max(peak, ur.rss_mib(pid))
        time.sleep(0.5)
    held = ur.rss_mib(pid)
    legit = {
        "small g from the attacker's address": wire_call(port, "127.0.0.1", {"t": "d", "d": {"r": 1, "a": "g", "b": {"p": "/.info/serverTimeOffset", "q": {}}}}),
        "GET /healthz from the attacker's address": healthz(port, "127.0.0.1"),
        "2 MiB p in chunks from another address": wire_call(port, LEGIT_ADDRESS, {"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/legit", "d": "x" * (2 << 20)}}}, chunked=True),
        "small g from another address": wire_call(port, LEGIT_ADDRESS, {"t": "d", "d": {"r": 1, "a": "g", "b": {"p": "/.info/serverTimeOffset", "q": {}}}}),
    }
    peak = max(peak, ur.rss_mib(pid))
    fates = {}
    for entry in results:
        sock, rest, state = entry if entry else (None, b"", "not connected")
        outcome = fate(sock, rest) if sock is not None and state == "open" else state
        fates[outcome] = fates.get(outcome, 0) + 1
    ur.close_sockets()
    time.sleep(SETTLE_SECONDS)
    after = ur.rss_mib(pid)
    log = [line for line in server.log if "closed" in line and "with 10" in line]
    metered = meter.read()
    server.stop()
    return {"label": label, "mode": MODE, "attackers": ATTACKERS, "addresses": ADDRESSES, "partial_mib": PARTIAL_MIB,
            "rss_before_mib": round(before), "rss_peak_mib": round(peak), "rss_held_mib": round(held),
            "rss_after_close_mib": round(after), "send_seconds": round(sent_seconds, 1), "attackers_fate": fates,
            "legitimate": legit, "policy_close_log_lines": len(log), "log_sample": log[:2], **metered}


def main():
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(__doc__)
    labels = os.environ.get("LABELS", ",".join(f"binary{i + 1}" for i in range(len(binaries)))).split(",")
    for binary, label in zip(binaries, labels):
        print(json.dumps(run(binary, label), indent=1), flush=True)


if __name__ == "__main__":
    main()

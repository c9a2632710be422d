"""What the wire protocol makes the rules evaluate, for the rules coverage report's tests
(docs/rules.md, "Coverage"); over our wire client (wire_client.py).

Usage: coverage_client.py wire <port>: in namespace `demo`, unauthenticated, a listen on
/wire (its .read), a write to /wire/x (its .write and /wire/$k's .validate) and a tagged
query on /wire ordered by `score` (its .indexOn entry). Prints `ok <check>`, exits 1 on a
failure.
"""
import sys

from wire_client import Client, check


def mode_wire():
    client = Client(namespace="demo")
    check(client.call("q", {"p": "/wire", "h": ""})["s"] == "ok", "listen on /wire")
    check(client.call("p", {"p": "/wire/x", "d": {"score": 1}})["s"] == "ok", "write to /wire/x")
    answer = client.call("q", {"p": "/wire", "q": {"i": "score", "l": 1, "vf": "l"}, "t": 2, "h": ""})
    check(answer["s"] == "ok" and "w" not in answer["d"], "query ordered by score, indexed", answer)
    client.close()


if __name__ == "__main__":
    globals()["mode_" + sys.argv[1]]()
    print("done", flush=True)

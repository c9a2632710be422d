"""What the rules coverage report's tests make the rules evaluate (docs/rules.md,
"Coverage"), over our wire client (wire_client.py). Prints `ok <check>`, exits 1 on a
failure.

Usage: coverage_client.py MODE <port>
* wire: in namespace `demo`, unauthenticated, a listen on /wire (its .read), a write to
  /wire/x (its .write and /wire/$k's .validate) and a tagged query on /wire ordered by
  `score` (its .indexOn entry).
* suite: a rules test suite as `@firebase/rules-unit-testing` runs it against the emulator
  (rules_unit_testing.py): initializeTestEnvironment sets RULES in namespace `demo-cov`,
  then authenticatedContext('alice') writes her record and is refused bob's,
  unauthenticatedContext() is refused alice's record, and alice reads it. No test reads
  /admin.
"""
import sys

from rules_unit_testing import context, put_rules
from wire_client import Client, check

NAMESPACE = "demo-cov"
RULES = """{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid == $uid",
        ".write": "auth != null && auth.uid == $uid",
        ".validate": "newData.hasChildren(['name'])"
      }
    },
    "admin": {".read": "auth.token.admin === true"}
  }
}"""


def mode_wire():
    client = Client(namespace="demo")
    check(client.call("q", {"p": "/wire", "h": ""})["s"] == "ok", "listen on /wire")
    check(client.call("p", {"p": "/wire/x", "d": {"score": 1}})["s"] == "ok", "write to /wire/x")
    answer = client.call("q", {"p": "/wire", "q": {"i": "score", "l": 1, "vf": "l"}, "t": 2, "h": ""})
    check(answer["s"] == "ok" and "w" not in answer["d"], "query ordered by score, indexed", answer)
    client.close()


def mode_suite():
    status, body = put_rules(NAMESPACE, RULES)
    check(status == 200 and body == {"status": "ok"}, "initializeTestEnvironment set the rules", (status, body))
    alice, guest = context(NAMESPACE, "alice"), context(NAMESPACE)
    check(alice.call("p", {"p": "/users/alice", "d": {"name": "Alice"}})["s"] == "ok", "alice writes her record")
    check(alice.call("p", {"p": "/users/bob", "d": {"name": "Bob"}})["s"] == "permission_denied", "alice is refused bob's record")
    check(guest.call("g", {"p": "/users/alice", "q": {}})["s"] == "permission_denied", "a guest is refused alice's record")
    check(alice.call("g", {"p": "/users/alice", "q": {}})["d"] == {"name": "Alice"}, "alice reads her record")
    alice.close()
    guest.close()


if __name__ == "__main__":
    globals()["mode_" + sys.argv[1]]()
    print("done", flush=True)

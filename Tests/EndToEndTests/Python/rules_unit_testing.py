"""What `@firebase/rules-unit-testing` (5.0.2) does against a database emulator
(docs/protocol/emulator.md §4.7), driven against Hearth in emulator mode
(`--accept-emulator-owner`): two test environments side by side, each its own namespace
(the library gives each `projectId` its own), over our wire client (wire_client.py).

* initializeTestEnvironment: PUT /.settings/rules.json?ns=<projectId>, Bearer owner, the rules text
* authenticatedContext(uid, claims): /.ws?v=5&ns=<projectId>, `auth` with an unsigned mock token
* unauthenticatedContext(): no auth
* withSecurityRulesDisabled / clearDatabase: `gauth` owner, then set(ref(db), null)

Usage: rules_unit_testing.py side_by_side <port>. Prints `ok <check>`, exits 1 on a failure.
"""
import base64
import json
import sys
import urllib.request

from wire_client import BASE, Client, check

ONE, TWO = "demo-env-one", "demo-env-two"
RULES_ONE = """{
  // environment one: users write their own record; admins (a claim) write /config
  "rules": {
    "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}},
    "config": {".read": true, ".write": "auth != null && auth.token.admin === true"}
  }
}"""
RULES_TWO = """{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": false}}}}"""


def b64(data):
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def mock_token(project, uid, claims=None):
    """createMockUserToken (the SDKs' util package): unsigned, iat 0, exp 3600."""
    payload = {"iss": f"https://securetoken.google.com/{project}", "aud": project, "iat": 0, "exp": 3600, "auth_time": 0,
               "sub": uid, "user_id": uid, "firebase": {"sign_in_provider": "custom", "identities": {}}}
    payload.update(claims or {})
    return b64({"alg": "none", "type": "JWT"}) + "." + b64(payload) + "."


def put_rules(project, text):
    request = urllib.request.Request(f"{BASE}/.settings/rules.json?ns={project}", data=text.encode(), method="PUT",
                                     headers={"Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def rest_get(project, path, token):
    request = urllib.request.Request(f"{BASE}{path}.json?ns={project}&auth={token}")
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def context(project, uid=None, claims=None, admin=False):
    client = Client(namespace=project)
    if admin:
        check(client.call("gauth", {"cred": "owner"})["s"] == "ok", f"{project}: gauth owner (withSecurityRulesDisabled)")
    elif uid:
        answer = client.call("auth", {"cred": mock_token(project, uid, claims)})
        check(answer["s"] == "ok" and answer["d"]["auth"]["uid"] == uid, f"{project}: mock token for {uid} accepted", answer)
    return client


def mode_side_by_side():
    status, body = put_rules(ONE, "{\"rules\": {\".read\": tru}}")
    check(status == 400 and "error" in body, "bad rules answered 400 with an error", (status, body))
    for project, rules in [(ONE, RULES_ONE), (TWO, RULES_TWO)]:
        status, body = put_rules(project, rules)
        check(status == 200 and body == {"status": "ok"}, f"{project}: initializeTestEnvironment set the rules", (status, body))

    alice_one, alice_two = context(ONE, "alice"), context(TWO, "alice")
    admin_one, admin_two = context(ONE, admin=True), context(TWO, admin=True)
    guest_one = context(ONE)

    check(alice_one.call("p", {"p": "/users/alice", "d": {"n": 1}})["s"] == "ok", "env one's rules let alice write her record")
    check(alice_two.call("p", {"p": "/users/alice", "d": {"n": 2}})["s"] == "permission_denied", "env two's rules refuse it")
    check(alice_one.call("p", {"p": "/users/bob", "d": {"n": 1}})["s"] == "permission_denied", "not another user's record")
    check(admin_two.call("p", {"p": "/users/alice", "d": {"n": 2}})["s"] == "ok", "rules disabled: owner writes in env two")
    check(alice_one.call("g", {"p": "/users/alice", "q": {}})["d"] == {"n": 1}, "env one keeps its data")
    check(alice_two.call("g", {"p": "/users/alice", "q": {}})["d"] == {"n": 2}, "env two keeps its data")
    check(guest_one.call("g", {"p": "/users/alice", "q": {}})["s"] == "permission_denied", "unauthenticatedContext is refused")
    check(rest_get(ONE, "/users/alice", mock_token(ONE, "alice")) == (200, {"n": 1}), "the mock token on REST (?auth=)")

    # Only straight from this machine: through a proxy (a forwarding header on the upgrade)
    # neither a mock token nor owner is a credential.
    proxied = Client(namespace=ONE, headers={"X-Forwarded-For": "203.0.113.9"})
    answer = proxied.call("auth", {"cred": mock_token(ONE, "alice")})
    check(answer["s"] == "invalid_token", "a mock token through a proxy is refused", answer)
    check(proxied.call("gauth", {"cred": "owner"})["s"] == "invalid_token", "owner through a proxy is refused")
    proxied.close()

    # Claims: authenticatedContext('carol', {admin: true}).
    check(context(ONE, "carol").call("p", {"p": "/config/x", "d": 1})["s"] == "permission_denied", "no claim: refused")
    check(context(ONE, "carol", {"admin": True}).call("p", {"p": "/config/x", "d": 1})["s"] == "ok", "the admin claim lets it")

    # Streams are kept apart: env one's listener sees its own writes, never env two's.
    number = alice_one.request("q", {"p": "/users/alice", "h": ""})
    alice_one.answer(number)
    check(admin_two.call("p", {"p": "/users/alice", "d": {"n": 22}})["s"] == "ok", "env two written again")
    check(admin_one.call("p", {"p": "/users/alice", "d": {"n": 3}})["s"] == "ok", "env one written")
    alice_one.push("d", lambda b: b.get("d") == {"n": 3}, "env one's push")
    seen = [b.get("d") for b in alice_one.pushes("d")]
    check({"n": 22} not in seen and {"n": 2} not in seen, "no push of env two's writes in env one", seen)

    # clearDatabase(): gauth owner, set(ref(db), null): immediate, and env one's only.
    check(admin_one.call("p", {"p": "/", "d": None})["s"] == "ok", "clearDatabase in env one")
    alice_one.push("d", lambda b: b.get("d") is None, "the listener sees the clear")
    check(admin_one.call("g", {"p": "/", "q": {}})["d"] is None, "env one is empty at once")
    check(admin_two.call("g", {"p": "/users/alice", "q": {}})["d"] == {"n": 22}, "env two is untouched")
    # onDisconnect records are the namespace's: env two's runs in env two only.
    watcher_two, watcher_one = context(TWO, admin=True), context(ONE, admin=True)
    for watcher in (watcher_two, watcher_one):
        watcher.answer(watcher.request("q", {"p": "/presence", "h": ""}))
    check(admin_two.call("o", {"p": "/presence", "d": "gone"})["s"] == "ok", "onDisconnect registered in env two")
    admin_two.close()
    watcher_two.push("d", lambda b: b.get("d") == "gone", "env two's onDisconnect write")
    check(watcher_one.call("g", {"p": "/presence", "q": {}})["d"] is None, "it ran in env two only")
    for client in [alice_one, alice_two, admin_one, guest_one, watcher_one, watcher_two]:
        client.close()
    print("done", flush=True)


if __name__ == "__main__":
    globals()["mode_" + sys.argv[1]]()

"""Compound hashes over /.ws (docs/protocol/wire.md §4.2, §3.3), as an iOS or Android client with a disk
cache uses them: it listens, keeps what it got, and later re-listens with `ch` (the
compound hash of its cache, compound_hash.py) and applies the `rm` range merges it gets
(compound_hash.apply_rm, written from FRangeMerge). Prints `ok <check>` per passed check,
exits 1 on the first failure.

Usage: compound_client.py compound|cuts <port>
"""
import json
import sys

import compound_hash
from wire_client import Client, check, rest

LOCATION = "/open/compound"


def favourites(count):
    return {f"-fav{100000 + i}": {"name": f"Place {i}", "createdAt": 1700000000000 + i, "latitude": 59.9, "longitude": 10.7}
            for i in range(count)}


def listen(client, ch=None, h=""):
    body = {"p": LOCATION, "h": h}
    if ch is not None:
        body["ch"] = ch
    number = client.request("q", body)
    index, answer = client.answer(number)
    check(answer == {"s": "ok", "d": {}}, "listen answered ok", str(answer))
    with client.cond:
        before = [m["d"] for m in client.log[:index] if m.get("t") == "d" and "r" not in m["d"]]
    return before


def mode_compound():
    rest("PUT", LOCATION + ".json", favourites(300))
    first = Client()
    pushes = listen(first)
    check(len(pushes) == 1 and pushes[0]["a"] == "d", "a listen without ch gets the whole value", str(pushes)[:200])
    cache = pushes[0]["b"]["d"]
    first.close()

    # Unchanged: a re-listen with the cache's compound hash gets nothing before its ok.
    ch = compound_hash.compound_hash(cache)
    check(len(ch["ps"]) > 10, "the cache is cut into many ranges", str(len(ch["ps"])))
    again = Client()
    pushes = listen(again, ch=ch)
    check(pushes == [], "an unchanged cache gets no data", str(pushes)[:200])
    again.close()

    # Three changes while away: one renamed, one removed, one added.
    rest("PUT", LOCATION + "/-fav100010/name.json", "Renamed")
    rest("DELETE", LOCATION + "/-fav100200.json")
    rest("PUT", LOCATION + "/-fav999999.json", {"name": "New"})
    back = Client()
    pushes = listen(back, ch=ch)
    check(len(pushes) == 1 and pushes[0]["a"] == "rm", "a changed cache gets one range merge", str(pushes)[:300])
    body = pushes[0]["b"]
    check(body["p"] in (LOCATION, LOCATION[1:]), "rm at the listen's path", body["p"])
    check(1 <= len(body["d"]) <= 3, "only the ranges that changed", str(len(body["d"])))
    full = len(json.dumps(cache))
    sent = len(json.dumps(pushes[0]))
    check(sent * 5 < full, f"rm is a fraction of the value ({sent} of {full} bytes)")
    status, current = rest("GET", LOCATION + ".json")
    check(compound_hash.apply_rm(cache, body["d"]) == current, "the cache after the rm is the server's value")

    # Later changes reach the listen as usual.
    rest("PUT", LOCATION + "/-fav100001/name.json", "Later")
    _, update = back.push("d", lambda b: b.get("d") == "Later", "a later change")
    check(update["p"].endswith("-fav100001/name"), "later changes are pushed as for any listen", str(update))

    # A malformed ch is ignored: the whole value.
    other = Client()
    pushes = listen(other, ch={"hs": ["x"], "ps": ["a", "b"]})
    check(len(pushes) == 1 and pushes[0]["a"] == "d", "a malformed ch gets the whole value", str(pushes)[:200])
    back.close()
    other.close()


MAX_CUT_PATHS = 1024  # CompoundHash.maxCutPaths
ATTACK = "/open/attack"


def mode_cuts():
    """Cut points all under one child (each range once re-sorted that child): within the
    bound, the answer is still one correct range merge; past it, the whole value. Either
    way another client's push, written after the listen was sent, still arrives."""
    keys = [f"k{i:06d}" for i in range(MAX_CUT_PATHS + 2)]
    value = {"a": {key: "v" for key in keys}}
    rest("PUT", ATTACK + "/list.json", value)
    watcher = Client()
    number = watcher.request("q", {"p": ATTACK + "/tick", "h": ""})
    watcher.answer(number)

    for count, expect in ((MAX_CUT_PATHS, "rm"), (MAX_CUT_PATHS + 1, "d")):
        posts = ["/a/" + key for key in keys[:count]]
        ch = {"hs": ["x"] * (count + 1), "ps": posts}
        listener = Client()
        number = listener.request("q", {"p": ATTACK + "/list", "h": "", "ch": ch})
        # Written after the listen was sent: its push to the watcher queues behind the answer.
        rest("PUT", ATTACK + f"/tick.json", count)
        watcher.push("d", lambda b: b.get("p", "").endswith("attack/tick") and b.get("d") == count,
                     f"the tick written after a listen with {count} cuts")
        check(True, f"another client's push arrives after a listen with {count} cuts")
        index, answer = listener.answer(number)
        check(answer == {"s": "ok", "d": {}}, f"a listen with {count} cuts is answered ok", str(answer))
        _, body = listener.push(expect, lambda b: b.get("p", "").endswith("attack/list"), f"the {expect} of {count} cuts")
        if expect == "rm":
            check(len(body["d"]) == count + 1, f"{count} cuts under one child get {count + 1} ranges", str(len(body["d"])))
            check(compound_hash.apply_rm({}, body["d"]) == value, "the ranges merged give the value")
        else:
            check(body["d"] == value, f"{count} cuts (past the bound) get the whole value")
        listener.close()
    watcher.close()


if __name__ == "__main__":
    {"compound": mode_compound, "cuts": mode_cuts}[sys.argv[1]]()
    print("done", flush=True)

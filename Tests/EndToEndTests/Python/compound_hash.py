"""The iOS SDK's compound hash and range merge, in Python, written from
firebase-ios-sdk FirebaseDatabase/Sources/Core/FCompoundHash.m (the builder and its
size-based split strategy), Snapshot/FSnapshotUtilities.m (v2 leaf text, size estimate),
Snapshot/FChildrenNode.m (children in key order, `.priority` before the first key above
it) and Core/FRangeMerge.m (how a client applies `rm`). An implementation independent of
Hearth's, to check the server's range hashes against what a client sends.

As a program: `compound_hash.py <threshold or 0> < value.json` prints
`{"hs": [...], "ps": [...]}`, the `ch` an iOS client with that cached value sends (0: the
SDK's own split threshold). `compound_hash.py merge < {"cache": c, "rm": [...], "value": v}`
prints whether the cache c after the `rm` ranges (FRangeMerge) is v.
"""
import base64
import hashlib
import json
import math
import re
import struct
import sys

INT_KEY = re.compile(r"^-?0*\d{1,10}$")
EMPTY = ("empty",)


def int_key(key):
    if INT_KEY.match(key):
        value = int(key)
        if -2**31 <= value <= 2**31 - 1:
            return value
    return None


def compare_keys(a, b):
    """FUtilities compareKey: 32-bit integer keys first (numerically, then shorter first),
    then strings by UTF-16 code units."""
    if a == b:
        return 0
    x, y = int_key(a), int_key(b)
    if x is not None and y is not None:
        if x != y:
            return -1 if x < y else 1
        return -1 if len(a) < len(b) else (1 if len(a) > len(b) else 0)
    if x is not None:
        return -1
    if y is not None:
        return 1
    ua, ub = a.encode("utf-16-be"), b.encode("utf-16-be")
    return -1 if ua < ub else 1


def sort_keys(keys):
    import functools
    return sorted(keys, key=functools.cmp_to_key(compare_keys))


def node(value):
    """nodeFromJSON: ("leaf", value, priority) or ("children", {key: node}, priority)."""
    if value is None:
        return EMPTY
    if isinstance(value, list):
        value = {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        priority = value.get(".priority")
        if ".value" in value and not isinstance(value[".value"], (dict, list)):
            return EMPTY if value[".value"] is None else ("leaf", value[".value"], priority)
        children = {}
        for key, child in value.items():
            if key.startswith("."):
                continue
            child_node = node(child)
            if child_node != EMPTY:
                children[key] = child_node
        return ("children", children, priority) if children else EMPTY
    return ("leaf", value, None)


def priority_of(n):
    return None if n == EMPTY else n[2]


def children_and_priority(n):
    """enumerateChildrenAndPriorityUsingBlock: key order, `.priority` just before the
    first key above ".priority" (never when none is above it)."""
    out = []
    passed = n[2] is None
    for key in sort_keys(n[1].keys()):
        if not passed and compare_keys(key, ".priority") > 0:
            passed = True
            out.append((".priority", ("leaf", n[2], None)))
        out.append((key, n[1][key]))
    return out


def v2_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def leaf_text(value, priority):
    text = ""
    if priority is not None:
        text = "priority:" + leaf_text(priority, None) + ":"
    if isinstance(value, bool):
        return text + "boolean:" + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return text + "number:" + struct.pack(">d", float(value)).hex()
    return text + "string:" + v2_string(value)


def utf16_length(text):
    return len(text.encode("utf-16-le")) // 2


def estimate_leaf(value, priority):
    if isinstance(value, bool):
        size = 4
    elif isinstance(value, (int, float)):
        size = 8
    else:
        size = 2 + utf16_length(value)
    if priority is None:
        return size
    return 2 + 8 + 11 + 2 + 1 + size + estimate_leaf(priority, None)


def estimate(n):
    if n == EMPTY:
        return 4
    if n[0] == "leaf":
        return estimate_leaf(n[1], n[2])
    total = 1
    for key, child in children_and_priority(n):
        total += utf16_length(key) + 4 + estimate(child)
    return total


def b64sha1(text):
    return base64.b64encode(hashlib.sha1(text.encode()).digest()).decode()


class Builder:
    """FCompoundHashBuilder."""

    def __init__(self, split):
        self.split = split
        self.text = None
        self.length = 0   # the text's length in UTF-16 units (NSString length)
        self.path = []
        self.depth = 0
        self.last_leaf_depth = -1
        self.needs_comma = True
        self.posts = []
        self.hashes = []

    def add(self, text):
        self.text += text
        self.length += utf16_length(text)

    def ensure_range(self):
        if self.text is None:
            self.text, self.length = "", 0
            self.add("(" + "".join(v2_string(key) + ":(" for key in self.path[:self.depth]))
            self.needs_comma = False

    def process_leaf(self, leaf):
        self.ensure_range()
        self.last_leaf_depth = self.depth
        self.add(leaf_text(leaf[1], leaf[2]))
        self.needs_comma = True
        if self.split(self):
            self.end_range()

    def start_child(self, key):
        self.ensure_range()
        if self.needs_comma:
            self.add(",")
        self.add(v2_string(key) + ":(")
        if self.depth == len(self.path):
            self.path.append(key)
        else:
            self.path[self.depth] = key
        self.depth += 1
        self.needs_comma = False

    def end_child(self):
        self.depth -= 1
        if self.text is not None:
            self.add(")")
        self.needs_comma = True

    def finish(self):
        if self.text is not None:
            self.end_range()
        self.hashes.append("")

    def end_range(self):
        self.text += ")" * self.depth + ")"
        self.posts.append(self.path[:self.last_leaf_depth])
        self.hashes.append(b64sha1(self.text))
        self.text = None


def process(n, builder):
    if n[0] == "leaf":
        builder.process_leaf(n)
        return
    for key, child in children_and_priority(n):
        builder.start_child(key)
        process(child, builder)
        builder.end_child()


def compound_hash(value, threshold=0):
    """The `ch` of a cached value: {"hs": [...], "ps": [...]} (paths as `a/b`)."""
    n = node(value)
    if n == EMPTY:
        return {"hs": [""], "ps": []}
    if not threshold:
        threshold = max(512, int(math.sqrt(estimate(n) * 100)))
    split = lambda b: b.length > threshold and (b.path[:b.depth] or [None])[-1] != ".priority"
    builder = Builder(split)
    process(n, builder)
    builder.finish()
    return {"hs": builder.hashes, "ps": ["/".join(p) for p in builder.posts]}


# FRangeMerge: applying an `rm` range to a cached node.

def keys_of(path):
    return [key for key in path.split("/") if key] if path is not None else None


def compare_paths(a, b):
    for x, y in zip(a, b):
        order = compare_keys(x, y)
        if order:
            return order
    return (len(a) > len(b)) - (len(a) < len(b))


def contains(path, other):
    return len(path) <= len(other) and other[:len(path)] == path


def immediate_child(n, key):
    if n == EMPTY or n[0] == "leaf":
        return ("leaf", n[2], None) if key == ".priority" and n != EMPTY and n[2] is not None else EMPTY
    if key == ".priority":
        return ("leaf", n[2], None) if n[2] is not None else EMPTY
    return n[1].get(key, EMPTY)


def with_child(n, key, child):
    if key == ".priority":
        if n == EMPTY:
            return EMPTY
        return (n[0], n[1], None if child == EMPTY else child[1])
    children = dict(n[1]) if n != EMPTY and n[0] == "children" else {}
    priority = n[2] if n != EMPTY and n[0] == "children" else None
    if child == EMPTY:
        children.pop(key, None)
    else:
        children[key] = child
    return ("children", children, priority) if children else EMPTY


def child_keys(n):
    return list(n[1].keys()) if n != EMPTY and n[0] == "children" else []


def apply_range(n, start, end, updates, path=()):
    path = list(path)
    start_cmp = 1 if start is None else compare_paths(path, start)
    end_cmp = -1 if end is None else compare_paths(path, end)
    start_in = start is not None and contains(path, start)
    end_in = end is not None and contains(path, end)
    if start_cmp > 0 and end_cmp < 0 and not end_in:
        return updates
    if start_cmp > 0 and end_in and updates != EMPTY and updates[0] == "leaf":
        return updates
    if start_cmp > 0 and end_cmp == 0:
        return EMPTY if n != EMPTY and n[0] == "leaf" else n
    if start_in or end_in:
        result = n
        for key in set(child_keys(n)) | set(child_keys(updates)):
            current = immediate_child(n, key)
            updated = apply_range(current, start, end, immediate_child(updates, key), path + [key])
            if updated != current:
                result = with_child(result, key, updated)
        if priority_of(updates) is not None or priority_of(n) is not None:
            current = immediate_child(n, ".priority")
            updated = apply_range(current, start, end, immediate_child(updates, ".priority"), path + [".priority"])
            if updated != current:
                result = with_child(result, ".priority", updated)
        return result
    return n


def apply_rm(cache, ranges):
    """A client's cache (JSON) after an `rm` push's ranges."""
    n = node(cache)
    for r in ranges:
        n = apply_range(n, keys_of(r.get("s")), keys_of(r.get("e")), node(r.get("m")))
    return to_json(n)


def to_json(n):
    if n == EMPTY:
        return None
    if n[0] == "leaf":
        return n[1] if n[2] is None else {".value": n[1], ".priority": n[2]}
    out = {key: to_json(child) for key, child in n[1].items()}
    if n[2] is not None:
        out[".priority"] = n[2]
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["merge"]:
        # `{"cache": c, "rm": [ranges], "value": v}`: whether the cache after the `rm` is v.
        given = json.load(sys.stdin)
        merged, expected = apply_rm(given["cache"], given["rm"]), to_json(node(given["value"]))
        print(json.dumps({"equal": merged == expected, "merged": merged, "expected": expected}))
    else:
        print(json.dumps(compound_hash(json.load(sys.stdin), int(sys.argv[1]) if len(sys.argv) > 1 else 0)))

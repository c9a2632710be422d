"""Writes <dir>/functions.yaml, a manifest of scheduled functions f0…fN whose schedule and
timeZone are awkward strings, dumped by PyYAML as firebase-functions dumps its manifest
(yaml.dump of a dict: quoting, escapes, lines folded past 80 columns), and <dir>/values.json,
the strings themselves, so the test can compare what `hearth triggers import` read.

    python manifest_yaml_values.py DIR
"""
import json
import sys

import yaml

VALUES = [
    "every 5 minutes " * 8, "a: b # c", "é ü ✓ 😀", "line1\nline2\n\nline4", "it's \"q\"", "  lead and trail  ",
    "yes", "012", "1.5", "-", "- x", "{x}", "[y]", "*star", "&amp", "!bang", "%p", "@a", "`b", "tab\there",
    "back\\slash", "x" * 200, "a " * 100 + "b", "null", "~", "", "#hash", "?q", ": colon", "trailing:",
    "\x07bell", "nbsp\u00a0x", "long line " * 30 + "\n" + "next " * 30,
]

endpoints = {}
for index, value in enumerate(VALUES):
    labels = {value: value} if value and len(value) < 100 and "\n" not in value else {}
    endpoints[f"f{index}"] = {"scheduleTrigger": {"schedule": value, "timeZone": value, "retryConfig": {}}, "labels": labels}
with open(sys.argv[1] + "/functions.yaml", "w") as out:
    out.write(yaml.dump({"endpoints": endpoints, "specVersion": "v1alpha1"}))
with open(sys.argv[1] + "/values.json", "w") as out:
    json.dump(VALUES, out)

"""Cloud Functions for the triggers end-to-end tests, written as for Firebase (firebase-functions'
db_fn), served by the open-source Functions Framework:

    functions-framework --source trigger_functions.py --target router --signature-type cloudevent --port P

Each function appends what the SDK gave it (params, before/after, auth) as one JSON line to
$HEARTH_TRIGGER_OUT. `router` only picks the function by the event's type, so one process
serves all four; the functions themselves are plain firebase-functions code.

With HEARTH_TRIGGER_FAIL_FIRST=1, the first attempt of every event id fails (an exception:
the framework answers 500), so the sender's retries can be seen. HEARTH_TRIGGER_FAIL_REF names
a location whose every event fails (a poison event). HEARTH_TRIGGER_SLEEP_MS makes each call
sleep a random 0 to that many milliseconds. HEARTH_TRIGGER_HOLD="A,B" holds the first call for
location A until a call for location B was recorded (30 s at most) and writes "yes" (B came
meanwhile) or "no" to $HEARTH_TRIGGER_OUT.overlap: two locations under way at once.
"""
import json
import os
import random
import time

from firebase_functions import db_fn

OUT = os.environ["HEARTH_TRIGGER_OUT"]
FAIL_FIRST = os.environ.get("HEARTH_TRIGGER_FAIL_FIRST") == "1"
REF = "/users/{uid}/favorites/{favId}"
FAIL_REF = os.environ.get("HEARTH_TRIGGER_FAIL_REF")
SLEEP_MS = int(os.environ.get("HEARTH_TRIGGER_SLEEP_MS", "0"))
HOLD = os.environ.get("HEARTH_TRIGGER_HOLD", "").split(",")


def _seen_before(event_id):
    if not os.path.exists(OUT):
        return False
    with open(OUT) as lines:
        return any(json.loads(line)["id"] == event_id for line in lines)


def record(kind, event, before, after):
    first = not _seen_before(event.id)
    line = {
        "kind": kind, "id": event.id, "params": event.params, "before": before, "after": after,
        "auth_type": event.auth_type, "auth_id": event.auth_id, "reference": event.reference,
        "instance": event.instance, "location": event.location, "source": event.source,
        "subject": event.subject, "time": event.time.isoformat(), "failed": FAIL_FIRST and first,
    }
    with open(OUT, "a") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")
    if len(HOLD) == 2 and event.reference == HOLD[0] and not os.path.exists(OUT + ".overlap"):
        _hold_until_seen(HOLD[1])
    if SLEEP_MS:
        time.sleep(random.randint(0, SLEEP_MS) / 1000)
    if FAIL_FIRST and first:
        raise RuntimeError("failing the first attempt on purpose")
    if event.reference == FAIL_REF:
        raise RuntimeError("this location's events always fail")


def _hold_until_seen(reference):
    deadline = time.monotonic() + 30
    seen = False
    while not seen and time.monotonic() < deadline:
        with open(OUT) as lines:
            seen = any(json.loads(line)["reference"] == reference for line in lines)
        time.sleep(0.01)
    with open(OUT + ".overlap", "w") as out:
        out.write("yes" if seen else "no")


@db_fn.on_value_written(reference=REF)
def favorite_written(event: db_fn.Event[db_fn.Change]) -> None:
    record("written", event, event.data.before, event.data.after)


@db_fn.on_value_created(reference=REF)
def favorite_created(event: db_fn.Event) -> None:
    record("created", event, None, event.data)


@db_fn.on_value_updated(reference=REF)
def favorite_updated(event: db_fn.Event[db_fn.Change]) -> None:
    record("updated", event, event.data.before, event.data.after)


@db_fn.on_value_deleted(reference=REF)
def favorite_deleted(event: db_fn.Event) -> None:
    record("deleted", event, event.data, None)


FUNCTIONS = {
    "google.firebase.database.ref.v1.written": favorite_written,
    "google.firebase.database.ref.v1.created": favorite_created,
    "google.firebase.database.ref.v1.updated": favorite_updated,
    "google.firebase.database.ref.v1.deleted": favorite_deleted,
}


def router(cloud_event):
    FUNCTIONS[cloud_event["type"]](cloud_event)

"""Cloud Functions for the triggers end-to-end tests, written as for Firebase (firebase-functions'
db_fn), served by the open-source Functions Framework:

    functions-framework --source trigger_functions.py --target router --signature-type cloudevent --port P

Each function appends what the SDK gave it (params, before/after, auth) as one JSON line to
$HEARTH_TRIGGER_OUT. `router` only picks the function by the event's type, so one process
serves all four; the functions themselves are plain firebase-functions code.

With HEARTH_TRIGGER_FAIL_FIRST=1, the first attempt of every event id fails (an exception:
the framework answers 500), so the sender's retries can be seen.
"""
import json
import os

from firebase_functions import db_fn

OUT = os.environ["HEARTH_TRIGGER_OUT"]
FAIL_FIRST = os.environ.get("HEARTH_TRIGGER_FAIL_FIRST") == "1"
REF = "/users/{uid}/favorites/{favId}"


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
    if FAIL_FIRST and first:
        raise RuntimeError("failing the first attempt on purpose")


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

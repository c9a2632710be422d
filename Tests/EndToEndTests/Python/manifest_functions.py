"""A functions folder's main.py for the manifest end-to-end test, written as for Firebase: one
function of each database event (one on a named instance, one with a timeout), a scheduled
function and an HTTPS function (which Hearth skips).

The test copies it to <folder>/main.py, reads its manifest from firebase-functions' own admin
server (`ADMIN_PORT=P python -m firebase_functions.private.serving`, as the Firebase CLI runs
it at deploy), and serves `message_written` with the Functions Framework: each call appends
what the SDK gave it as one JSON line to $HEARTH_TRIGGER_OUT.
"""
import json
import os

from firebase_functions import db_fn, https_fn, scheduler_fn


def record(kind, event, value):
    line = {"kind": kind, "params": event.params, "reference": event.reference, "value": value}
    with open(os.environ["HEARTH_TRIGGER_OUT"], "a") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")


@db_fn.on_value_written(reference="/messages/{id}")
def message_written(event: db_fn.Event[db_fn.Change]) -> None:
    record("written", event, event.data.after)


@db_fn.on_value_created(reference="/rooms/{room}/members/{uid}", instance="hearth")
def member_joined(event: db_fn.Event) -> None:
    record("created", event, event.data)


@db_fn.on_value_updated(reference="/profiles/{uid}", timeout_sec=30)
def profile_updated(event: db_fn.Event[db_fn.Change]) -> None:
    record("updated", event, event.data.after)


@db_fn.on_value_deleted(reference="carts/{uid}")
def cart_deleted(event: db_fn.Event) -> None:
    record("deleted", event, event.data)


@scheduler_fn.on_schedule(schedule="every 5 minutes", timezone=scheduler_fn.Timezone("Europe/Oslo"), retry_count=2)
def weather_check(event: scheduler_fn.ScheduledEvent) -> None:
    pass


@https_fn.on_request()
def hello(request: https_fn.Request) -> https_fn.Response:
    return https_fn.Response("hello")

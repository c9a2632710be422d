"""The reference app's weather alerts, as Cloud Functions for the Realtime Database
(docs/triggers.md, "The example: weather alerts"):

- `check_weather`, a scheduled function (every 5 minutes): reads every user's favourite
  cities, looks up each distinct city's current weather, compares it with the last one
  stored at /weather/<city key> and, for a city whose condition changed, writes an alert
  /alerts/<uid>/<alertId> {"city", "from", "to", "at"} for every user who has that city;
  then stores the new weather.
- `notify`, a database trigger on each new alert: the stand-in for a push notification,
  it files the alert in the user's inbox, /users/<uid>/inbox/<alertId>.

Plain firebase-functions and firebase-admin code, as it would be deployed to Firebase;
under Hearth each function runs in its own Functions Framework process:

    functions-framework --source main.py --target check_weather --signature-type http --port 8081
    functions-framework --source main.py --target notify --signature-type cloudevent --port 8082

The weather comes from a stub shipped beside this file (weather_stub.json: city name ->
{"condition", "temperature"}), or from the file named by WEATHER_STUB, so the example runs
without network access; a real deployment replaces `current_weather`.

Delivery is at least once (a due time can be sent twice), so both functions are idempotent:
an alert's id is made of its due time and its city, so writing it again overwrites the same
alert (and is no new `created` event); a run after the new weather was stored finds no
change; the inbox entry has the alert's id.
"""
import json
import os

import firebase_admin
from firebase_admin import db
from firebase_functions import db_fn, scheduler_fn

# As on Firebase: no options here. databaseURL comes from the FIREBASE_CONFIG environment
# variable ({"databaseURL": ...}), which firebase-admin reads when given no options. Once
# only: firebase-functions' admin server (the deploy manifest) executes this file again on
# every request, and a second initialize_app() raises.
try:
    firebase_admin.get_app()
except ValueError:
    firebase_admin.initialize_app()

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weather_stub.json")

# Characters a database key may not contain, and "%" itself (so the encoding is reversible).
_ESCAPED = set(".$#[]/%")


def city_key(name):
    """A city name as a database key: ". $ # [ ] / %" and control characters as %XX."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)


def in_path(key):
    """`key` in a reference path: firebase-admin puts the path into the URL as it is, and the
    server decodes %XX there, so our own "%" must itself be sent as %25."""
    return key.replace("%", "%25")


def as_dict(value):
    """A child list as a dict (integer-like keys come back as a list), nothing as {}."""
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value) if v is not None}
    return value if isinstance(value, dict) else {}


def current_weather(cities):
    """{city: {"condition", "temperature"}} for the cities the source knows. The stub: a
    JSON file, read afresh on every run (so a test can change the weather)."""
    with open(os.environ.get("WEATHER_STUB") or STUB, encoding="utf-8") as file:
        known = json.load(file)
    return {city: known[city] for city in cities if isinstance(known.get(city), dict) and "condition" in known[city]}


def favourite_cities():
    """{city name: set of uids who have it among their favourites}."""
    followers = {}
    for uid in as_dict(db.reference("users").get(shallow=True)):
        for favourite in as_dict(db.reference(f"users/{uid}/favorites").get()).values():
            name = favourite.get("name") if isinstance(favourite, dict) else None
            if isinstance(name, str) and name.strip():
                followers.setdefault(name.strip(), set()).add(uid)
    return followers


@scheduler_fn.on_schedule(schedule="every 5 minutes", retry_count=3)
def check_weather(event: scheduler_fn.ScheduledEvent) -> None:
    followers = favourite_cities()
    at = event.schedule_time.strftime("%Y-%m-%dT%H:%M:%SZ")
    for city, weather in sorted(current_weather(followers).items()):
        key = in_path(city_key(city))
        last = db.reference(f"weather/{key}").get()
        before = last.get("condition") if isinstance(last, dict) else None
        if before is not None and before != weather["condition"]:
            alert = {"city": city, "from": before, "to": weather["condition"], "at": at}
            # The due time and the city name the alert: a repeated run writes the same one.
            alert_id = in_path(city_key(f"{event.schedule_time:%Y%m%dT%H%M%SZ}-{city}"))
            for uid in sorted(followers[city]):
                db.reference(f"alerts/{uid}/{alert_id}").set(alert)
        # Stored after the alerts: a run that fails in between alerts again on its retry.
        db.reference(f"weather/{key}").set({"condition": weather["condition"],
                                           "temperature": weather.get("temperature"), "at": at})


@db_fn.on_value_created(reference="/alerts/{uid}/{alertId}")
def notify(event: db_fn.Event[object]) -> None:
    alert = event.data if isinstance(event.data, dict) else {}
    uid, alert_id = event.params["uid"], event.params["alertId"]
    print(f"push to {uid}: {alert.get('city')} is now {alert.get('to')} (was {alert.get('from')})", flush=True)
    db.reference(f"users/{uid}/inbox/{in_path(alert_id)}").set({
        "title": f"{alert.get('city')}: {alert.get('from')} -> {alert.get('to')}",
        "alert": alert_id,
        "at": alert.get("at"),
    })

"""The reference app's "most popular cities", as a Cloud Function for the Realtime Database
(docs/triggers.md): keeps /stats/cities/<city key> equal to the number of users who have that
city among their favourites.

Plain firebase-functions and firebase-admin code, as it would be deployed to Firebase; under
Hearth it runs in the open-source Functions Framework:

    functions-framework --source main.py --target count_city_users --signature-type cloudevent --port 8081

with Hearth delivering the `written` events of /users/{uid}/favorites/{favId} to it
(triggers.json) and firebase-admin pointed at Hearth through FIREBASE_CONFIG (and, for the
emulator-mode credential, FIREBASE_DATABASE_EMULATOR_HOST).

Delivery is at least once (an event can arrive twice, e.g. when the answer was lost), so the
function is idempotent: it never adds or subtracts on the strength of one event. It looks at
the user's favourites as they are NOW and records whether the user has the city
(/stats/cityUsers/<key>/<uid>: true, or nothing), then recounts that city's members in a
transaction on /stats/cities/<key>. Handling the same event twice, or an old event after a
newer one, ends in the same counts.
"""
import firebase_admin
from firebase_admin import db
from firebase_functions import db_fn

# As on Firebase: no options here. databaseURL comes from the FIREBASE_CONFIG environment
# variable ({"databaseURL": ...}), which firebase-admin reads when given no options.
firebase_admin.initialize_app()

# Characters a database key may not contain, and "%" itself (so the encoding is reversible).
_ESCAPED = set(".$#[]/%")


def city_key(name):
    """A city name as a database key: ". $ # [ ] / %" and control characters as %XX."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)


def city_of(favorite):
    """The city a favourite names, or None when it names none."""
    if isinstance(favorite, dict) and isinstance(favorite.get("name"), str) and favorite["name"].strip():
        return favorite["name"].strip()
    return None


def city_path(key):
    """`key` in a reference path: firebase-admin puts the path into the URL as it is, and the
    server decodes %XX there, so our own "%" must itself be sent as %25."""
    return key.replace("%", "%25")


def user_has_city(uid, city):
    favorites = db.reference(f"users/{uid}/favorites").get() or {}
    if isinstance(favorites, list):  # integer-like keys come back as a list
        favorites = dict(enumerate(favorites))
    return any(city_of(favorite) == city for favorite in favorites.values())


def refresh_city(uid, city):
    at = city_path(city_key(city))
    member = db.reference(f"stats/cityUsers/{at}/{uid}")
    if user_has_city(uid, city):
        member.set(True)
    else:
        member.delete()
    members = db.reference(f"stats/cityUsers/{at}")

    # The count follows the members; the transaction (ETag-guarded, retried on conflict)
    # makes the last recount win even if two run at once. A city nobody has any more
    # stays at 0 (firebase-admin's transaction cannot delete).
    def recount(_current):
        return len(members.get(shallow=True) or {})

    db.reference(f"stats/cities/{at}").transaction(recount)


@db_fn.on_value_written(reference="/users/{uid}/favorites/{favId}")
def count_city_users(event: db_fn.Event[db_fn.Change]) -> None:
    uid = event.params["uid"]
    cities = {city_of(event.data.before), city_of(event.data.after)} - {None}
    for city in sorted(cities):
        refresh_city(uid, city)

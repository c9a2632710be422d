"""A Cloud Function that writes back into its own trigger's path on every event, through
firebase-admin pointed at Hearth: the runaway loop the loop guard stops. Served by the
Functions Framework:

    functions-framework --source trigger_loop.py --target loop --signature-type cloudevent --port P

Needs FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:PORT (emulator mode: every request carries
`Authorization: Bearer owner`, which `hearth serve --accept-emulator-owner` takes as admin).
Each event under /loop/{id} rewrites LOOP_FAN_OUT children of /loop in one update (values
that change every time), so every delivered event causes LOOP_FAN_OUT new ones.
"""
import os

import firebase_admin
from firebase_admin import db
from firebase_functions import db_fn

FAN_OUT = int(os.environ.get("LOOP_FAN_OUT", "50"))

firebase_admin.initialize_app(options={"databaseURL": "https://demo-proj-default-rtdb.firebaseio.com", "httpTimeout": 30})


@db_fn.on_value_written(reference="/loop/{id}")
def loop(event: db_fn.Event[db_fn.Change]) -> None:
    db.reference("/loop").update({f"n{index}": event.id for index in range(FAN_OUT)})

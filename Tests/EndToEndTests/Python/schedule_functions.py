"""A scheduled function for the schedules end-to-end tests, written as for Firebase
(firebase-functions' scheduler_fn), served by the open-source Functions Framework:

    functions-framework --source schedule_functions.py --target tick --signature-type http --port P

Each call appends what the SDK gave the function (the job name and the schedule time it
read from Cloud Scheduler's headers) as one JSON line to $HEARTH_SCHEDULE_OUT.
"""
import json
import os

from firebase_functions import scheduler_fn

OUT = os.environ["HEARTH_SCHEDULE_OUT"]


@scheduler_fn.on_schedule(schedule="* * * * *")
def tick(event: scheduler_fn.ScheduledEvent) -> None:
    line = {"job": event.job_name, "time": event.schedule_time.isoformat()}
    with open(OUT, "a") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")

"""Drives the official firebase-admin SDK's db listen() against a running Hearth.

Used by Tests/EndToEndTests/FirebaseAdminListenTests.swift; checks that the SDK's SSE client
(firebase_admin/_sseclient.py) understands Hearth's event streams.

Needs FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:PORT (emulator mode: every request carries
`Authorization: Bearer owner`, no real credentials needed). Modes (argv[1]):

  changes  seeds /users/alice/favorites, listens there, then does a set of a child, a
           multi-path update and a delete, waiting for each resulting event. Prints one JSON
           line per callback event: {"event_type": ..., "path": ..., "data": ...}. Exit 0.
  denied   listen() on /secret of a server that does not take `Bearer owner` and whose
           rules deny reads: the stream request gets 401, so listen() must raise. Prints
           {"error": <exception class>, "message": <text>} and exits 3. Exits 0 if it did not
           raise (the Swift test then fails).

Every wait has a timeout; on timeout it prints a message to stderr and exits 2. A watchdog
covers what the SDK leaves without one (the stream request itself, registration.close()).
"""
import json
import os
import queue
import sys
import threading

import firebase_admin
from firebase_admin import db

TIMEOUT = 20  # seconds, for every wait and every non-streaming request
WATCHDOG = 60  # seconds for the whole run


def fail(message):
    print(message, file=sys.stderr, flush=True)
    os._exit(2)  # also from the watchdog thread, and without joining the listener thread


def changes():
    favorites = db.reference('/users/alice/favorites')
    favorites.set({'f1': {'name': 'Oslo', 'stars': 5}, 'f2': {'name': 'Rome', 'stars': 4}})

    events = queue.Queue()
    registration = favorites.listen(events.put)
    received = []

    def wait_for(step):
        try:
            event = events.get(timeout=TIMEOUT)
        except queue.Empty:
            fail(f'timed out after {TIMEOUT}s waiting for the event of: {step}')
        received.append(event)

    wait_for('the initial snapshot')
    favorites.child('f3').set({'name': 'Lima', 'stars': 3})
    wait_for('set f3')
    favorites.update({'f1/stars': 2, 'f2': None})
    wait_for('multi-path update')
    favorites.child('f1').delete()
    wait_for('delete f1')
    registration.close()

    # Anything that arrived after the last expected event is a surprise the test should see.
    while not events.empty():
        received.append(events.get())
    for event in received:
        print(json.dumps({'event_type': event.event_type, 'path': event.path, 'data': event.data},
                         sort_keys=True), flush=True)


def denied():
    try:
        registration = db.reference('/secret').listen(lambda event: None)
    except Exception as error:  # pylint: disable=broad-except
        print(json.dumps({'error': type(error).__name__, 'message': str(error)}), flush=True)
        sys.exit(3)
    registration.close()
    print(json.dumps({'listening': True}), flush=True)


def main():
    watchdog = threading.Timer(WATCHDOG, fail, [f'gave up after {WATCHDOG}s'])
    watchdog.daemon = True
    watchdog.start()
    # Emulator mode (FIREBASE_DATABASE_EMULATOR_HOST): the SDK never loads the default
    # credential, it sends `Bearer owner` instead.
    firebase_admin.initialize_app(options={
        'databaseURL': 'https://demo-proj-default-rtdb.firebaseio.com', 'httpTimeout': TIMEOUT})
    {'changes': changes, 'denied': denied}[sys.argv[1]]()


if __name__ == '__main__':
    main()

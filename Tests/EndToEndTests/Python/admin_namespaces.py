"""Drives the official firebase-admin SDK on two database instances of one Hearth in
emulator mode, without any rules replacement: what a test suite (or a function) using two
databases of one project does against the Firebase emulator.

Used by Tests/EndToEndTests/FirebaseAdminNamespacesTests.swift. Needs
FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:PORT (every request carries `Authorization:
Bearer owner`) and a server started with `--accept-emulator-owner --project-id demo-proj`.
Three apps: `alpha` (https://alpha.firebaseio.com, so `?ns=alpha`), `beta`
(https://beta.firebaseio.com) and the default app on demo-proj's default database
(https://demo-proj-default-rtdb.firebaseio.com, Hearth's default namespace). Each writes,
pushes, updates and runs a transaction on /open; each reads back only its own; a listen()
on alpha gets alpha's writes and never beta's or the default's.

Prints `ok <check>` per passed check and `done` at the end; exits 1 on the first failed
check, 2 on a timeout. Every wait has a timeout; a watchdog bounds the whole run.
"""
import os
import queue
import sys
import threading

import firebase_admin
from firebase_admin import db

TIMEOUT = 20  # seconds, for every wait and every request
WATCHDOG = 90  # seconds for the whole run


def fail(message, code=2):
    print(message, file=sys.stderr, flush=True)
    os._exit(code)  # also from the watchdog thread, and without joining the listener thread


def check(condition, name, detail=''):
    if not condition:
        fail(f'FAILED {name} {detail}', code=1)
    print(f'ok {name}', flush=True)


def app(name, url):
    return firebase_admin.initialize_app(options={'databaseURL': url, 'httpTimeout': TIMEOUT}, name=name)


def main():
    watchdog = threading.Timer(WATCHDOG, fail, [f'gave up after {WATCHDOG}s'])
    watchdog.daemon = True
    watchdog.start()
    apps = {
        'alpha': app('alpha', 'https://alpha.firebaseio.com'),
        'beta': app('beta', 'https://beta.firebaseio.com'),
        'default': app('default-db', 'https://demo-proj-default-rtdb.firebaseio.com'),
    }
    refs = {name: db.reference('/open', app=each) for name, each in apps.items()}

    events = queue.Queue()
    registration = refs['alpha'].listen(events.put)

    def next_event(step):
        try:
            return events.get(timeout=TIMEOUT)
        except queue.Empty:
            fail(f'timed out after {TIMEOUT}s waiting for the event of: {step}')

    first = next_event('the initial snapshot')
    check(first.event_type == 'put' and first.path == '/' and first.data is None, 'alpha starts empty', repr(first.data))

    # Beta and the default write first: had they reached alpha, their events would come
    # before alpha's own.
    refs['beta'].child('x').set('b')
    refs['default'].child('x').set('default')
    refs['alpha'].child('x').set('a')
    event = next_event("alpha's write")
    check(event.path == '/x' and event.data == 'a', "alpha's listen gets alpha's write first", f'{event.path} {event.data!r}')

    # Alpha last, so its transaction's event is the last of alpha's: every event up to it is
    # checked for another database's writes.
    for name in ('beta', 'default', 'alpha'):
        each = refs[name]
        each.update({'y': name, 'count': 0})
        pushed = each.child('log').push(name)
        check(pushed.key is not None, f'{name} pushes')
        each.child('count').transaction(lambda current: (current or 0) + 1)
    seen = []
    while not (seen and seen[-1].path == '/count' and seen[-1].data == 1):
        seen.append(next_event("alpha's transaction"))
    registration.close()
    foreign = [e for e in seen if any(word in repr(e.data) for word in ("'b'", 'beta', 'default'))]
    check(not foreign, "alpha's listen never gets beta's or the default's events", repr([(e.path, e.data) for e in foreign]))
    check(any(e.event_type == 'patch' and e.data == {'y': 'alpha', 'count': 0} for e in seen), "alpha's listen gets its update",
          repr([(e.path, e.data) for e in seen]))

    for name, each in refs.items():
        value = each.get()
        own = {'alpha': 'a', 'beta': 'b', 'default': 'default'}[name]
        check(value['x'] == own and value['y'] == name and value['count'] == 1, f'{name} reads its own value', repr(value))
        check(list(value['log'].values()) == [name], f'{name} reads only its own push', repr(value['log']))
    print('done', flush=True)


if __name__ == '__main__':
    main()

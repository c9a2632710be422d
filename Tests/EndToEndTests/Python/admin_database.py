"""Drives the official firebase-admin SDK's Realtime Database API against a running Hearth.

Used by Tests/EndToEndTests/FirebaseAdminDatabaseTests.swift; checks that every call of
firebase_admin.db except listen() (covered by admin_listen.py) behaves against Hearth as it
does against Firebase (docs/protocol/admin-client.md §3, §4, §6).

Needs FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:PORT (emulator mode: every request carries
`Authorization: Bearer owner`, which `hearth serve --accept-emulator-owner` takes as admin).
argv[1] names a group of checks:

  reads          get, get(shallow=True), get(etag=True), get_if_changed
  writes         set, set_if_unchanged, push, update, delete
  transaction    4 threads x 10 transaction() increments of one counter
  server-values  {".sv": "timestamp"} and {".sv": {"increment": n}} through set/update/push
  queries        every Query form the SDK sends, on /dinos and /scores (needs the .indexOn
                 entries of FirebaseAdminDatabaseTests.indexedRules), and one without an index
  override       databaseAuthVariableOverride {"uid": "worker-1"} and None (needs
                 FirebaseAdminDatabaseTests.perUserRules: /users/$uid for that uid only,
                 /public readable by anyone)
  priorities     writing `.priority` and `.value`: the value reads back without them

Each check prints one JSON line {"name": ..., "ok": true|false, "details": ...}; a check that
raises prints ok false with the exception's class and message (its traceback goes to stderr).
Exit 0 once every check of the group has run.
Every request times out after TIMEOUT seconds; a watchdog ends a wedged run (exit 2).
"""
import json
import os
import sys
import threading
import time
import traceback

import firebase_admin
from firebase_admin import db
from firebase_admin import exceptions

TIMEOUT = 20  # seconds, for every request
WATCHDOG = 90  # seconds for the whole run
DATABASE_URL = 'https://demo-proj-default-rtdb.firebaseio.com'


def fail(message):
    print(message, file=sys.stderr, flush=True)
    os._exit(2)  # also from the watchdog thread


def report(name, ok, details):
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, sort_keys=True, default=repr),
          flush=True)


def check(name):
    """Runs the decorated function at once as check `name`; it returns (ok, details)."""
    def run(function):
        try:
            ok, details = function()
        except Exception as error:  # pylint: disable=broad-except
            ok, details = False, {'exception': type(error).__name__, 'message': str(error)}
            print(f'check {name}:\n{traceback.format_exc()}', file=sys.stderr, flush=True)
        report(name, ok, details)
        return function
    return run


def equal(actual, expected, **extra):
    """A check result: ok when `actual == expected` (for queries, also in the same order)."""
    return actual == expected, dict(actual=actual, expected=expected, **extra)


def raises(call, exception_type, message=None):
    """A check result: ok when `call()` raises `exception_type` (with exactly `message`)."""
    try:
        result = call()
    except Exception as error:  # pylint: disable=broad-except
        ok = isinstance(error, exception_type) and (message is None or str(error) == message)
        return ok, {'exception': type(error).__name__, 'message': str(error),
                    'expected': exception_type.__name__, 'expected_message': message}
    return False, {'returned': result, 'expected': exception_type.__name__}


# ----------------------------------------------------------------------------------------- reads

def reads():
    ref = db.reference('/reads/alice')
    ref.set({'name': 'Alice', 'age': 30, 'tags': {'a': True, 'b': True}})

    @check('get')
    def _():
        return equal(ref.get(), {'name': 'Alice', 'age': 30, 'tags': {'a': True, 'b': True}})

    @check('get_missing_is_none')
    def _():
        return equal(db.reference('/reads/nobody').get(), None)

    @check('get_leaf')
    def _():
        return equal(ref.child('name').get(), 'Alice')

    @check('get_shallow')
    def _():
        return equal(ref.get(shallow=True), {'name': True, 'age': True, 'tags': True})

    @check('get_shallow_leaf')
    def _():
        return equal(ref.child('age').get(shallow=True), 30)

    @check('get_etag')
    def _():
        value, etag = ref.get(etag=True)
        ok = value == ref.get() and isinstance(etag, str) and len(etag) > 0
        return ok, {'value': value, 'etag': etag}

    @check('get_etag_missing_node')
    def _():
        value, etag = db.reference('/reads/nobody').get(etag=True)
        return value is None and isinstance(etag, str) and len(etag) > 0, {'value': value, 'etag': etag}

    @check('get_if_changed_unchanged')
    def _():
        _, etag = ref.get(etag=True)
        return equal(ref.get_if_changed(etag), (False, None, None), etag=etag)

    @check('get_if_changed_changed')
    def _():
        _, old = ref.get(etag=True)
        ref.child('age').set(31)
        changed, value, etag = ref.get_if_changed(old)
        _, current = ref.get(etag=True)
        expected = {'name': 'Alice', 'age': 31, 'tags': {'a': True, 'b': True}}
        ok = changed is True and value == expected and etag == current and etag != old
        return ok, {'returned': [changed, value, etag], 'expected': [True, expected, current],
                    'old_etag': old}


# ---------------------------------------------------------------------------------------- writes

def writes():
    root = db.reference('/writes')

    @check('set_object')
    def _():
        ref = root.child('object')
        ref.set({'name': 'Oslo', 'stars': 5, 'geo': {'lat': 59.91, 'lng': 10.75}})
        ref.set({'name': 'Rome', 'stars': 4})  # replaces, does not merge
        return equal(ref.get(), {'name': 'Rome', 'stars': 4})

    @check('set_primitives')
    def _():
        values = ['text', 42, 2.5, True, False, 'unicode \u00e6\u00f8\u00e5 \u2603']
        got = []
        for value in values:
            root.child('primitive').set(value)
            got.append(root.child('primitive').get())
        return equal(got, values)

    @check('set_list')
    def _():
        root.child('list').set([1, 2, 3])
        return equal(root.child('list').get(), [1, 2, 3],
                     as_object=root.child('list').get(shallow=True))

    @check('set_empty_object_deletes')
    def _():
        ref = root.child('emptied')
        ref.set({'x': 1})
        ref.set({})
        return equal(ref.get(), None)

    @check('set_if_unchanged_success')
    def _():
        ref = root.child('guarded')
        ref.set({'version': 1})
        _, etag = ref.get(etag=True)
        success, value, new_etag = ref.set_if_unchanged(etag, {'version': 2})
        _, current = ref.get(etag=True)
        ok = success is True and value == {'version': 2} and new_etag == current and ref.get() == {'version': 2}
        return ok, {'returned': [success, value, new_etag], 'etag_now': current, 'stored': ref.get()}

    @check('set_if_unchanged_failure')
    def _():
        ref = root.child('guarded2')
        ref.set({'version': 1})
        _, stale = ref.get(etag=True)
        ref.set({'version': 7})
        _, current = ref.get(etag=True)
        returned = ref.set_if_unchanged(stale, {'version': 2})
        return equal(returned, (False, {'version': 7}, current), stored=ref.get())

    @check('set_if_unchanged_missing_node')
    def _():
        ref = root.child('guarded3')
        value, etag = ref.get(etag=True)
        success, written, _ = ref.set_if_unchanged(etag, 'created')
        ok = value is None and success is True and written == 'created' and ref.get() == 'created'
        return ok, {'before': value, 'success': success, 'stored': ref.get()}

    @check('push_with_value')
    def _():
        messages = root.child('messages')
        first = messages.push({'text': 'hello'})
        second = messages.push({'text': 'world'})
        ok = (isinstance(first.key, str) and len(first.key) == 20 and first.key < second.key
              and first.path == f'/writes/messages/{first.key}'
              and messages.get() == {first.key: {'text': 'hello'}, second.key: {'text': 'world'}})
        return ok, {'keys': [first.key, second.key], 'stored': messages.get()}

    @check('push_without_value')
    def _():
        ref = root.child('placeholders').push()
        return equal(ref.get(), '', key=ref.key)

    @check('update_multi_path')
    def _():
        users = root.child('users')
        users.set({'alice': {'name': 'Alice', 'city': 'Oslo'}, 'bob': {'name': 'Bob', 'age': 40}})
        users.update({'alice/city': None, 'bob/name': 'Robert', 'carol': {'name': 'Carol'}})
        return equal(users.get(), {'alice': {'name': 'Alice'}, 'bob': {'name': 'Robert', 'age': 40},
                                   'carol': {'name': 'Carol'}})

    @check('update_deep_slash_keys')
    def _():
        # From an ancestor: keys are paths several levels deep; untouched siblings stay.
        root.child('deep').set({'users': {'bob': {'name': 'Bob', 'age': 40}, 'alice': {'name': 'Alice'}}})
        root.update({'deep/users/bob/name': 'Bobby', 'deep/users/alice': None, 'deep/meta/count': 1})
        return equal(root.child('deep').get(), {'users': {'bob': {'name': 'Bobby', 'age': 40}},
                                                'meta': {'count': 1}})

    @check('delete')
    def _():
        parent = root.child('doomed')
        parent.set({'a': {'x': 1}, 'b': 2})
        parent.child('a').delete()
        after_child = parent.get()
        parent.delete()
        db.reference('/writes/nothing/here').delete()  # deleting a missing node is fine
        return equal([after_child, parent.get()], [{'b': 2}, None])


# ----------------------------------------------------------------------------------- transaction

THREADS = 4
INCREMENTS = 10


def transaction():
    counter = db.reference('/counters/contended')
    calls = [0]
    lock = threading.Lock()
    errors = []
    results = []

    def increment(value):
        with lock:
            calls[0] += 1
        return (value or 0) + 1

    def worker():
        try:
            for _ in range(INCREMENTS):
                results.append(counter.transaction(increment))
        except Exception as error:  # pylint: disable=broad-except
            errors.append(f'{type(error).__name__}: {error}')

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=WATCHDOG)

    @check('transaction_contention')
    def _():
        final = counter.get()
        expected = THREADS * INCREMENTS
        # Every committed transaction returns a distinct new value 1...40.
        ok = not errors and final == expected and sorted(results) == list(range(1, expected + 1))
        return ok, {'final': final, 'expected': expected, 'errors': errors,
                    'update_function_calls': calls[0]}

    @check('transaction_result_and_missing_node')
    def _():
        ref = db.reference('/counters/fresh')
        seen = []

        def update(value):
            seen.append(value)
            return {'count': 1} if value is None else value

        returned = ref.transaction(update)
        return equal([seen, returned, ref.get()], [[None], {'count': 1}, {'count': 1}])

    @check('transaction_abort_by_exception')
    def _():
        ref = db.reference('/counters/kept')
        ref.set(7)

        def refuse(_):
            raise ValueError('no thanks')

        ok, details = raises(lambda: ref.transaction(refuse), ValueError, 'no thanks')
        details['stored'] = ref.get()
        return ok and ref.get() == 7, details

    @check('transaction_on_a_tag_beginning_w_slash')
    def _():
        # ETags are base64: about one value in 4,096 has a tag that begins with "W/". Such a
        # value's own tag must match on the first try, as the SDK sends it.
        import base64
        import hashlib
        value = next(i for i in range(1_000_000)
                     if base64.b64encode(hashlib.sha256(str(i).encode()).digest()[:20]).startswith(b'W/'))
        ref = db.reference('/counters/weak')
        ref.set(value)
        stored, etag = ref.get(etag=True)
        calls = []

        def increment(current):
            calls.append(current)
            return current + 1

        returned = ref.transaction(increment)
        ref.set(value)
        unchanged = ref.set_if_unchanged(etag, 'replaced')
        return equal([etag[:2], stored, calls, returned, unchanged[0], ref.get()],
                     ['W/', value, [value], value + 1, True, 'replaced'])


# --------------------------------------------------------------------------------- server values

def server_values():
    # firebase_admin has no ServerValue helper (unlike the JS SDK): the placeholders are
    # written as plain dicts.
    root = db.reference('/sv')

    @check('sv_timestamp')
    def _():
        before = int(time.time() * 1000)
        root.child('event').set({'text': 'hi', 'ts': {'.sv': 'timestamp'}})
        after = int(time.time() * 1000)
        value = root.child('event').get()
        ts = value.get('ts') if isinstance(value, dict) else None
        ok = (value.get('text') == 'hi' and isinstance(ts, int) and not isinstance(ts, bool)
              and before - 1000 <= ts <= after + 1000)
        return ok, {'stored': value, 'client_clock_window': [before, after]}

    @check('sv_increment_set_twice')
    def _():
        ref = root.child('counter')
        ref.set({'.sv': {'increment': 5}})
        ref.set({'.sv': {'increment': 5}})
        return equal(ref.get(), 10)

    @check('sv_increment_in_update')
    def _():
        ref = root.child('stats')
        ref.set({'views': 1.5, 'likes': 2})
        ref.update({'views': {'.sv': {'increment': 1}}, 'likes': {'.sv': {'increment': -3}},
                    'shares': {'.sv': {'increment': 4}}})
        return equal(ref.get(), {'views': 2.5, 'likes': -1, 'shares': 4})

    @check('sv_timestamp_in_push')
    def _():
        before = int(time.time() * 1000)
        child = root.child('log').push({'at': {'.sv': 'timestamp'}})
        at = (child.get() or {}).get('at')
        return isinstance(at, int) and at >= before - 1000, {'stored': child.get()}


# --------------------------------------------------------------------------------------- queries

# Heights in metres, weights under the nested child w/kg (after the dinosaur example of the
# Firebase docs), plus entries whose height is missing, a boolean and a string, so the
# ordering across types (null < false < true < numbers < strings < objects) matters.
DINOS = {
    'bruhathkayosaurus': {'height': 25, 'length': 44, 'w': {'kg': 135000}},
    'flyer': {'height': True},
    'ghost': {'length': 1},
    'lambeosaurus': {'height': 2.1, 'length': 12.5, 'w': {'kg': 5000}},
    'linhenykus': {'height': 0.6, 'length': 1, 'w': {'kg': 3}},
    'pterodactyl': {'height': 0.6, 'length': 0.8, 'w': {'kg': 1}},
    'stegosaurus': {'height': 4, 'length': 9, 'w': {'kg': 2500}},
    'tallasaurus': {'height': 'tall', 'w': {'kg': 'heavy'}},
    'triceratops': {'height': 3, 'length': 8, 'w': {'kg': 11000}},
}
# By height: ghost (null), flyer (true), linhenykus 0.6, pterodactyl 0.6 (tie: by key),
# lambeosaurus 2.1, triceratops 3, stegosaurus 4, bruhathkayosaurus 25, tallasaurus 'tall'.
# By w/kg: flyer, ghost (null, by key), pterodactyl 1, linhenykus 3, stegosaurus 2500,
# lambeosaurus 5000, triceratops 11000, bruhathkayosaurus 135000, tallasaurus 'heavy'.

SCORES = {'alice': 5, 'bob': 80, 'carol': 5, 'dave': 42, 'erin': 'n/a', 'frank': True, 'gina': 99}
# By value: frank (true), alice 5, carol 5, dave 42, bob 80, gina 99, erin 'n/a'.


def queries():
    dinos = db.reference('/dinos')
    dinos.set(DINOS)
    scores = db.reference('/scores')
    scores.set(SCORES)
    db.reference('/unindexed').set(DINOS)

    def query_check(name, query, expected_keys, source):
        @check(name)
        def _():
            result = query.get()
            # The SDK re-sorts client-side, so the order is the SDK's; the server decides
            # which children come back, and with which values.
            keys = list(result.keys()) if isinstance(result, dict) else result
            values_ok = isinstance(result, dict) and all(result[k] == source[k] for k in result)
            return keys == expected_keys and values_ok, {'actual': keys, 'expected': expected_keys,
                                                         'result': result}

    query_check('child_limit_to_first', dinos.order_by_child('height').limit_to_first(4),
                ['ghost', 'flyer', 'linhenykus', 'pterodactyl'], DINOS)
    query_check('child_limit_to_last', dinos.order_by_child('height').limit_to_last(2),
                ['bruhathkayosaurus', 'tallasaurus'], DINOS)
    query_check('child_start_at_end_at', dinos.order_by_child('height').start_at(0.6).end_at(3),
                ['linhenykus', 'pterodactyl', 'lambeosaurus', 'triceratops'], DINOS)
    query_check('child_start_at', dinos.order_by_child('height').start_at(3),
                ['triceratops', 'stegosaurus', 'bruhathkayosaurus', 'tallasaurus'], DINOS)
    query_check('child_end_at', dinos.order_by_child('height').end_at(0.6),
                ['ghost', 'flyer', 'linhenykus', 'pterodactyl'], DINOS)
    query_check('child_end_at_limit_to_last', dinos.order_by_child('height').end_at(4).limit_to_last(2),
                ['triceratops', 'stegosaurus'], DINOS)
    query_check('child_start_at_limit_to_first',
                dinos.order_by_child('height').start_at(1).limit_to_first(2),
                ['lambeosaurus', 'triceratops'], DINOS)
    query_check('child_start_at_true', dinos.order_by_child('height').start_at(True),
                ['flyer', 'linhenykus', 'pterodactyl', 'lambeosaurus', 'triceratops', 'stegosaurus',
                 'bruhathkayosaurus', 'tallasaurus'], DINOS)
    query_check('child_equal_to_string', dinos.order_by_child('height').equal_to('tall'),
                ['tallasaurus'], DINOS)
    query_check('child_equal_to_number', dinos.order_by_child('height').equal_to(0.6),
                ['linhenykus', 'pterodactyl'], DINOS)
    query_check('child_equal_to_true', dinos.order_by_child('height').equal_to(True), ['flyer'], DINOS)
    query_check('child_start_at_string', dinos.order_by_child('height').start_at('a'),
                ['tallasaurus'], DINOS)
    query_check('nested_child_limit_to_last', dinos.order_by_child('w/kg').limit_to_last(1),
                ['tallasaurus'], DINOS)
    query_check('nested_child_start_at_end_at', dinos.order_by_child('w/kg').start_at(2500).end_at(11000),
                ['stegosaurus', 'lambeosaurus', 'triceratops'], DINOS)
    query_check('nested_child_end_at_limit_to_last',
                dinos.order_by_child('w/kg').end_at(200000).limit_to_last(1),
                ['bruhathkayosaurus'], DINOS)
    query_check('key_start_at_end_at', dinos.order_by_key().start_at('b').end_at('m'),
                ['bruhathkayosaurus', 'flyer', 'ghost', 'lambeosaurus', 'linhenykus'], DINOS)
    query_check('key_limit_to_first', dinos.order_by_key().limit_to_first(2),
                ['bruhathkayosaurus', 'flyer'], DINOS)
    query_check('key_limit_to_last', dinos.order_by_key().start_at('m').limit_to_last(2),
                ['tallasaurus', 'triceratops'], DINOS)
    query_check('key_equal_to', dinos.order_by_key().equal_to('stegosaurus'), ['stegosaurus'], DINOS)
    query_check('key_without_index', db.reference('/unindexed').order_by_key().end_at('flyer'),
                ['bruhathkayosaurus', 'flyer'], DINOS)
    query_check('value_equal_to', scores.order_by_value().equal_to(5), ['alice', 'carol'], SCORES)
    query_check('value_limit_to_last', scores.order_by_value().limit_to_last(3),
                ['bob', 'gina', 'erin'], SCORES)
    query_check('value_start_at_limit_to_first', scores.order_by_value().start_at(50).limit_to_first(2),
                ['bob', 'gina'], SCORES)
    query_check('value_start_at_end_at', scores.order_by_value().start_at(5).end_at(42),
                ['alice', 'carol', 'dave'], SCORES)
    # Objects all sort equal by value, so ties are broken by key.
    query_check('value_of_objects_limit_to_first', dinos.order_by_value().limit_to_first(2),
                ['bruhathkayosaurus', 'flyer'], DINOS)

    @check('query_missing_location')
    def _():
        return equal(db.reference('/nowhere').order_by_key().limit_to_first(3).get(), None)

    @check('child_query_without_index')
    def _():
        return raises(lambda: db.reference('/unindexed').order_by_child('height').limit_to_first(1).get(),
                      exceptions.InvalidArgumentError,
                      'Index not defined, add ".indexOn": "height", for path "/unindexed", to the rules')

    @check('value_query_without_index')
    def _():
        return raises(lambda: db.reference('/unindexed').order_by_value().limit_to_first(1).get(),
                      exceptions.InvalidArgumentError,
                      'Index not defined, add ".indexOn": ".value", for path "/unindexed", to the rules')


# -------------------------------------------------------------------------------------- override

def override():
    admin = db.reference('/users')
    admin.set({'worker-1': {'jobs': 1}, 'worker-2': {'jobs': 2}})
    worker_app = firebase_admin.initialize_app(name='worker', options={
        'databaseURL': DATABASE_URL, 'httpTimeout': TIMEOUT,
        'databaseAuthVariableOverride': {'uid': 'worker-1'}})
    guest_app = firebase_admin.initialize_app(name='guest', options={
        'databaseURL': DATABASE_URL, 'httpTimeout': TIMEOUT, 'databaseAuthVariableOverride': None})

    @check('override_admin_reads_everything')
    def _():
        return equal(db.reference('/').get(), {'users': {'worker-1': {'jobs': 1}, 'worker-2': {'jobs': 2}}})

    @check('override_own_path_read')
    def _():
        return equal(db.reference('/users/worker-1', app=worker_app).get(), {'jobs': 1})

    @check('override_own_path_write')
    def _():
        own = db.reference('/users/worker-1', app=worker_app)
        own.update({'jobs': 5, 'state': 'busy'})
        own.child('log').push('started')
        return equal(own.child('jobs').get(), 5, stored=admin.child('worker-1').get())

    @check('override_own_path_transaction')
    def _():
        jobs = db.reference('/users/worker-1/jobs', app=worker_app)
        return equal([jobs.transaction(lambda v: (v or 0) + 1), admin.child('worker-1/jobs').get()], [6, 6])

    @check('override_other_path_read_denied')
    def _():
        return raises(db.reference('/users/worker-2', app=worker_app).get,
                      exceptions.UnauthenticatedError, 'Permission denied')

    @check('override_other_path_write_denied')
    def _():
        ok, details = raises(lambda: db.reference('/users/worker-2', app=worker_app).set({'jobs': 0}),
                             exceptions.UnauthenticatedError, 'Permission denied')
        details['stored'] = admin.child('worker-2').get()
        return ok and details['stored'] == {'jobs': 2}, details

    @check('override_root_read_denied')
    def _():
        return raises(db.reference('/', app=worker_app).get, exceptions.UnauthenticatedError,
                      'Permission denied')

    @check('override_query_denied')
    def _():
        return raises(db.reference('/users', app=worker_app).order_by_key().limit_to_first(2).get,
                      exceptions.UnauthenticatedError, 'Permission denied')

    @check('override_none_public_read')
    def _():
        db.reference('/public/motd').set('hello')
        return equal(db.reference('/public/motd', app=guest_app).get(), 'hello')

    @check('override_none_read_denied')
    def _():
        return raises(db.reference('/users/worker-1', app=guest_app).get,
                      exceptions.UnauthenticatedError, 'Permission denied')

    @check('override_none_write_denied')
    def _():
        return raises(lambda: db.reference('/users/worker-1', app=guest_app).set({'jobs': 0}),
                      exceptions.UnauthenticatedError, 'Permission denied')


# ------------------------------------------------------------------------------------ priorities

def priorities():
    # Firebase stores a value with its priority; a plain get() shows the value only.
    @check('priority_set')
    def _():
        ref = db.reference('/ranked/first')
        ref.set({'.value': 'gold', '.priority': 1})
        return equal(ref.get(), 'gold')

    @check('priority_on_object')
    def _():
        ref = db.reference('/ranked/second')
        ref.set({'name': 'silver', '.priority': 'b'})
        return equal(ref.get(), {'name': 'silver'})


GROUPS = {'reads': reads, 'writes': writes, 'transaction': transaction,
          'server-values': server_values, 'queries': queries, 'override': override,
          'priorities': priorities}


def main():
    watchdog = threading.Timer(WATCHDOG, fail, [f'gave up after {WATCHDOG}s'])
    watchdog.daemon = True
    watchdog.start()
    # Emulator mode (FIREBASE_DATABASE_EMULATOR_HOST): the SDK never loads the default
    # credential, it sends `Bearer owner` instead.
    firebase_admin.initialize_app(options={'databaseURL': DATABASE_URL, 'httpTimeout': TIMEOUT})
    GROUPS[sys.argv[1]]()


if __name__ == '__main__':
    main()

"""Drives the official firebase-admin SDK's auth module against a running Hearth.

Used by Tests/EndToEndTests/FirebaseAdminAuthTests.swift; checks that the SDK's user
management (firebase_admin/_user_mgt.py) and verify_id_token (_token_gen.py) work with
Hearth's `projects/P/accounts…` endpoints and ID tokens (docs/protocol/admin-client.md §7).

Needs FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:PORT (emulator mode: every request carries
`Authorization: Bearer owner`). Arguments: MODE PROJECT_ID. Modes:

  checks  runs every check below against a server started with --accept-emulator-owner.
  denied  create_user against a server without it: must raise InsufficientPermissionError.

Prints one JSON line per check: {"name": ..., "ok": true|false, "details": ...}, and exits
0 once every check has run (the Swift test asserts each line). A check that raises is
printed with ok false and the exception. A watchdog ends the run (exit 2) if it wedges.
"""
import json
import os
import sys
import threading

import requests

import firebase_admin
from firebase_admin import auth
from firebase_admin import exceptions

TIMEOUT = 20  # seconds, for every HTTP request
WATCHDOG = 90  # seconds for the whole run

HOST = os.environ['FIREBASE_AUTH_EMULATOR_HOST']
REST = f'http://{HOST}/identitytoolkit.googleapis.com/v1'


def report(name, ok, details=None):
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, sort_keys=True, default=str), flush=True)


def check(name):
    """Runs the decorated function at once as one check: it returns (ok, details)."""
    def run(function):
        try:
            ok, details = function()
        except Exception as error:  # pylint: disable=broad-except
            ok, details = False, f'{type(error).__name__}: {error}'
        report(name, ok, details)
        return function
    return run


def raises(expected, call):
    """(ok, details) for a call that must raise `expected`."""
    try:
        call()
    except expected as error:
        return True, f'{type(error).__name__}: {error}'
    except Exception as error:  # pylint: disable=broad-except
        return False, f'raised {type(error).__name__} instead of {expected.__name__}: {error}'
    return False, f'did not raise {expected.__name__}'


def sign_in(email, password):
    """REST sign-in, as a client app would: the response's JSON."""
    response = requests.post(f'{REST}/accounts:signInWithPassword?key=any',
                             json={'email': email, 'password': password, 'returnSecureToken': True},
                             timeout=TIMEOUT)
    return response.json()


def refresh(token):
    response = requests.post(f'http://{HOST}/securetoken.googleapis.com/v1/token?key=any',
                             data={'grant_type': 'refresh_token', 'refresh_token': token}, timeout=TIMEOUT)
    return response.json()


def checks():
    state = {}

    @check('create_user')
    def _():
        user = auth.create_user(email='Ann@Example.com', password='secret1', display_name='Ann')
        state['uid'] = user.uid
        ok = (len(user.uid) == 28 and user.email == 'ann@example.com' and user.display_name == 'Ann'
              and not user.email_verified and not user.disabled
              and [p.provider_id for p in user.provider_data] == ['password']
              and user.provider_data[0].email == 'ann@example.com'
              and user.user_metadata.creation_timestamp > 0
              and user.tokens_valid_after_timestamp > 0 and user.custom_claims is None)
        return ok, {'uid': user.uid, 'email': user.email, 'providers': [p.provider_id for p in user.provider_data]}

    @check('create_user_with_uid')
    def _():
        user = auth.create_user(uid='fixed-uid', display_name='Fixed', email_verified=True, disabled=True)
        return (user.uid == 'fixed-uid' and user.display_name == 'Fixed' and user.email_verified
                and user.disabled and user.email is None and user.provider_data == []), user.uid

    @check('create_user_duplicate_email')
    def _():
        return raises(auth.EmailAlreadyExistsError, lambda: auth.create_user(email='ann@example.com', password='secret1'))

    @check('create_user_duplicate_uid')
    def _():
        return raises(auth.UidAlreadyExistsError, lambda: auth.create_user(uid='fixed-uid'))

    @check('get_user')
    def _():
        user = auth.get_user(state['uid'])
        return user.uid == state['uid'] and user.email == 'ann@example.com', user.uid

    @check('get_user_by_email')
    def _():
        user = auth.get_user_by_email('ANN@example.com')
        return user.uid == state['uid'], user.uid

    @check('get_user_not_found')
    def _():
        return raises(auth.UserNotFoundError, lambda: auth.get_user('nobody'))

    @check('get_users')
    def _():
        result = auth.get_users([auth.UidIdentifier(state['uid']), auth.EmailIdentifier('nobody@example.com'),
                                 auth.UidIdentifier('fixed-uid')])
        found = sorted(u.uid for u in result.users)
        missing = [getattr(i, 'email', None) for i in result.not_found]
        return found == sorted([state['uid'], 'fixed-uid']) and missing == ['nobody@example.com'], {'found': found, 'missing': missing}

    @check('update_user')
    def _():
        user = auth.update_user(state['uid'], display_name='Ann B', email_verified=True, password='secret2',
                                photo_url='https://example.com/ann.png')
        old = sign_in('ann@example.com', 'secret1')
        new = sign_in('ann@example.com', 'secret2')
        ok = (user.display_name == 'Ann B' and user.email_verified and user.photo_url == 'https://example.com/ann.png'
              and old.get('error', {}).get('message') == 'INVALID_LOGIN_CREDENTIALS' and new.get('localId') == state['uid'])
        return ok, {'display_name': user.display_name, 'old_password': old.get('error'), 'new_password': 'localId' in new}

    @check('update_user_delete_attribute')
    def _():
        user = auth.update_user(state['uid'], photo_url=auth.DELETE_ATTRIBUTE)
        return user.photo_url is None and user.display_name == 'Ann B', user.photo_url

    @check('update_user_not_found')
    def _():
        return raises(auth.UserNotFoundError, lambda: auth.update_user('nobody', display_name='x'))

    @check('set_custom_user_claims')
    def _():
        auth.set_custom_user_claims(state['uid'], {'role': 'editor', 'level': 3})
        claims = auth.get_user(state['uid']).custom_claims
        return claims == {'role': 'editor', 'level': 3}, claims

    @check('set_custom_user_claims_hearth_reserved')
    def _():
        # The SDK lets these through (not in its reserved list); Hearth refuses them.
        results = {}
        for name in ('user_id', 'email', 'hearth_admin'):
            ok, details = raises(exceptions.InvalidArgumentError,
                                 lambda name=name: auth.set_custom_user_claims(state['uid'], {name: True}))
            results[name] = (ok and f'FORBIDDEN_CLAIM' in details and name in details, details)
        claims = auth.get_user(state['uid']).custom_claims
        return all(r[0] for r in results.values()) and claims == {'role': 'editor', 'level': 3}, results

    @check('verify_id_token')
    def _():
        session = sign_in('ann@example.com', 'secret2')
        state['id_token'], state['refresh_token'] = session['idToken'], session['refreshToken']
        decoded = auth.verify_id_token(state['id_token'])
        state['iat'] = decoded['iat']
        ok = (decoded['uid'] == state['uid'] and decoded['sub'] == state['uid'] and decoded['role'] == 'editor'
              and decoded['level'] == 3 and decoded['email'] == 'ann@example.com' and decoded['email_verified'] is True
              and decoded['firebase']['sign_in_provider'] == 'password')
        return ok, {k: decoded.get(k) for k in ('uid', 'role', 'email', 'iss', 'aud')}

    @check('verify_id_token_check_revoked')
    def _():
        decoded = auth.verify_id_token(state['id_token'], check_revoked=True)
        return decoded['uid'] == state['uid'], decoded['uid']

    @check('list_users_pages')
    def _():
        for i in range(5):
            auth.create_user(email=f'list{i}@example.com', password='secret1')
        expected = sorted(u.uid for u in auth.list_users().iterate_all())
        sizes, seen = [], []
        page = auth.list_users(max_results=2)
        while page:
            sizes.append(len(page.users))
            seen.extend(u.uid for u in page.users)
            page = page.get_next_page()
            if len(sizes) > 10:
                break
        no_hashes = all(u.password_hash is None and u.password_salt is None for u in auth.list_users().users)
        ok = len(expected) == 7 and sizes == [2, 2, 2, 1] and sorted(seen) == expected and len(set(seen)) == 7 and no_hashes
        return ok, {'sizes': sizes, 'users': len(expected), 'no_hashes': no_hashes}

    @check('revoke_refresh_tokens')
    def _():
        auth.revoke_refresh_tokens(state['uid'])
        user = auth.get_user(state['uid'])
        revoked, details = raises(auth.RevokedIdTokenError, lambda: auth.verify_id_token(state['id_token'], check_revoked=True))
        # Without check_revoked the emulator-mode SDK checks only iss/aud/sub.
        still_decodes = auth.verify_id_token(state['id_token'])['uid'] == state['uid']
        refreshed = refresh(state['refresh_token'])
        ok = (revoked and user.tokens_valid_after_timestamp > state['iat'] * 1000 and still_decodes
              and refreshed.get('error', {}).get('message') == 'INVALID_REFRESH_TOKEN')
        return ok, {'check_revoked': details, 'valid_after_ms': user.tokens_valid_after_timestamp,
                    'iat': state['iat'], 'refresh': refreshed.get('error')}

    @check('verify_id_token_after_revoke_new_sign_in')
    def _():
        token = sign_in('ann@example.com', 'secret2')['idToken']
        decoded = auth.verify_id_token(token, check_revoked=True)
        return decoded['uid'] == state['uid'], decoded['iat']

    @check('disabled_user_check_revoked')
    def _():
        token = sign_in('ann@example.com', 'secret2')['idToken']
        auth.update_user(state['uid'], disabled=True)
        disabled = auth.get_user(state['uid']).disabled
        ok, details = raises(auth.UserDisabledError, lambda: auth.verify_id_token(token, check_revoked=True))
        auth.update_user(state['uid'], disabled=False)
        return ok and disabled, details

    @check('delete_user')
    def _():
        auth.delete_user(state['uid'])
        gone, details = raises(auth.UserNotFoundError, lambda: auth.get_user(state['uid']))
        again, again_details = raises(auth.UserNotFoundError, lambda: auth.delete_user(state['uid']))
        return gone and again, {'get_user': details, 'delete_again': again_details}

    @check('delete_users')
    def _():
        uids = [u.uid for u in auth.list_users().iterate_all()]
        result = auth.delete_users(uids + ['nobody'])
        left = list(auth.list_users().iterate_all())
        return result.success_count == len(uids) + 1 and result.failure_count == 0 and left == [], {
            'success': result.success_count, 'failure': result.failure_count, 'left': len(left)}


def denied():
    @check('create_user_denied')
    def _():
        return raises(auth.InsufficientPermissionError, lambda: auth.create_user(uid='intruder'))


def main():
    mode, project_id = sys.argv[1], sys.argv[2]
    watchdog = threading.Timer(WATCHDOG, lambda: (print(f'watchdog: no end after {WATCHDOG}s', file=sys.stderr, flush=True), os._exit(2)))
    watchdog.daemon = True
    watchdog.start()
    # Emulator mode (FIREBASE_AUTH_EMULATOR_HOST): the SDK never loads the default
    # credential, it sends `Bearer owner` instead. Its project id must be the server's.
    firebase_admin.initialize_app(options={'projectId': project_id, 'httpTimeout': TIMEOUT})
    {'checks': checks, 'denied': denied}[mode]()
    watchdog.cancel()


if __name__ == '__main__':
    main()

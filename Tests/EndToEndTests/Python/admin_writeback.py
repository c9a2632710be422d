"""Writing back from a Cloud Function outside emulator mode.

Used by Tests/EndToEndTests/AdminWritebackEndToEndTests.swift:

  account PATH EMAIL KEY_PEM TOKEN_URI
        writes a service-account JSON (as Google hands them out) with the private key in
        KEY_PEM (made by `openssl genpkey`) and token_uri pointing at Hearth.
  writeback DATABASE_URL LISTED UNLISTED
        firebase-admin initialised with credentials.Certificate(LISTED) and the https
        DATABASE_URL writes /stats/x = 1 and reads it back; with UNLISTED (a key Hearth does
        not trust) the same write fails with Hearth's invalid_grant; hand-signed assertions
        (aud Hearth's own URL: accepted; wrong aud, expired, over an hour, iat in the future,
        tampered, another grant type: refused in OAuth2's shape).

Prints one JSON line per check {"name", "ok", "details"}; exits 0 when all ran.
"""
import base64
import json
import sys
import time

import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

import firebase_admin
from firebase_admin import credentials, db


def report(name, ok, details=None):
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, sort_keys=True, default=str), flush=True)


def mode_account(path, email, key_pem, token_uri):
    with open(key_pem) as f:
        pem = f.read()
    account = {
        'type': 'service_account', 'project_id': 'demo-hearth', 'private_key_id': 'k-' + email.split('@')[0],
        'private_key': pem, 'client_email': email, 'client_id': '1234567890', 'token_uri': token_uri,
    }
    with open(path, 'w') as f:
        json.dump(account, f)


def mode_writeback(database_url, listed, unlisted):
    app = firebase_admin.initialize_app(credentials.Certificate(listed), {'databaseURL': database_url}, name='listed')
    try:
        db.reference('/stats/x', app=app).set(1)
        value = db.reference('/stats/x', app=app).get()
        report('listed account writes as admin', value == 1, value)
    except Exception as error:  # noqa: BLE001 -- the report carries the reason
        report('listed account writes as admin', False, repr(error))
    other = firebase_admin.initialize_app(credentials.Certificate(unlisted), {'databaseURL': database_url}, name='unlisted')
    try:
        db.reference('/stats/y', app=other).set(2)
        report('unlisted account is refused', False, 'the write succeeded')
    except Exception as error:  # noqa: BLE001
        text = repr(error)
        report('unlisted account is refused', 'invalid_grant' in text and 'adminServiceAccounts' in text, text)
    grant_checks(listed)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def sign(account, claims):
    key = serialization.load_pem_private_key(account['private_key'].encode(), password=None)
    head = {'alg': 'RS256', 'typ': 'JWT', 'kid': account['private_key_id']}
    signing_input = b64(json.dumps(head).encode()) + '.' + b64(json.dumps(claims).encode())
    return signing_input + '.' + b64(key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256()))


def grant_checks(listed):
    with open(listed) as f:
        account = json.load(f)
    url = account['token_uri']
    now = int(time.time())

    def claims(**changes):
        base = {'iss': account['client_email'], 'aud': 'https://oauth2.googleapis.com/token',
                'scope': 'https://www.googleapis.com/auth/firebase.database', 'iat': now, 'exp': now + 3600}
        base.update(changes)
        return base

    def post(assertion, grant_type='urn:ietf:params:oauth:grant-type:jwt-bearer'):
        return requests.post(url, data={'grant_type': grant_type, 'assertion': assertion}, timeout=20)

    answer = post(sign(account, claims(aud=url)))
    body = answer.json()
    report('own endpoint as aud is accepted', answer.status_code == 200 and body.get('token_type') == 'Bearer'
           and 0 < body.get('expires_in', 0) <= 3600 and body.get('access_token'), body)
    cases = {
        'wrong aud': (sign(account, claims(aud='https://example.com/token')), 'invalid_grant', 'aud must be'),
        'expired': (sign(account, claims(iat=now - 7200, exp=now - 3600)), 'invalid_grant', 'expired'),
        'over an hour': (sign(account, claims(exp=now + 7200)), 'invalid_grant', 'at most 3600'),
        'iat in the future': (sign(account, claims(iat=now + 600, exp=now + 1200)), 'invalid_grant', 'future'),
        'tampered': (sign(account, claims())[:-4] + 'AAAA', 'invalid_grant', 'signature'),
        'garbage': ('not-a-jwt', 'invalid_grant', 'not a JWT'),
        'iss of another account': (sign(account, claims(iss='someone@demo-hearth.iam.gserviceaccount.com')),
                                   'invalid_grant', 'not one of adminServiceAccounts'),
    }
    for name, (assertion, error, words) in cases.items():
        answer = post(assertion)
        body = answer.json()
        report(f'refused: {name}', answer.status_code == 400 and body.get('error') == error
               and words in body.get('error_description', ''), body)
    answer = post(sign(account, claims()), grant_type='refresh_token')
    report('refused: another grant type', answer.status_code == 400 and answer.json().get('error') == 'unsupported_grant_type',
           answer.text)


if __name__ == '__main__':
    mode, args = sys.argv[1], sys.argv[2:]
    {'account': mode_account, 'writeback': mode_writeback}[mode](*args)

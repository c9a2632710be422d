"""Custom tokens with the official firebase-admin SDK against Hearth.

Used by Tests/EndToEndTests/CustomTokenEndToEndTests.swift. Modes:

  account PATH EMAIL      writes a new service account JSON (a fresh 2048-bit RSA key made
                          here, as the Firebase console would hand out) to PATH.
  checks PORT PROJECT ACCOUNT OTHER HEARTH_TOKEN
                          firebase-admin's create_custom_token with ACCOUNT's key, signed in
                          through Hearth; claims seen by the rules and kept across refresh;
                          every refusal case. OTHER is a service account Hearth does not
                          trust; HEARTH_TOKEN a token from `hearth token --custom`.
  emulator PORT PROJECT   with FIREBASE_AUTH_EMULATOR_HOST set, firebase-admin mints unsigned
                          tokens: accepted by a server in emulator mode, from loopback.

Prints one JSON line per check {"name", "ok", "details"}; exits 0 when all ran.
"""
import base64
import json
import os
import sys
import time

import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

TIMEOUT = 20
AUDIENCE = 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit'


def report(name, ok, details=None):
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, sort_keys=True, default=str), flush=True)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def payload(jwt):
    return json.loads(unb64(jwt.split('.')[1]))


def mode_account(path, email):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    account = {
        'type': 'service_account', 'project_id': 'demo-hearth', 'private_key_id': os.urandom(20).hex(),
        'private_key': pem, 'client_email': email, 'client_id': '1234567890',
        'token_uri': 'https://oauth2.googleapis.com/token',
    }
    with open(path, 'w') as f:
        json.dump(account, f)


def sign(account, claims, header=None):
    """A JWT signed by hand with the account's key (for the cases the SDK will not make)."""
    key = serialization.load_pem_private_key(account['private_key'].encode(), password=None)
    head = header or {'alg': 'RS256', 'typ': 'JWT', 'kid': account['private_key_id']}
    signing_input = b64(json.dumps(head).encode()) + '.' + b64(json.dumps(claims).encode())
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + '.' + b64(signature)


def claims_for(account, uid, **extra):
    now = int(time.time())
    claims = {'iss': account['client_email'], 'sub': account['client_email'], 'aud': AUDIENCE,
              'uid': uid, 'iat': now, 'exp': now + 3600}
    claims.update(extra)
    return claims


class Hearth:
    def __init__(self, port):
        self.base = f'http://127.0.0.1:{port}'

    def sign_in(self, token, path='/v1/accounts:signInWithCustomToken'):
        response = requests.post(self.base + path, json={'token': token, 'returnSecureToken': True}, timeout=TIMEOUT)
        return response.status_code, response.json()

    def refresh(self, refresh_token):
        response = requests.post(self.base + '/v1/token', data={'grant_type': 'refresh_token', 'refresh_token': refresh_token}, timeout=TIMEOUT)
        return response.status_code, response.json()

    def get(self, path, id_token):
        return requests.get(f'{self.base}{path}.json', params={'auth': id_token}, timeout=TIMEOUT).status_code


def refused(hearth, name, token, fragment=''):
    status, body = hearth.sign_in(token)
    message = body.get('error', {}).get('message', '')
    report(name, status == 400 and message.startswith('INVALID_CUSTOM_TOKEN') and fragment in message, [status, message])


def mode_checks(port, project, account_path, other_path, hearth_token):
    import firebase_admin
    from firebase_admin import auth, credentials
    with open(account_path) as f:
        account = json.load(f)
    with open(other_path) as f:
        other = json.load(f)
    app = firebase_admin.initialize_app(credentials.Certificate(account_path), {'projectId': project})
    hearth = Hearth(port)

    # The SDK's own token, unchanged: RS256, kid, the service account as iss/sub.
    token = auth.create_custom_token('alice', {'premium': True, 'tier': 3}, app=app)
    token = token.decode() if isinstance(token, bytes) else token
    header = json.loads(unb64(token.split('.')[0]))
    report('sdk_token_shape', header.get('alg') == 'RS256' and payload(token)['iss'] == account['client_email'], header)
    status, body = hearth.sign_in(token)
    report('sign_in', status == 200 and body.get('isNewUser') is True and body.get('localId') == 'alice'
           and body.get('kind') == 'identitytoolkit#VerifyCustomTokenResponse', [status, sorted(body)])
    id_token = body.get('idToken', '')
    claims = payload(id_token) if id_token else {}
    report('id_token_claims', claims.get('premium') is True and claims.get('tier') == 3 and claims.get('sub') == 'alice'
           and claims.get('firebase', {}).get('sign_in_provider') == 'custom', claims)
    report('rules_see_the_claim', hearth.get('/premium/report', id_token) == 200)

    plain = auth.create_custom_token('bob', app=app)
    plain = plain.decode() if isinstance(plain, bytes) else plain
    status, bob = hearth.sign_in(plain)
    report('rules_refuse_without_the_claim', status == 200 and hearth.get('/premium/report', bob.get('idToken', '')) == 401, status)

    status, refreshed = hearth.refresh(body.get('refreshToken', ''))
    new_claims = payload(refreshed['id_token']) if status == 200 else {}
    report('claims_survive_refresh', new_claims.get('premium') is True
           and new_claims.get('firebase', {}).get('sign_in_provider') == 'custom' and new_claims.get('auth_time') == claims.get('auth_time'),
           new_claims)
    status, again = hearth.sign_in(token)  # usable until it expires
    report('second_sign_in_same_user', status == 200 and again.get('isNewUser') is False and again.get('localId') == 'alice', [status, again.get('isNewUser')])
    status, legacy = hearth.sign_in(token, '/identitytoolkit/v3/relyingparty/verifyCustomToken')
    report('v3_verify_custom_token', status == 200 and legacy.get('localId') == 'alice', status)

    status, own = hearth.sign_in(hearth_token)
    report('hearth_minted_token', status == 200 and payload(own.get('idToken', 'a.e30.b')).get('role') == 'ops', [status, own.get('error')])

    parts = token.split('.')
    tampered = parts[0] + '.' + b64(json.dumps(dict(payload(token), uid='mallory')).encode()) + '.' + parts[2]
    refused(hearth, 'tampered_payload', tampered, 'signature')
    refused(hearth, 'unknown_signer', sign(other, claims_for(other, 'eve')), 'signer')
    refused(hearth, 'wrong_audience', sign(account, claims_for(account, 'eve', aud='https://example.com')), 'aud')
    refused(hearth, 'expired', sign(account, claims_for(account, 'eve', iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)), 'expired')
    refused(hearth, 'lifetime_over_an_hour', sign(account, claims_for(account, 'eve', exp=int(time.time()) + 7200)), 'lives at most')
    refused(hearth, 'reserved_claim_firebase', sign(account, claims_for(account, 'eve', claims={'firebase': {'x': 1}})), 'reserved')
    refused(hearth, 'reserved_claim_hearth_admin', sign(account, claims_for(account, 'eve', claims={'hearth_admin': True})), 'reserved')
    unsigned = b64(json.dumps({'alg': 'none', 'typ': 'JWT'}).encode()) + '.' + b64(json.dumps(claims_for(account, 'eve')).encode()) + '.'
    refused(hearth, 'alg_none_outside_emulator_mode', unsigned, 'emulator')
    refused(hearth, 'hs256', sign(account, claims_for(account, 'eve'), {'alg': 'HS256', 'typ': 'JWT'}), 'algorithm')
    refused(hearth, 'garbage', 'not.a.token')
    status, body = hearth.sign_in('')
    report('missing_token', status == 400 and body.get('error', {}).get('message') == 'MISSING_CUSTOM_TOKEN', body)


def mode_emulator(port, project):
    import firebase_admin
    from firebase_admin import auth
    app = firebase_admin.initialize_app(options={'projectId': project})
    token = auth.create_custom_token('emu-user', {'team': 'a'}, app=app)
    token = token.decode() if isinstance(token, bytes) else token
    report('emulator_token_is_unsigned', json.loads(unb64(token.split('.')[0])).get('alg') == 'none')
    status, body = Hearth(port).sign_in(token)
    report('emulator_sign_in', status == 200 and body.get('localId') == 'emu-user' and payload(body['idToken']).get('team') == 'a', [status, body.get('error')])


if __name__ == '__main__':
    mode = sys.argv[1]
    if mode == 'account':
        mode_account(sys.argv[2], sys.argv[3])
    elif mode == 'checks':
        mode_checks(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
    elif mode == 'emulator':
        mode_emulator(int(sys.argv[2]), sys.argv[3])
    print('done', flush=True)

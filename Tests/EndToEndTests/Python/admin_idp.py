"""Reads a provider-linked user with the official firebase-admin SDK.

Used by Tests/EndToEndTests/IdentityProviderEndToEndTests.swift. Needs
FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:PORT. Arguments: PROJECT_ID PROVIDER_ID RAW_ID.
Prints one JSON line: the uid that get_users([ProviderIdentifier(...)]) finds (the
Python SDK's way to look a user up by provider uid; Node's and Java's name it
getUserByProviderUid) and the user's provider_data, then the same after
update_user(providers_to_delete=[PROVIDER_ID]).
"""
import json
import sys

import firebase_admin
from firebase_admin import auth

project, provider, raw = sys.argv[1:4]
firebase_admin.initialize_app(options={'projectId': project})


def providers(user):
    return [{'provider_id': p.provider_id, 'uid': p.uid, 'email': p.email, 'display_name': p.display_name}
            for p in user.provider_data]


def by_provider_uid():
    found = auth.get_users([auth.ProviderIdentifier(provider, raw)])
    return found.users[0] if found.users else None


user = by_provider_uid()
result = {'uid': user.uid, 'provider_data': providers(user)}
auth.update_user(user.uid, providers_to_delete=[provider])
after = auth.get_user(user.uid)
result['after_unlink'] = providers(after)
result['found_after_unlink'] = by_provider_uid() is not None
print(json.dumps(result, sort_keys=True), flush=True)

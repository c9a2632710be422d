"""A real SMTP server on loopback for the email-action tests (aiosmtpd from PyPI).

Binds 127.0.0.1 port 0 itself (no fixed port) and prints `port N`, then one JSON line per
message it accepted: {"from", "to", "data"}. Options:

  --fail-first N      answer 451 (a temporary failure) to the first N recipients: the
                      sender must retry.
  --tls DIR           offer STARTTLS with a certificate for `localhost` made here; its
                      authority's PEM is written to DIR/ca.pem for the sender to trust.
  --auth USER:PASS    require AUTH (after STARTTLS) with these credentials.

Runs until its stdin closes (the test ends), so it never outlives the test.
"""
import argparse
import asyncio
import datetime
import json
import socket
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult


def make_certificate(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'Hearth test CA')])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'localhost')]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName('localhost')]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    with open(f'{directory}/ca.pem', 'wb') as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(f'{directory}/server.pem', 'wb') as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(f'{directory}/server.key', 'wb') as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(f'{directory}/server.pem', f'{directory}/server.key')
    return context


class Handler:
    def __init__(self, fail_first):
        self.fail_left = fail_first

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.fail_left > 0:
            self.fail_left -= 1
            return '451 4.3.0 try again later'
        envelope.rcpt_tos.append(address)
        return '250 OK'

    async def handle_DATA(self, server, session, envelope):
        data = envelope.content.decode('utf-8', errors='replace')
        print(json.dumps({'from': envelope.mail_from, 'to': envelope.rcpt_tos, 'data': data}), flush=True)
        return '250 Message accepted'


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--fail-first', type=int, default=0)
    parser.add_argument('--tls')
    parser.add_argument('--auth')
    args = parser.parse_args()
    context = make_certificate(args.tls) if args.tls else None
    expected = args.auth.encode() if args.auth else None

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = expected is not None and auth_data.login + b':' + auth_data.password == expected
        return AuthResult(success=ok)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('127.0.0.1', 0))
    sock.listen(16)
    loop = asyncio.get_running_loop()
    handler = Handler(args.fail_first)
    await loop.create_server(
        lambda: SMTP(handler, hostname='localhost', tls_context=context, require_starttls=context is not None,
                     authenticator=authenticator if expected else None, auth_required=expected is not None,
                     auth_require_tls=True),
        sock=sock)
    print(f'port {sock.getsockname()[1]}', flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the test closes our stdin


if __name__ == '__main__':
    asyncio.run(main())

"""The App Store Server API stand-in checked on its own, with an independent
JWT implementation (PyJWT) and an independent HTTP/2 client (h2): it accepts
the JWT Apple documents, refuses every variant that breaks a documented rule,
and its signed data verifies with the x5c leaf it carries."""
import base64
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import h2.connection
import h2.events
import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography import x509

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
import app_store_standin  # noqa: E402

KEY_ID, ISSUER_ID, BUNDLE_ID = "TESTKEY123", "57246542-96fe-1a63-e053-0824d011072a", "com.example.credits"
TRANSACTION_ID = "2000000000000001"


def signing_ca_pem():
    """Four certificates and four EC keys, the shape of LocalTestingCertificateAuthority.exportPEM()."""
    text, keys = "", []
    for index in range(4):
        key, certificate = app_store_standin.make_ca(f"test {index}")
        text += certificate.public_bytes(serialization.Encoding.PEM).decode()
        keys.append(key)
    for key in keys:
        der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
        text += "-----BEGIN EC PRIVATE KEY-----\n" + base64.b64encode(der).decode() + "\n-----END EC PRIVATE KEY-----\n"
    return text


@pytest.fixture(scope="module")
def standin():
    api_key = ec.generate_private_key(ec.SECP256R1())
    work = tempfile.mkdtemp(prefix="standin-test-")
    config = {
        "workDir": work, "keyId": KEY_ID, "issuerId": ISSUER_ID, "bundleId": BUNDLE_ID, "appAppleId": 42,
        "apiPublicKeyPEM": api_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode(),
        "signingCA": signing_ca_pem(),
        "environments": {"Production": {"transactions": [
            {"transactionId": TRANSACTION_ID, "originalTransactionId": TRANSACTION_ID, "productId": "p",
             "type": "Consumable", "purchaseDate": 1, "quantity": 1}]}},
    }
    path = os.path.join(work, "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "app_store_standin.py"), "--config", path],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("standin listening "), line
        announced = json.loads(line[len("standin listening "):])
        yield {"key": api_key, **announced}
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def get(standin, path, token, port_name="production"):
    """One HTTP/2 GET over TLS verified against the stand-in's CA; returns (status, body)."""
    context = ssl.create_default_context(cafile=standin["caPath"])
    context.set_alpn_protocols(["h2"])
    with socket.create_connection(("127.0.0.1", standin[port_name]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as sock:
            assert sock.selected_alpn_protocol() == "h2"
            connection = h2.connection.H2Connection()
            connection.initiate_connection()
            headers = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", path)]
            if token is not None:
                headers.append(("authorization", f"Bearer {token}"))
            connection.send_headers(1, headers, end_stream=True)
            sock.sendall(connection.data_to_send())
            status, body, deadline = None, b"", time.time() + 10
            while time.time() < deadline:
                data = sock.recv(65536)
                if not data:
                    break
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived):
                        status = int(dict(event.headers)[b":status"])
                    elif isinstance(event, h2.events.DataReceived):
                        body += event.data
                        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        return status, body
                sock.sendall(connection.data_to_send())
    raise AssertionError("no complete answer")


def token(key, headers=None, **overrides):
    now = int(time.time())
    claims = {"iss": ISSUER_ID, "iat": now, "exp": now + 1200, "aud": "appstoreconnect-v1", "bid": BUNDLE_ID}
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, key, algorithm="ES256", headers=headers if headers is not None else {"kid": KEY_ID, "typ": "JWT"})


def raw_token(key, header, claims):
    """A JWT with exactly this header (PyJWT always adds typ)."""
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    signing_input = f"{part(header)}.{part(claims)}"
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    signature = base64.urlsafe_b64encode(r.to_bytes(32, "big") + s.to_bytes(32, "big")).rstrip(b"=").decode()
    return f"{signing_input}.{signature}"


def test_documented_jwt_is_accepted_and_signed_data_verifies(standin):
    status, body = get(standin, f"/inApps/v1/transactions/{TRANSACTION_ID}", token(standin["key"]))
    assert status == 200
    jws = json.loads(body)["signedTransactionInfo"]
    header_text, payload_text, signature_text = jws.split(".")
    header = json.loads(base64.urlsafe_b64decode(header_text + "=="))
    assert header["alg"] == "ES256" and len(header["x5c"]) == 3
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    signature = base64.urlsafe_b64decode(signature_text + "==")
    assert len(signature) == 64
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    leaf.public_key().verify(der, f"{header_text}.{payload_text}".encode(), ec.ECDSA(hashes.SHA256()))
    payload = json.loads(base64.urlsafe_b64decode(payload_text + "=="))
    assert payload["transactionId"] == TRANSACTION_ID
    assert payload["bundleId"] == BUNDLE_ID and payload["environment"] == "Production"


@pytest.mark.parametrize("variant", [
    "missing", "wrong_key", "hs256", "no_typ", "wrong_kid", "wrong_iss", "wrong_aud", "no_bid",
    "wrong_bid", "expired", "over_an_hour", "issued_in_future",
])
def test_every_broken_rule_is_401(standin, variant):
    key, now = standin["key"], int(time.time())
    tokens = {
        "missing": None,
        "wrong_key": token(ec.generate_private_key(ec.SECP256R1())),
        "hs256": jwt.encode({"iss": ISSUER_ID, "iat": now, "exp": now + 60, "aud": "appstoreconnect-v1", "bid": BUNDLE_ID},
                            "a-32-byte-secret-for-hs256-tests", algorithm="HS256", headers={"kid": KEY_ID, "typ": "JWT"}),
        "no_typ": raw_token(key, {"alg": "ES256", "kid": KEY_ID},
                            {"iss": ISSUER_ID, "iat": now, "exp": now + 60, "aud": "appstoreconnect-v1", "bid": BUNDLE_ID}),
        "wrong_kid": token(key, headers={"kid": "OTHERKEY99", "typ": "JWT"}),
        "wrong_iss": token(key, iss="00000000-0000-0000-0000-000000000000"),
        "wrong_aud": token(key, aud="appstoreconnect-v2"),
        "no_bid": token(key, bid=None),
        "wrong_bid": token(key, bid="com.example.other"),
        "expired": token(key, iat=now - 1300, exp=now - 100),
        "over_an_hour": token(key, exp=now + 3601),
        "issued_in_future": token(key, iat=now + 600, exp=now + 1200),
    }
    status, body = get(standin, f"/inApps/v1/transactions/{TRANSACTION_ID}", tokens[variant])
    assert status == 401
    assert body.startswith(b"Unauthenticated")


def test_unknown_transaction_is_apples_404(standin):
    status, body = get(standin, "/inApps/v1/transactions/2999999999999999", token(standin["key"]))
    assert status == 404
    assert json.loads(body) == {"errorCode": 4040010, "errorMessage": "Transaction id not found."}
    status, _ = get(standin, f"/inApps/v1/transactions/{TRANSACTION_ID}", token(standin["key"]), port_name="sandbox")
    assert status == 404, "sandbox has its own data"


def test_hand_built_token_is_accepted_when_complete(standin):
    """The control for the no_typ case: the same hand-built token with typ passes."""
    now = int(time.time())
    complete = raw_token(standin["key"], {"alg": "ES256", "kid": KEY_ID, "typ": "JWT"},
                         {"iss": ISSUER_ID, "iat": now, "exp": now + 60, "aud": "appstoreconnect-v1", "bid": BUNDLE_ID})
    status, _ = get(standin, f"/inApps/v1/transactions/{TRANSACTION_ID}", complete)
    assert status == 200

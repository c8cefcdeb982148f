"""OpenAPI contract: every gateway route's REAL responses, from the whole
system started by `scripts/run.sh --detach --no-demo` (debug build, port 0
for every listener, the admin ones too, so it runs beside `scripts/run.sh`
and other checkouts' suites; a state folder of its own), are checked
against docs/openapi.yaml: the status is documented for the operation (or
covered by `default`), the media type is the documented one, and the JSON
body validates against the documented schema (required members, types,
enums, formats) with no undocumented members. Purchases are signed with
the local-testing CA run.sh trusts; the system accepts Production, so
Sandbox purchases are credited only to the reviewer this test lists in
APPLE_SANDBOX_USER_IDS."""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import jsonschema
import pytest
import yaml
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509 import load_pem_x509_certificate

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC_PATH = os.path.join(ROOT, "docs", "openapi.yaml")
BUNDLE_ID = "com.meeyao.qianwen"
HTTP_TIMEOUT_SECONDS = 20
START_TIMEOUT_SECONDS = 900  # includes an incremental debug build


# ---------------------------------------------------------------- the system

@pytest.fixture(scope="module")
def system():
    state = tempfile.mkdtemp(prefix="iap-contract-")
    reviewer = str(uuid.uuid4())
    env = dict(os.environ, RUN_STATE_DIR=state, BUILD_CONFIGURATION="debug", APPLE_SANDBOX_USER_IDS=reviewer,
               POINTS_LISTEN="127.0.0.1:0", PAYMENTS_LISTEN="127.0.0.1:0", GATEWAY_LISTEN="127.0.0.1:0")
    try:
        started = subprocess.run([os.path.join(ROOT, "scripts", "run.sh"), "--detach", "--no-demo"], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=START_TIMEOUT_SECONDS)
        if started.returncode != 0:
            pytest.fail(f"scripts/run.sh --detach failed:\n{started.stdout[-3000:]}\n{started.stderr[-3000:]}")
        with open(os.path.join(state, "gateway.addr")) as f:
            address = f.read().strip()
        secrets = dict(line.strip().split("=", 1) for line in open(os.path.join(state, "secrets.env")) if "=" in line)
        yield {"base": f"http://{address}", "secret": secrets["JWT_HS256_SECRET"], "state": state,
               "issuer": "https://auth.iap-credits.local", "audience": "iap-credits-demo", "reviewer": reviewer,
               "ca": load_ca(os.path.join(ROOT, ".data", "local-ca", "ca.pem"))}
    finally:
        subprocess.run([os.path.join(ROOT, "scripts", "run.sh"), "stop"], cwd=ROOT, env=env, capture_output=True, timeout=120)
        shutil.rmtree(state, ignore_errors=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load_ca(path):
    """Certificates (root, intermediate, leaf, stranger) and keys, as `Demo init-ca` writes them."""
    text = open(path).read()
    certificates = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", text, re.S)
    keys = re.findall(r"-----BEGIN EC PRIVATE KEY-----.*?-----END EC PRIVATE KEY-----", text, re.S)
    der = [load_pem_x509_certificate(c.encode()).public_bytes(serialization.Encoding.DER) for c in certificates[:3]]
    return {"x5c": [base64.b64encode(d).decode() for d in (der[2], der[1], der[0])],
            "leaf_key": serialization.load_pem_private_key(keys[2].encode(), password=None)}


def sign_jws(ca, payload):
    header = b64url(json.dumps({"alg": "ES256", "x5c": ca["x5c"]}).encode())
    body = b64url(json.dumps(payload).encode())
    der = ca["leaf_key"].sign(f"{header}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return f"{header}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def mint_token(system, sub, email):
    import hmac
    import hashlib
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"iss": system["issuer"], "aud": system["audience"], "sub": sub, "email": email,
                                "iat": now, "nbf": now, "exp": now + 600}).encode())
    mac = hmac.new(system["secret"].encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64url(mac)}"


def transaction(ca, transaction_id, product_id, environment="Sandbox", account_token=None, revoked=False):
    now = int(time.time() * 1000)
    payload = {"transactionId": transaction_id, "originalTransactionId": transaction_id, "bundleId": BUNDLE_ID,
               "productId": product_id, "purchaseDate": now - 5000, "originalPurchaseDate": now - 5000, "quantity": 1,
               "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": now, "environment": environment,
               "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 1990, "currency": "USD"}
    if account_token:
        payload["appAccountToken"] = account_token
    if revoked:
        payload["revocationDate"] = now
        payload["revocationReason"] = 0
    return sign_jws(ca, payload)


def request(system, method, path, token=None, body=None, raw=None, content_type=None):
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(system["base"] + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_SECONDS) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_system_takes_no_fixed_port(system):
    """Listen ports 0 put the admin listeners on port 0 too: a fixed one (the
    defaults 9180-9182) fails the start whenever `scripts/run.sh` or another
    checkout's suite holds it."""
    for name in ["points", "payments", "gateway"]:
        with open(os.path.join(system["state"], "logs", f"{name}.out")) as f:
            announced = re.findall(r" admin listening on 127\.0\.0\.1:(\d+)$", f.read(), re.M)
        assert len(announced) == 1, f"{name} announced no admin listener on 127.0.0.1"
        assert int(announced[0]) not in {0, 9180, 9181, 9182}, f"{name}'s admin listener took a fixed port"


# ---------------------------------------------------------------- the contract

class Contract:
    def __init__(self):
        self.spec = yaml.safe_load(open(SPEC_PATH))
        # OpenAPI 3.1 schemas are JSON Schema 2020-12; refs resolve inside the document.
        self.validator_class = jsonschema.validators.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema"})

    def operation(self, method, path):
        path = path.split("?", 1)[0]
        for template, item in self.spec["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
            if re.match(pattern, path) and method.lower() in item:
                return template, item[method.lower()]
        return None, None

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.spec
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def undocumented_members(self, schema, value, where="$"):
        """Members of `value` that its (resolved) object schema does not declare."""
        schema = self.resolve(schema)
        problems = []
        if isinstance(value, dict) and isinstance(schema, dict) and "properties" in schema:
            for key, member in value.items():
                if key not in schema["properties"]:
                    problems.append(f"{where}.{key} is not documented")
                else:
                    problems += self.undocumented_members(schema["properties"][key], member, f"{where}.{key}")
        if isinstance(value, list) and isinstance(schema, dict) and "items" in schema:
            for index, item in enumerate(value):
                problems += self.undocumented_members(schema["items"], item, f"{where}[{index}]")
        return problems

    def check(self, method, path, status, headers, body):
        """Every way this response breaks the documented contract (empty when it holds)."""
        template, operation = self.operation(method, path)
        if operation is None:
            return [] if status in (404, 405) else [f"{method} {path}: no such operation documented"]
        responses = operation["responses"]
        spec = responses.get(str(status)) or responses.get("default")
        if spec is None:
            return [f"{method} {template}: status {status} is not documented"]
        spec = self.resolve(spec)
        lower = {k.lower(): v for k, v in headers.items()}
        problems = []
        if not lower.get("x-request-id"):
            problems.append(f"{method} {template} {status}: no X-Request-Id")
        for name in spec.get("headers", {}):
            if name.lower() not in lower:
                problems.append(f"{method} {template} {status}: header {name} missing")
        content = spec.get("content")
        if not content:
            if body:
                problems.append(f"{method} {template} {status}: documented without a body, got {body[:200]!r}")
            return problems
        media_type = lower.get("content-type", "").split(";")[0].strip()
        if media_type not in content:
            return problems + [f"{method} {template} {status}: content type {media_type!r}, documented {list(content)}"]
        schema = content[media_type]["schema"]
        try:
            document = json.loads(body)
        except ValueError:
            return problems + [f"{method} {template} {status}: body is not JSON: {body[:200]!r}"]
        wrapped = dict(schema, components=self.spec["components"]) if "$ref" not in schema else \
            {"$ref": schema["$ref"], "components": self.spec["components"]}
        validator = self.validator_class(wrapped, format_checker=jsonschema.FormatChecker())
        for error in validator.iter_errors(document):
            problems.append(f"{method} {template} {status}: {'/'.join(map(str, error.absolute_path)) or '$'}: {error.message}")
        problems += [f"{method} {template} {status}: {p}" for p in self.undocumented_members(schema, document)]
        if "Problem" in json.dumps(schema) and isinstance(document, dict) and document.get("status") != status:
            problems.append(f"{method} {template} {status}: problem body says status {document.get('status')}")
        return problems


@pytest.fixture(scope="module")
def contract():
    return Contract()


def exercise(system, environment="Sandbox"):
    """Drives every route through success and failure; returns (method, path, status, headers, body)."""
    seen = []

    def call(method, path, **kwargs):
        status, headers, body = request(system, method, path, **kwargs)
        seen.append((method, path, status, headers, body))
        return status, headers, body

    ca = system["ca"]
    # Sandbox next to Production is credited only to the listed reviewer.
    user = system["reviewer"] if environment == "Sandbox" else str(uuid.uuid4())
    token = mint_token(system, user, f"contract.{user[:8]}@example.com")
    other = mint_token(system, str(uuid.uuid4()), f"other.{user[:8]}@example.com")
    call("GET", "/healthz")
    call("GET", "/readyz")
    call("GET", "/api/v1/points/balance", token=token)
    call("GET", "/api/v1/points/balance")
    call("GET", "/api/v1/points/packages", token=token)
    call("GET", "/api/v1/points/packages", token="not.a.token")
    status, _, body = call("GET", "/api/v1/payments/apple/account-token", token=token)
    assert status == 200, body
    account_token = json.loads(body)["appAccountToken"]
    call("GET", "/api/v1/payments/apple/account-token")
    consent = "/api/v1/payments/apple/consumption-consent"
    status, _, body = call("GET", consent, token=token)
    assert status == 200 and json.loads(body) == {"consented": False, "recorded": False}, body
    status, _, body = call("PUT", consent, token=token, body={"consented": True})
    assert status == 200 and json.loads(body) == {"consented": True, "recorded": True}, body
    call("PUT", consent, token=token, body={"consented": True})  # idempotent
    status, _, body = call("GET", consent, token=token)
    assert status == 200 and json.loads(body)["consented"] is True, body
    call("PUT", consent, token=token, body={"consented": "yes"})  # 422
    call("PUT", consent, token=token, raw=b'{"consented":', content_type="application/json")  # 400
    call("PUT", consent, token=token, raw=b'{"consented":true}', content_type="text/plain")  # 415
    call("PUT", consent, body={"consented": True})  # 401
    call("GET", consent)  # 401

    verify = "/api/v1/payments/apple/transactions/verify"
    product = "com.meeyao.qianwen.starter_pack"
    tid = str(int(time.time() * 1000) * 1000 + 1)
    purchase = {"productCode": "starter_pack", "appStoreProductId": product, "transactionId": tid,
                "signedTransactionInfo": transaction(ca, tid, product, environment, account_token), "appAccountToken": account_token}
    status, _, body = call("POST", verify, token=token, body=purchase)
    assert status == 200, body
    call("POST", verify, token=token, body=purchase)  # already_granted
    call("POST", verify, token=other, body=purchase)  # 409 conflict
    call("POST", verify, token=token, body=dict(purchase, productCode="no_such_pack"))  # 404
    call("POST", verify, token=token, body=dict(purchase, appStoreProductId="com.meeyao.qianwen.premium_pack"))  # 422
    call("POST", verify, token=token, body=dict(purchase, transactionId="12ab"))  # 422 validation
    call("POST", verify, token=token, raw=b'{"productCode":', content_type="application/json")  # 400
    call("POST", verify, token=token, raw=json.dumps(purchase).encode(), content_type="text/plain")  # 415
    call("POST", verify, token=token, raw=b'{"x":"' + b"a" * 70000 + b'"}', content_type="application/json")  # 413
    call("POST", verify, body=purchase)  # 401
    stranger = mint_token(system, str(uuid.uuid4()), f"stranger.{user[:8]}@example.com")
    sandbox_id = str(int(tid) + 2)
    status, _, body = call("POST", verify, token=stranger, body=dict(
        purchase, transactionId=sandbox_id, appAccountToken=None,
        signedTransactionInfo=transaction(ca, sandbox_id, product, "Sandbox")))  # 403 not credited here
    assert status == 403, body
    revoked_id = str(int(tid) + 1)
    call("POST", verify, token=token, body=dict(purchase, transactionId=revoked_id, appAccountToken=None,
         signedTransactionInfo=transaction(ca, revoked_id, product, environment, revoked=True)))  # 409 revoked

    # StoreKit 1 receipts: run.sh sets no App Store Server API key, so a
    # well-formed receipt is 503 PAYMENT_RECEIPTS_UNAVAILABLE (not retryable);
    # the 200 and the receipt problems are PaymentsReceiptTests' (stand-in).
    receipts = "/api/v1/payments/apple/receipts"
    status, _, body = call("POST", receipts, token=token, body={"receiptData": base64.b64encode(b"receipt").decode()})
    assert status == 503 and json.loads(body)["code"] == "PAYMENT_RECEIPTS_UNAVAILABLE", body
    assert json.loads(body)["retryable"] is False, body
    call("POST", receipts, token=token, body={"receiptData": ""})  # 422 validation
    call("POST", receipts, token=token, body={"receiptData": "AAAA", "transactionId": tid})  # 400 unknown member
    call("POST", receipts, token=token, raw=b'{"receiptData":"AAAA"}', content_type="text/plain")  # 415
    status, _, _ = call("POST", receipts, token=token, raw=b'{"receiptData":"' + b"A" * 100000 + b'"}',
                        content_type="application/json")  # past 64 KiB, within the route's own limit
    assert status == 503
    call("POST", receipts, token=token, raw=b'{"receiptData":"' + b"A" * 800000 + b'"}',
         content_type="application/json")  # 413
    call("POST", receipts, body={"receiptData": "AAAA"})  # 401

    call("GET", f"/api/v1/payments/apple/transactions/{tid}", token=token)
    call("GET", f"/api/v1/payments/apple/transactions/{tid}", token=other)  # 404
    call("GET", "/api/v1/payments/apple/transactions/12ab", token=token)  # 422
    call("GET", f"/api/v1/payments/apple/transactions/{tid}")  # 401

    now = int(time.time() * 1000)
    notification = sign_jws(ca, {
        "notificationType": "REFUND", "notificationUUID": str(uuid.uuid4()), "version": "2.0", "signedDate": now,
        "data": {"bundleId": BUNDLE_ID, "bundleVersion": "1", "appAppleId": 1234567890, "environment": environment,
                 "signedTransactionInfo": transaction(ca, tid, product, environment, account_token, revoked=True)}})
    notifications = "/api/v1/payments/apple/notifications"
    status, _, body = call("POST", notifications, body={"signedPayload": notification})
    assert status == 200, body
    call("POST", notifications, body={"signedPayload": "a.b.c"})  # 422
    call("POST", notifications, raw=b"[", content_type="application/json")  # 400
    call("GET", f"/api/v1/payments/apple/transactions/{tid}", token=token)  # refunded
    # The history routes: the purchase, the refund; paged one entry at a time.
    for route in ("/api/v1/points/ledger", "/api/v1/payments/apple/transactions"):
        status, _, body = call("GET", route, token=token)
        assert status == 200, body
        status, _, body = call("GET", route + "?pageSize=1", token=token)
        assert status == 200, body
        token_next = json.loads(body).get("nextPageToken")
        if token_next:
            status, _, body = call("GET", f"{route}?pageSize=1&pageToken={token_next}", token=token)
            assert status == 200, body
        call("GET", route + "?pageSize=0", token=token)  # 422
        call("GET", route + "?pageToken=not-issued-here", token=token)  # 422 from the service
        call("GET", route + "?sort=asc", token=token)  # 400 unknown parameter
        call("GET", route)  # 401
    call("GET", "/api/v1/no/such/route", token=token)  # 404
    call("DELETE", "/api/v1/points/balance", token=token)  # 405
    return seen


def test_every_route_answers_as_documented(system, contract):
    seen = exercise(system)
    problems = [p for method, path, status, headers, body in seen for p in contract.check(method, path, status, headers, body)]
    assert not problems, "\n".join(problems)
    statuses = {(m, contract.operation(m, p)[0], s) for m, p, s, _, _ in seen}
    # The exercise really covered every documented operation.
    for template, item in contract.spec["paths"].items():
        for method in item:
            assert any(t == template and m.lower() == method for m, t, _ in statuses), f"{method} {template} never exercised"


def test_local_testing_environment_is_documented(system, contract):
    seen = exercise(system, environment="Xcode")
    problems = [p for method, path, status, headers, body in seen for p in contract.check(method, path, status, headers, body)]
    assert not problems, "\n".join(problems)

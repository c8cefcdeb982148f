#!/usr/bin/env python3
"""A local stand-in for Apple's App Store Server API, for the Swift client's tests.

It serves the endpoints the client uses, over HTTPS with HTTP/2 only (ALPN h2),
on two ports: one plays production (api.storekit.apple.com), the other sandbox.
Its server certificate comes from a throwaway CA made at start-up (written to
the work directory, with an unrelated second CA for "wrong CA" tests).

Every request must carry the JWT Apple documents ("Generating JSON Web Tokens
for API requests"): header exactly {alg: ES256, kid, typ: JWT}; claims iss,
iat, exp (after now, at most 60 minutes after iat), aud "appstoreconnect-v1",
bid; an ES256 signature (raw r||s) by the test .p8's public key. Anything else
is answered 401 with Apple's plain-text "Unauthenticated" body.

Signed data (transactions, notifications, app transactions) is signed here as
compact JWS with the leaf key and x5c chain of a LocalTestingCertificateAuthority
that the test exported, so the Swift SignedDataVerifier can check it against
that CA's root. Pages carry real opaque tokens (HMAC-protected revision and
paginationToken, bound to the query; pagination tokens expire).

Control: one JSON command per line on stdin, one JSON answer per line on
stdout (see `control`): faults (HTTP status, 429 with Retry-After in Apple's
UNIX-milliseconds form, slow
answers, dropped connections), data added at run time (transactions,
notifications, orders), the request log (with each request's time and JSON
body), token lifetime, reset. The
process listens on 127.0.0.1 only (port 0), prints
`standin listening {"production": P, "sandbox": S, ...}` and exits on stdin
EOF or SIGTERM.

Usage: app_store_standin.py --config CONFIG.json
"""
import argparse
import asyncio
import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import secrets
import signal
import ssl
import sys
import time
import uuid

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PAGE_SIZE = 20  # Apple: at most 20 transactions / notification records per page.
BODY_BYTES_MAX = 64 * 1024
JWT_BYTES_MAX = 8 * 1024
JWT_LIFETIME_MAX = 3600  # exp at most 60 minutes after iat
CLOCK_SKEW = 60
HISTORY_DAYS = {"Production": 180, "Sandbox": 30}
PRODUCT_TYPES = {
    "Auto-Renewable Subscription": "AUTO_RENEWABLE",
    "Non-Renewing Subscription": "NON_RENEWABLE",
    "Consumable": "CONSUMABLE",
    "Non-Consumable": "NON_CONSUMABLE",
}
DELIVERY_STATUSES = {"DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                     "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"}
REFUND_PREFERENCES = {"DECLINE", "GRANT_FULL", "GRANT_PRORATED"}
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def now_ms():
    return int(time.time() * 1000)


def log(message):
    print(f"standin: {message}", file=sys.stderr, flush=True)


class AppleError(Exception):
    """An answer in Apple's error shape."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def bad_request(code, message):
    return AppleError(400, code, message)


def not_found(code=4040010, message="Transaction id not found."):
    return AppleError(404, code, message)


# MARK: PKI


def pem_blocks(text, label):
    pattern = re.compile(rf"-----BEGIN {label}-----(.*?)-----END {label}-----", re.S)
    return [base64.b64decode("".join(body.split())) for body in pattern.findall(text)]


class Signer:
    """Signs payloads as Apple does: compact JWS, ES256 (raw r||s), x5c [leaf, intermediate, root]."""

    def __init__(self, ca_pem):
        certificates = pem_blocks(ca_pem, "CERTIFICATE")
        keys = pem_blocks(ca_pem, "EC PRIVATE KEY")
        if len(certificates) != 4 or len(keys) != 4:
            raise SystemExit("signingCA must be LocalTestingCertificateAuthority.exportPEM()")
        root, intermediate, leaf = certificates[0], certificates[1], certificates[2]
        self.key = serialization.load_der_private_key(keys[2], password=None)
        chain = [base64.b64encode(der).decode() for der in (leaf, intermediate, root)]
        self.header = b64url(json.dumps({"alg": "ES256", "x5c": chain}, separators=(",", ":")).encode())

    def sign(self, payload):
        body = b64url(json.dumps(payload, separators=(",", ":")).encode())
        signing_input = f"{self.header}.{body}".encode()
        r, s = decode_dss_signature(self.key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        return f"{self.header}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def make_ca(common_name):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                                crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                   .sign(key, hashes.SHA256()))
    return key, certificate


def make_tls_files(work_dir, server_names):
    """A test CA, a server certificate it signs (SAN: the names, 127.0.0.1), and an unrelated CA."""
    ca_key, ca_certificate = make_ca("App Store stand-in test CA")
    _, other_ca = make_ca("Unrelated test CA")
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress
    names = [x509.DNSName(name) for name in server_names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, server_names[0])]))
                   .issuer_name(ca_certificate.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName(names), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(work_dir, f"{name}.pem") for name in ("ca", "other-ca", "server-cert", "server-key")}
    pem = serialization.Encoding.PEM
    with open(paths["ca"], "wb") as f:
        f.write(ca_certificate.public_bytes(pem))
    with open(paths["other-ca"], "wb") as f:
        f.write(other_ca.public_bytes(pem))
    with open(paths["server-cert"], "wb") as f:
        f.write(certificate.public_bytes(pem))
    with open(paths["server-key"], "wb") as f:
        f.write(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


# MARK: JWT


class JWTChecker:
    def __init__(self, public_key_pem, key_id, issuer_id, bundle_id):
        self.public_key = serialization.load_pem_public_key(public_key_pem.encode())
        self.key_id, self.issuer_id, self.bundle_id = key_id, issuer_id, bundle_id

    def check(self, authorization):
        """None when the JWT is what Apple documents, otherwise why not."""
        if not authorization or not authorization.startswith("Bearer "):
            return "no Bearer token"
        token = authorization[len("Bearer "):]
        if len(token) > JWT_BYTES_MAX:
            return "token too long"
        parts = token.split(".")
        if len(parts) != 3:
            return "not a compact JWS"
        try:
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except (ValueError, json.JSONDecodeError):
            return "undecodable part"
        if header != {"alg": "ES256", "kid": self.key_id, "typ": "JWT"}:
            return f"header {header}"
        if set(claims) - {"iss", "iat", "exp", "aud", "bid", "nonce"} or not {"iss", "iat", "exp", "aud", "bid"} <= set(claims):
            return f"claims {sorted(claims)}"
        if claims["iss"] != self.issuer_id or claims["aud"] != "appstoreconnect-v1" or claims["bid"] != self.bundle_id:
            return "iss/aud/bid"
        iat, exp, now = claims["iat"], claims["exp"], int(time.time())
        if not isinstance(iat, int) or not isinstance(exp, int) or isinstance(iat, bool) or isinstance(exp, bool):
            return "iat/exp not integers"
        if iat > now + CLOCK_SKEW or exp <= now or exp - iat > JWT_LIFETIME_MAX or exp <= iat:
            return f"times iat={iat} exp={exp} now={now}"
        if len(signature) != 64:
            return "signature is not raw r||s"
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            self.public_key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
        except Exception:
            return "bad signature"
        return None


# MARK: The App Store


class Tokens:
    """Opaque page tokens: HMAC-protected, bound to the query they were issued for."""

    def __init__(self):
        self.secret = secrets.token_bytes(32)
        self.ttl_seconds = 3600

    def issue(self, kind, offset, fingerprint):
        body = json.dumps({"k": kind, "o": offset, "f": fingerprint, "t": int(time.time())}, separators=(",", ":")).encode()
        return b64url(body) + "." + b64url(hmac.new(self.secret, body, hashlib.sha256).digest())

    def read(self, kind, token, fingerprint, expires):
        """The offset, or a reason: 'invalid' or 'expired'."""
        try:
            body_text, mac_text = token.split(".")
            body = b64url_decode(body_text)
            if not hmac.compare_digest(b64url_decode(mac_text), hmac.new(self.secret, body, hashlib.sha256).digest()):
                return "invalid"
            fields = json.loads(body)
        except (ValueError, json.JSONDecodeError):
            return "invalid"
        if fields.get("k") != kind or fields.get("f") != fingerprint:
            return "invalid"
        if expires and time.time() - fields["t"] >= self.ttl_seconds:
            return "expired"
        return fields["o"]


def fingerprint(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:32]


class Store:
    """One environment's data, served and signed on demand."""

    def __init__(self, environment, seed, config, signer, tokens):
        self.environment = environment
        self.bundle_id, self.app_apple_id = config["bundleId"], config["appAppleId"]
        self.signer, self.tokens = signer, tokens
        self.transactions = [dict(t) for t in seed.get("transactions", [])]
        self.notifications = [dict(n) for n in seed.get("notifications", [])]
        self.orders = dict(seed.get("orders", {}))
        self.tests = {}
        self.consumption = []

    # Transactions

    def find(self, transaction_id):
        for transaction in self.transactions:
            if transaction["transactionId"] == transaction_id:
                return transaction
        return None

    def customer_of(self, transaction):
        return transaction.get("_customer") or transaction.get("originalTransactionId") or transaction["transactionId"]

    def customer_transactions(self, transaction_id):
        anchor = self.find(transaction_id) or next(
            (t for t in self.transactions if t.get("originalTransactionId") == transaction_id), None)
        if anchor is None:
            raise not_found()
        customer = self.customer_of(anchor)
        return [t for t in self.transactions if self.customer_of(t) == customer]

    def signed(self, transaction):
        payload = {k: v for k, v in transaction.items() if not k.startswith("_")}
        payload.setdefault("bundleId", self.bundle_id)
        payload.setdefault("environment", self.environment)
        payload["signedDate"] = now_ms()
        return self.signer.sign(payload)

    def transaction_info(self, transaction_id):
        valid_id(transaction_id)
        transaction = self.find(transaction_id)
        if transaction is None:
            raise not_found()
        return 200, {"signedTransactionInfo": self.signed(transaction)}

    def history(self, transaction_id, query):
        valid_id(transaction_id)
        filters = {k: sorted(v) for k, v in query.items() if k != "revision"}
        selected = self.customer_transactions(transaction_id)
        for product_type in query.get("productType", []):
            if product_type not in PRODUCT_TYPES.values():
                raise bad_request(4000022, "Invalid request. The product type parameter is invalid.")
        if "productType" in query:
            selected = [t for t in selected if PRODUCT_TYPES.get(t.get("type")) in query["productType"]]
        if "productId" in query:
            selected = [t for t in selected if t.get("productId") in query["productId"]]
        start, end = one_int(query, "startDate", 4000015), one_int(query, "endDate", 4000016)
        if start is not None and end is not None and start >= end:
            raise bad_request(4000013, "Invalid request. The start date is later than the end date.")
        if start is not None:
            selected = [t for t in selected if t.get("purchaseDate", 0) >= start]
        if end is not None:
            selected = [t for t in selected if t.get("purchaseDate", 0) < end]
        if "revoked" in query:
            flag = query["revoked"][0]
            if flag not in ("true", "false") or len(query["revoked"]) != 1:
                raise bad_request(4000030, "Invalid request. The revoked parameter contains an invalid value.")
            selected = [t for t in selected if ("revocationDate" in t) == (flag == "true")]
        order = query.get("sort", ["ASCENDING"])[0]
        if order not in ("ASCENDING", "DESCENDING"):
            raise bad_request(4000021, "Invalid request. The sort parameter is invalid.")
        selected.sort(key=lambda t: (t.get("_modified", t.get("purchaseDate", 0)), t["transactionId"]),
                      reverse=order == "DESCENDING")
        page, revision, has_more = self.paged("history", selected, query.get("revision", [None])[0], filters,
                                              4000005, "Invalid request revision.")
        return 200, {"revision": revision, "hasMore": has_more, "bundleId": self.bundle_id,
                     "appAppleId": self.app_apple_id, "environment": self.environment,
                     "signedTransactions": [self.signed(t) for t in page]}

    def refunds(self, transaction_id, query):
        valid_id(transaction_id)
        refunded = [t for t in self.customer_transactions(transaction_id) if "revocationDate" in t]
        refunded.sort(key=lambda t: (t["revocationDate"], t["transactionId"]))
        page, revision, has_more = self.paged("refunds", refunded, query.get("revision", [None])[0], {},
                                              4000005, "Invalid request revision.")
        return 200, {"signedTransactions": [self.signed(t) for t in page], "revision": revision, "hasMore": has_more}

    def paged(self, kind, items, token, bound_to, invalid_code, invalid_message, expires=False):
        key = fingerprint([kind, bound_to])
        offset = 0
        if token is not None:
            offset = self.tokens.read(kind, token, key, expires)
            if offset == "expired":
                raise bad_request(4000017, "Invalid request. The pagination token is expired.")
            if offset == "invalid":
                raise bad_request(invalid_code, invalid_message)
        page = items[offset:offset + PAGE_SIZE]
        return page, self.tokens.issue(kind, offset + len(page), key), offset + len(page) < len(items)

    def app_transaction(self, transaction_id):
        valid_id(transaction_id)
        mine = self.customer_transactions(transaction_id)
        customer = self.customer_of(mine[0])
        if any(t.get("_noAppTransaction") for t in mine):
            raise not_found(4040019, "No app transaction exists for the customer.")
        first = min(t.get("purchaseDate", now_ms()) for t in mine)
        payload = {"receiptType": self.environment, "appAppleId": self.app_apple_id, "bundleId": self.bundle_id,
                   "applicationVersion": "1", "versionExternalIdentifier": 0, "receiptCreationDate": now_ms(),
                   "requestDate": now_ms(), "originalApplicationVersion": "1", "originalPurchaseDate": first,
                   "appTransactionId": "70" + str(int(hashlib.sha256(customer.encode()).hexdigest()[:12], 16)),
                   "originalPlatform": "iOS", "signedDate": now_ms()}
        return 200, {"signedAppTransactionInfo": self.signer.sign(payload)}

    def order(self, order_id):
        ids = self.orders.get(order_id)
        if not ids:
            return 200, {"status": 1}
        return 200, {"status": 0, "signedTransactions": [self.signed(self.find(i)) for i in ids if self.find(i)]}

    def consume(self, transaction_id, body):
        valid_id(transaction_id)
        if not isinstance(body, dict):
            raise bad_request(4000000, "Invalid request.")
        if body.get("customerConsented") is not True:
            raise bad_request(4000035, "Invalid request. The customer consented field is invalid or doesn't indicate that the customer consented.")
        if body.get("deliveryStatus") not in DELIVERY_STATUSES:
            raise bad_request(4000036, "Invalid request. The delivery status field is invalid.")
        if not isinstance(body.get("sampleContentProvided"), bool):
            raise bad_request(4000041, "Invalid request. The sample content provided field is invalid.")
        percentage = body.get("consumptionPercentage")
        if percentage is not None and (not isinstance(percentage, int) or isinstance(percentage, bool)
                                       or not 0 <= percentage <= 100000):
            raise bad_request(4000000, "Invalid request. consumptionPercentage must be 0-100000.")
        if "refundPreference" in body and body["refundPreference"] not in REFUND_PREFERENCES:
            raise bad_request(4000000, "Invalid request. The refund preference field is invalid.")
        if self.find(transaction_id) is None:
            raise not_found()
        self.consumption.append({"transactionId": transaction_id, "body": body})
        return 202, None

    def set_app_account_token(self, original_id, body):
        valid_id(original_id)
        token = body.get("appAccountToken") if isinstance(body, dict) else None
        if not isinstance(token, str) or not UUID_RE.match(token):
            raise bad_request(4000183, "Invalid request. The app account token field must be a valid UUID.")
        transaction = self.find(original_id)
        if transaction is None:
            raise not_found()
        if transaction.get("originalTransactionId", original_id) != original_id:
            raise bad_request(4000187, "Invalid request. The transaction ID provided is not an original transaction ID.")
        for t in self.transactions:
            if t.get("originalTransactionId") == original_id:
                t["appAccountToken"] = token.lower()
        return 200, None

    # Notifications

    def notification_payload(self, notification):
        """The notification as first sent, signed once: Apple's history returns
        the same signedPayload every time (its signedDate and its transaction
        as they were then)."""
        if "_signedPayload" not in notification:
            notification["_signedPayload"] = self.sign_notification(notification)
        return notification["_signedPayload"]

    def sign_notification(self, notification):
        payload = {k: v for k, v in notification.items() if not k.startswith("_")}
        data = {"appAppleId": self.app_apple_id, "bundleId": self.bundle_id, "environment": self.environment}
        linked = notification.get("_transactionId")
        if linked and self.find(linked):
            data["signedTransactionInfo"] = self.signed(self.find(linked))
        payload.setdefault("version", "2.0")
        payload["data"] = data
        payload["signedDate"] = now_ms()
        return self.signer.sign(payload)

    def notification_history(self, body, query):
        if not isinstance(body, dict):
            raise bad_request(4000000, "Invalid request.")
        start, end = body.get("startDate"), body.get("endDate")
        if not isinstance(start, int) or isinstance(start, bool):
            raise bad_request(4000015, "Invalid request. The start date is not a timestamp value in milliseconds.")
        if not isinstance(end, int) or isinstance(end, bool):
            raise bad_request(4000016, "Invalid request. The end date is not a timestamp value in milliseconds.")
        if start >= end:
            raise bad_request(4000013, "Invalid request. The start date is later than the end date.")
        if start < now_ms() - HISTORY_DAYS[self.environment] * 86_400_000:
            raise bad_request(4000012, "Invalid request. The start date is too far in the past.")
        if body.get("notificationType") and body.get("transactionId"):
            raise bad_request(4000019, "Invalid request. Include either the transactionId or the notificationType, not both.")
        if body.get("notificationSubtype") and not body.get("notificationType"):
            raise bad_request(4000018, "Invalid request. A notification subtype needs its notification type.")
        selected = [n for n in self.notifications if start <= n["_firstSendAttempt"] <= end]
        if body.get("notificationType"):
            selected = [n for n in selected if n.get("notificationType") == body["notificationType"]]
        if body.get("notificationSubtype"):
            selected = [n for n in selected if n.get("subtype") == body["notificationSubtype"]]
        if body.get("transactionId"):
            customer = self.customer_of(self.customer_transactions(body["transactionId"])[0])
            selected = [n for n in selected if n.get("_transactionId") and self.find(n["_transactionId"])
                        and self.customer_of(self.find(n["_transactionId"])) == customer]
        if body.get("onlyFailures") is True:
            selected = [n for n in selected if n.get("_failed")]
        selected.sort(key=lambda n: (n["_firstSendAttempt"], n.get("notificationUUID", "")))
        page, token, has_more = self.paged("notifications", selected, query.get("paginationToken", [None])[0], body,
                                           4000014, "Invalid request. The pagination token is invalid.", expires=True)
        history = [{"signedPayload": self.notification_payload(n),
                    "sendAttempts": [{"attemptDate": n["_firstSendAttempt"],
                                      "sendAttemptResult": "NO_RESPONSE" if n.get("_failed") else "SUCCESS"}]}
                   for n in page]
        return 200, {"notificationHistory": history, "hasMore": has_more, "paginationToken": token}

    def add(self, command):
        """Adds data at run time (a purchase made, a refund granted, a
        notification sent while the test runs). A transaction replaces the
        one with its transactionId; a notification is sent (and signed, with
        its transaction as it is now) when added, at `_firstSendAttempt`
        (default now)."""
        for transaction in command.get("transactions", []):
            existing = self.find(transaction["transactionId"])
            if existing is not None:
                self.transactions.remove(existing)
            self.transactions.append(dict(transaction))
        uuids = []
        for notification in command.get("notifications", []):
            added = dict(notification)
            added.setdefault("notificationUUID", str(uuid.uuid4()))
            added.setdefault("_firstSendAttempt", now_ms())
            added["_signedPayload"] = self.sign_notification(added)
            self.notifications.append(added)
            uuids.append(added["notificationUUID"])
        self.orders.update(command.get("orders", {}))
        return {"ok": True, "notificationUUIDs": uuids}

    def request_test(self):
        token = f"{uuid.uuid4()}_{now_ms()}"
        payload = {"notificationType": "TEST", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
                   "data": {"appAppleId": self.app_apple_id, "bundleId": self.bundle_id, "environment": self.environment},
                   "signedDate": now_ms()}
        self.tests[token] = {"signedPayload": self.signer.sign(payload),
                             "sendAttempts": [{"attemptDate": now_ms(), "sendAttemptResult": "SUCCESS"}]}
        return 200, {"testNotificationToken": token}

    def test_status(self, token):
        if "_" not in token:
            raise bad_request(4000020, "Invalid request. The test notification token is invalid.")
        if token not in self.tests:
            raise not_found(4040008, "Either the test notification doesn't exist, or the App Store server hasn't sent it yet.")
        return 200, self.tests[token]


def valid_id(transaction_id):
    if not re.fullmatch(r"[0-9]{1,64}", transaction_id):
        raise bad_request(4000006, "Invalid transaction id.")


def one_int(query, name, code):
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1 or not re.fullmatch(r"[0-9]{1,15}", values[0]):
        raise bad_request(code, f"Invalid request. The {name} is invalid.")
    return int(values[0])


ROUTES = [
    ("GET", re.compile(r"^/inApps/v1/transactions/appTransactions/([^/]+)$"), lambda s, m, q, b: s.app_transaction(m[1])),
    ("GET", re.compile(r"^/inApps/v1/transactions/([^/]+)$"), lambda s, m, q, b: s.transaction_info(m[1])),
    ("GET", re.compile(r"^/inApps/v2/history/([^/]+)$"), lambda s, m, q, b: s.history(m[1], q)),
    ("GET", re.compile(r"^/inApps/v2/refund/lookup/([^/]+)$"), lambda s, m, q, b: s.refunds(m[1], q)),
    ("GET", re.compile(r"^/inApps/v1/lookup/([^/]+)$"), lambda s, m, q, b: s.order(m[1])),
    ("POST", re.compile(r"^/inApps/v1/notifications/history$"), lambda s, m, q, b: s.notification_history(b, q)),
    ("POST", re.compile(r"^/inApps/v1/notifications/test$"), lambda s, m, q, b: s.request_test()),
    ("GET", re.compile(r"^/inApps/v1/notifications/test/([^/]+)$"), lambda s, m, q, b: s.test_status(m[1])),
    ("PUT", re.compile(r"^/inApps/v2/transactions/consumption/([^/]+)$"), lambda s, m, q, b: s.consume(m[1], b)),
    ("PUT", re.compile(r"^/inApps/v1/transactions/([^/]+)/appAccountToken$"), lambda s, m, q, b: s.set_app_account_token(m[1], b)),
]


def parse_query(text):
    from urllib.parse import unquote
    query = {}
    for part in filter(None, text.split("&")):
        name, _, value = part.partition("=")
        query.setdefault(unquote(name), []).append(unquote(value))
    return query


# MARK: HTTP/2 over TLS


class Server:
    def __init__(self, config, work_dir):
        signer = Signer(config["signingCA"])
        self.tokens = Tokens()
        self.stores = {env: Store(env, config.get("environments", {}).get(env, {}), config, signer, self.tokens)
                       for env in ("Production", "Sandbox")}
        self.jwt = JWTChecker(config["apiPublicKeyPEM"], config["keyId"], config["issuerId"], config["bundleId"])
        self.paths = make_tls_files(work_dir, config.get("serverNames", ["localhost"]))
        self.faults = []
        self.requests = []

    def ssl_context(self):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.paths["server-cert"], self.paths["server-key"])
        context.set_alpn_protocols(["h2"])
        return context

    def take_fault(self, environment, path):
        for fault in self.faults:
            if fault["env"] in (environment, "*") and path.startswith(fault["match"]) and fault["count"] > 0:
                fault["count"] -= 1
                return fault
        return None

    async def serve_connection(self, environment, reader, writer):
        connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        connection.initiate_connection()
        writer.write(connection.data_to_send())
        state = {"bodies": {}, "headers": {}, "windows": {}, "tasks": set()}
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                try:
                    events = connection.receive_data(data)
                except h2.exceptions.ProtocolError:
                    break
                for event in events:
                    if isinstance(event, h2.events.RequestReceived):
                        state["headers"][event.stream_id] = dict(event.headers)
                        state["bodies"][event.stream_id] = bytearray()
                    elif isinstance(event, h2.events.DataReceived):
                        body = state["bodies"].get(event.stream_id)
                        if body is not None and len(body) + len(event.data) <= BODY_BYTES_MAX:
                            body.extend(event.data)
                        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        task = asyncio.ensure_future(self.answer(environment, connection, writer, event.stream_id,
                                                                 state["headers"].pop(event.stream_id, {}),
                                                                 bytes(state["bodies"].pop(event.stream_id, b"")), state))
                        state["tasks"].add(task)
                        task.add_done_callback(state["tasks"].discard)
                    elif isinstance(event, (h2.events.WindowUpdated, h2.events.StreamReset)):
                        for waiter in list(state["windows"].values()):
                            waiter.set()
                writer.write(connection.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:
            for task in list(state["tasks"]):
                task.cancel()
            writer.close()

    async def answer(self, environment, connection, writer, stream_id, headers, body, state):
        method, full_path = headers.get(":method", ""), headers.get(":path", "")
        path, _, query_text = full_path.partition("?")
        try:
            parsed_body = json.loads(body) if body else None
        except json.JSONDecodeError:
            parsed_body = None
        record = {"env": environment, "method": method, "path": path, "query": query_text,
                  "authority": headers.get(":authority"), "contentType": headers.get("content-type"),
                  "at": time.time(), "body": parsed_body}
        self.requests.append(record)
        fault = self.take_fault(environment, path)
        if fault and fault["kind"] == "drop":
            record["status"] = "dropped"
            writer.transport.abort()
            return
        if fault and fault["kind"] == "delay":
            await asyncio.sleep(fault["seconds"])
        reason = self.jwt.check(headers.get("authorization"))
        record["jwtValid"] = reason is None
        if reason is not None:
            log(f"401 for {method} {path}: {reason}")
            request_id = uuid.uuid4().hex[:26].upper()
            return await self.respond(connection, writer, stream_id, 401, f"Unauthenticated\n\nRequest ID: {request_id}.\n".encode(),
                                      "text/plain", record, state)
        if fault and fault["kind"] == "status":
            payload = {"errorCode": fault.get("errorCode", 5000000), "errorMessage": "An unknown error occurred."}
            return await self.respond(connection, writer, stream_id, fault["status"], json.dumps(payload).encode(),
                                      "application/json", record, state)
        if fault and fault["kind"] == "rate_limit":
            payload = {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
            return await self.respond(connection, writer, stream_id, 429, json.dumps(payload).encode(), "application/json",
                                      record, state, extra=[("retry-after", self.retry_after(fault))])
        status, payload = self.route(environment, method, path, query_text, body)
        data = b"" if payload is None else json.dumps(payload).encode()
        await self.respond(connection, writer, stream_id, status, data, "application/json", record, state)

    @staticmethod
    def retry_after(fault):
        """A 429's Retry-After as Apple sends it ("a UNIX time, in
        milliseconds, that informs you when you can next send a request",
        Identifying rate limits): `retryAfter` seconds from now. With
        "retryAfterForm": "delay-seconds", RFC 9110's form instead."""
        if fault.get("retryAfterForm") == "delay-seconds":
            return str(fault["retryAfter"])
        return str(int(time.time() * 1000 + float(fault["retryAfter"]) * 1000))

    def route(self, environment, method, path, query_text, body):
        store = self.stores[environment]
        try:
            parsed = None
            if body:
                try:
                    parsed = json.loads(body)
                except json.JSONDecodeError:
                    raise bad_request(4000000, "Invalid request.")
            for route_method, pattern, handler in ROUTES:
                match = pattern.match(path)
                if match and route_method == method:
                    return handler(store, match, parse_query(query_text), parsed)
            return 404, {"errorCode": 4040000, "errorMessage": "Not found."}
        except AppleError as error:
            return error.status, {"errorCode": error.code, "errorMessage": error.message}

    async def respond(self, connection, writer, stream_id, status, data, content_type, record, state, extra=()):
        record["status"] = status
        response_headers = [(":status", str(status)), ("content-type", content_type),
                            ("content-length", str(len(data)))] + list(extra)
        try:
            connection.send_headers(stream_id, response_headers, end_stream=not data)
            writer.write(connection.data_to_send())
            while data:
                window = min(connection.local_flow_control_window(stream_id), connection.max_outbound_frame_size)
                if window <= 0:
                    waiter = state["windows"].setdefault(stream_id, asyncio.Event())
                    waiter.clear()
                    await asyncio.wait_for(waiter.wait(), 30)
                    continue
                chunk, data = data[:window], data[window:]
                connection.send_data(stream_id, chunk, end_stream=not data)
                writer.write(connection.data_to_send())
                await writer.drain()
            await writer.drain()
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, ConnectionError, asyncio.TimeoutError):
            pass
        finally:
            state["windows"].pop(stream_id, None)

    # Control

    def control(self, command):
        op = command.get("op")
        if op == "fault":
            self.faults.append({"env": command.get("env", "*"), "match": command.get("match", "/"),
                                "count": int(command.get("count", 1)), **command["fault"]})
            return {"ok": True}
        if op == "requests":
            return {"ok": True, "requests": self.requests}
        if op == "add":
            return self.stores[command.get("env", "Production")].add(command)
        if op == "consumption":
            return {"ok": True, "consumption": self.stores[command.get("env", "Production")].consumption}
        if op == "paginationTokenTtl":
            self.tokens.ttl_seconds = int(command["seconds"])
            return {"ok": True}
        if op == "reset":
            self.faults.clear()
            self.requests.clear()
            return {"ok": True}
        return {"ok": False, "error": f"unknown op {op}"}


async def main():
    # A parent that spawned us from a thread with signals blocked (libdispatch
    # workers block them) passes the mask on: SIGTERM must reach us.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    arguments = parser.parse_args()
    with open(arguments.config) as f:
        config = json.load(f)
    work_dir = config.get("workDir") or os.path.dirname(os.path.abspath(arguments.config))
    server = Server(config, work_dir)
    context = server.ssl_context()
    listeners = {}
    for environment in ("Production", "Sandbox"):
        listeners[environment] = await asyncio.start_server(
            lambda r, w, e=environment: server.serve_connection(e, r, w), "127.0.0.1", 0, ssl=context)
    ports = {env: listener.sockets[0].getsockname()[1] for env, listener in listeners.items()}
    print("standin listening " + json.dumps({"production": ports["Production"], "sandbox": ports["Sandbox"],
                                             "caPath": server.paths["ca"], "otherCAPath": server.paths["other-ca"]}),
          flush=True)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signal_number, stop.set)
    stdin = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)

    async def read_commands():
        while True:
            line = await stdin.readline()
            if not line:
                stop.set()
                return
            try:
                answer = server.control(json.loads(line))
            except (ValueError, KeyError, TypeError) as error:
                answer = {"ok": False, "error": str(error)}
            print(json.dumps(answer), flush=True)

    reader_task = asyncio.ensure_future(read_commands())
    await stop.wait()
    reader_task.cancel()
    for listener in listeners.values():
        listener.close()


if __name__ == "__main__":
    asyncio.run(main())

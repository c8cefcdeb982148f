"""Stock grpcio (generated from Protos/) against PointsService on mutual TLS:
with a certificate of an allowed identity a call is answered; without a
certificate it is refused (UNAUTHENTICATED); with a certificate of another
identity it is refused (PERMISSION_DENIED) and nothing is written; a
certificate of another CA fails the handshake. Certificates come from
scripts/internal-pki.sh, as for scripts/run.sh. Needs POINTS_DATABASE_URL
(scripts/test.sh exports it) and a debug build."""
import os
import subprocess
import uuid

import grpc
import pytest

from conftest import ROOT
import stubs

NAME = "points"  # the name PointsService's certificate carries; clients check it


def make_pki(directory, *names):
    subprocess.run([os.path.join(ROOT, "scripts", "internal-pki.sh"), str(directory), *names],
                   check=True, capture_output=True, timeout=60)
    return str(directory)


@pytest.fixture(scope="module")
def points(tmp_path_factory):
    database = os.environ.get("POINTS_DATABASE_URL")
    if not database:
        pytest.fail("POINTS_DATABASE_URL is not set: run scripts/test.sh, or eval \"$(scripts/pg.sh start | sed 's/^/export /')\"")
    pki = make_pki(tmp_path_factory.mktemp("pki"), "points", "payments", "gateway", "spend-caller")
    stranger = make_pki(tmp_path_factory.mktemp("stranger-pki"), "gateway")
    binary = os.path.join(ROOT, ".build", "debug", "PointsService")
    if not os.path.exists(binary):
        pytest.fail(f"{binary} is missing: run swift build first")
    env = dict(os.environ, DATABASE_URL=database, PACKAGES_FILE=os.path.join(ROOT, "config", "packages.json"), LOG_LEVEL="warning",
               TLS_CERT=f"{pki}/points.pem", TLS_KEY=f"{pki}/points.key", TLS_CLIENT_CA=f"{pki}/ca.pem",
               POINTS_SPEND_CALLERS="spend-caller", ADMIN_LISTEN_ADDR="off")
    env.pop("INTERNAL_AUTH", None)  # the default: mutual TLS
    log_path = os.path.join(str(tmp_path_factory.mktemp("log")), "points.log")
    log = open(log_path, "w")
    process = subprocess.Popen([binary, "--listen", "127.0.0.1:0"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        line = process.stdout.readline().strip()
        if " listening on " not in line:
            process.kill()
            pytest.fail(f"PointsService did not start: {line!r} {open(log_path).read()[-2000:]}")
        yield {"address": line.split(" listening on ", 1)[1], "pki": pki, "stranger": stranger, "stubs": stubs.load_points()}
    finally:
        alive = process.poll() is None
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        # A caller hanging up must never take the service down (SIGPIPE from a TLS write).
        assert alive, f"PointsService died during the tests: {open(log_path).read()[-2000:]}"


def stub(points, identity=None, pki=None):
    """A Points stub trusting the internal CA, presenting `identity`'s certificate (None: none)."""
    directory = pki or points["pki"]
    ca = open(os.path.join(points["pki"], "ca.pem"), "rb").read()
    if identity:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=ca,
            private_key=open(os.path.join(directory, f"{identity}.key"), "rb").read(),
            certificate_chain=open(os.path.join(directory, f"{identity}.pem"), "rb").read())
    else:
        credentials = grpc.ssl_channel_credentials(root_certificates=ca)
    channel = grpc.secure_channel(points["address"], credentials, options=[("grpc.ssl_target_name_override", NAME)])
    _, points_pb2_grpc = points["stubs"]
    return channel, points_pb2_grpc.PointsStub(channel)


def code_of(call):
    with pytest.raises(grpc.RpcError) as raised:
        call()
    return raised.value.code()


def test_an_allowed_identity_is_answered(points):
    points_pb2, _ = points["stubs"]
    user = str(uuid.uuid4())
    channel, gateway = stub(points, "gateway")
    with channel:
        balance = gateway.GetBalance(points_pb2.GetBalanceRequest(user_id=user), timeout=10)
        assert balance.balance == 0
        assert len(gateway.GetCatalog(points_pb2.GetCatalogRequest(), timeout=10).packages) > 0
    channel, payments = stub(points, "payments")
    with channel:
        assert len(payments.GetCatalog(points_pb2.GetCatalogRequest(), timeout=10).packages) > 0


def test_get_balances_answers_a_stock_client_and_is_the_gateways_alone(points):
    points_pb2, _ = points["stubs"]
    funded, unseen = str(uuid.uuid4()), str(uuid.uuid4())
    channel, payments = stub(points, "payments")
    with channel:
        payments.Grant(grant_request(points_pb2, funded), timeout=10)
        assert code_of(lambda: payments.GetBalances(points_pb2.GetBalancesRequest(user_ids=[funded]), timeout=10)) \
            == grpc.StatusCode.PERMISSION_DENIED
    channel, gateway = stub(points, "gateway")
    with channel:
        answer = gateway.GetBalances(points_pb2.GetBalancesRequest(user_ids=[unseen, funded, unseen]), timeout=10)
        assert [(b.user_id, b.balance) for b in answer.balances] == [(unseen, 0), (funded, 100), (unseen, 0)]
        assert code_of(lambda: gateway.GetBalances(points_pb2.GetBalancesRequest(user_ids=[]), timeout=10)) \
            == grpc.StatusCode.INVALID_ARGUMENT


def test_without_a_certificate_the_call_is_refused(points):
    points_pb2, _ = points["stubs"]
    channel, anonymous = stub(points)
    with channel:
        assert code_of(lambda: anonymous.GetBalance(points_pb2.GetBalanceRequest(user_id=str(uuid.uuid4())), timeout=10)) \
            == grpc.StatusCode.UNAUTHENTICATED
        assert code_of(lambda: anonymous.Grant(grant_request(points_pb2, str(uuid.uuid4())), timeout=10)) \
            == grpc.StatusCode.UNAUTHENTICATED


def grant_request(points_pb2, user):
    return points_pb2.GrantRequest(event_id=f"payment.apple_iap:{uuid.uuid4().int % 10**16}", user_id=user, email_hash="ab" * 32,
                                   product_code="starter_pack", biz_id=str(uuid.uuid4()))


def test_another_identity_gets_permission_denied_and_nothing_is_written(points):
    points_pb2, _ = points["stubs"]
    user = str(uuid.uuid4())
    for identity in ["gateway", "spend-caller"]:
        channel, caller = stub(points, identity)
        with channel:
            assert code_of(lambda: caller.Grant(grant_request(points_pb2, user), timeout=10)) == grpc.StatusCode.PERMISSION_DENIED
    channel, gateway = stub(points, "gateway")
    with channel:
        assert gateway.GetBalance(points_pb2.GetBalanceRequest(user_id=user), timeout=10).balance == 0
        assert len(gateway.ListLedger(points_pb2.ListLedgerRequest(user_id=user), timeout=10).entries) == 0
        # Spend is never the gateway's.
        assert code_of(lambda: gateway.Spend(points_pb2.SpendRequest(event_id="chat.turn:1", user_id=user, amount=1, biz_type="chat"),
                                             timeout=10)) == grpc.StatusCode.PERMISSION_DENIED
    channel, payments = stub(points, "payments")
    with channel:
        granted = payments.Grant(grant_request(points_pb2, user), timeout=10)
        assert granted.credits_added == 100


def test_a_certificate_of_another_ca_fails_the_handshake(points):
    points_pb2, _ = points["stubs"]
    channel, impostor = stub(points, "gateway", pki=points["stranger"])
    with channel:
        assert code_of(lambda: impostor.GetBalance(points_pb2.GetBalanceRequest(user_id=str(uuid.uuid4())), timeout=10)) \
            == grpc.StatusCode.UNAVAILABLE


def test_health_checks_are_open_without_a_certificate(points, protos):
    # The repository's health.proto (the `protos` fixture), called by path: importing
    # grpc_health as well would register the same messages twice.
    health_pb2 = protos[2]
    ca = open(os.path.join(points["pki"], "ca.pem"), "rb").read()
    credentials = grpc.ssl_channel_credentials(root_certificates=ca)
    with grpc.secure_channel(points["address"], credentials, options=[("grpc.ssl_target_name_override", NAME)]) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check", request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                                    response_deserializer=health_pb2.HealthCheckResponse.FromString)
        answer = check(health_pb2.HealthCheckRequest(service="points.v1.Points"), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_the_named_spend_caller_spends_credits_with_its_certificate(points):
    points_pb2, _ = points["stubs"]
    user = str(uuid.uuid4())
    channel, payments = stub(points, "payments")
    with channel:
        purchase = grant_request(points_pb2, user)
        payments.Grant(purchase, timeout=10)
    channel, chat = stub(points, "spend-caller")
    with channel:
        event = f"chat.turn:{uuid.uuid4()}"
        spent = chat.Spend(points_pb2.SpendRequest(event_id=event, user_id=user, amount=30, biz_type="chat", biz_id="session-1",
                                                   metadata_json='{"feature":"summary"}'), timeout=10)
        assert spent.balance == 70 and not spent.replayed
        assert [a.source_event_id for a in spent.attributions] == [purchase.event_id]
        again = chat.Spend(points_pb2.SpendRequest(event_id=event, user_id=user, amount=30, biz_type="chat", biz_id="session-1",
                                                   metadata_json='{"feature":"summary"}'), timeout=10)
        assert again.replayed and again.balance == 70
        assert code_of(lambda: chat.Spend(points_pb2.SpendRequest(event_id=f"chat.turn:{uuid.uuid4()}", user_id=user, amount=71,
                                                                  biz_type="chat"), timeout=10)) == grpc.StatusCode.FAILED_PRECONDITION
        restored = chat.ReverseSpend(points_pb2.ReverseSpendRequest(event_id=f"chat.refund:{uuid.uuid4()}", user_id=user,
                                                                    spend_event_id=event), timeout=10)
        assert restored.credits_restored == 30 and restored.balance == 100
        # The spend caller moves no purchase money.
        assert code_of(lambda: chat.Grant(grant_request(points_pb2, user), timeout=10)) == grpc.StatusCode.PERMISSION_DENIED
    # Without a certificate, no spend.
    channel, anonymous = stub(points)
    with channel:
        assert code_of(lambda: anonymous.Spend(points_pb2.SpendRequest(event_id=f"chat.turn:{uuid.uuid4()}", user_id=user, amount=1,
                                                                       biz_type="chat"), timeout=10)) == grpc.StatusCode.UNAUTHENTICATED

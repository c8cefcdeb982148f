"""Stock grpcio client against the Swift EchoServer."""
import concurrent.futures

import grpc
import pytest


@pytest.fixture()
def stub(protos, echo_server_address):
    echo_pb2, echo_pb2_grpc, _ = protos
    with grpc.insecure_channel(echo_server_address) as channel:
        yield echo_pb2_grpc.EchoStub(channel)


def test_unary_success(protos, stub):
    echo_pb2 = protos[0]
    response = stub.Unary(echo_pb2.EchoRequest(message="hello", payload=b"\x00\x01\xff"), timeout=10)
    assert response.message == "hello"
    assert response.payload == b"\x00\x01\xff"
    # gRPC core rounds the grpc-timeout it sends UP to a coarser unit (it
    # keeps the header short), so the server may see a little over 10 s.
    assert 0 < response.deadline_remaining_ms <= 10500


def test_no_deadline_is_reported_as_minus_one(protos, stub):
    response = stub.Unary(protos[0].EchoRequest(message="x"))
    assert response.deadline_remaining_ms == -1


@pytest.mark.parametrize("code", [c for c in grpc.StatusCode if c != grpc.StatusCode.OK])
def test_every_error_code(protos, stub, code):
    request = protos[0].EchoRequest(fail_with_code=code.value[0], fail_with_message=f"boom ü % {code.name}")
    with pytest.raises(grpc.RpcError) as raised:
        stub.Unary(request, timeout=10)
    assert raised.value.code() == code
    assert raised.value.details() == f"boom ü % {code.name}"


def test_deadline_exceeded(protos, stub):
    with pytest.raises(grpc.RpcError) as raised:
        stub.Unary(protos[0].EchoRequest(delay_ms=5000), timeout=0.2)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_metadata_ascii_and_binary_both_ways(protos, stub):
    request = protos[0].EchoRequest(message="m", echo_metadata_keys=["x-ascii", "x-blob-bin"])
    metadata = [("x-ascii", "plain value"), ("x-blob-bin", b"\x00\xffbinary\n"), ("x-ignored", "no")]
    response, call = stub.Unary.with_call(request, metadata=metadata, timeout=10)
    initial = dict(call.initial_metadata())
    trailing = dict(call.trailing_metadata())
    assert initial["x-ascii"] == "plain value"
    assert initial["x-blob-bin"] == b"\x00\xffbinary\n"
    assert trailing["x-ascii"] == "plain value"
    assert trailing["x-blob-bin"] == b"\x00\xffbinary\n"
    assert "x-ignored" not in initial
    keys = [entry.key for entry in response.metadata]
    assert keys == ["x-ascii", "x-blob-bin"]


def test_unknown_method_is_unimplemented(echo_server_address):
    with grpc.insecure_channel(echo_server_address) as channel:
        call = channel.unary_unary("/testing.v1.Echo/Missing", request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as raised:
            call(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_malformed_request_is_invalid_argument(echo_server_address):
    with grpc.insecure_channel(echo_server_address) as channel:
        call = channel.unary_unary("/testing.v1.Echo/Unary", request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as raised:
            call(b"\xff\xff\xff", timeout=10)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_hundred_concurrent_calls_on_one_channel(protos, stub):
    echo_pb2 = protos[0]
    futures = [stub.Unary.future(echo_pb2.EchoRequest(message=f"call-{i}", delay_ms=20), timeout=30) for i in range(100)]
    results = [f.result() for f in concurrent.futures.as_completed([_wrap(f) for f in futures])]
    assert sorted(r.message for r in results) == sorted(f"call-{i}" for i in range(100))


def test_oversized_request_is_resource_exhausted(protos, echo_server_address):
    options = [("grpc.max_send_message_length", 16 * 1024 * 1024)]
    with grpc.insecure_channel(echo_server_address, options=options) as channel:
        stub = protos[1].EchoStub(channel)
        with pytest.raises(grpc.RpcError) as raised:
            stub.Unary(protos[0].EchoRequest(payload=b"x" * (4 * 1024 * 1024 + 10)), timeout=30)
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_health_stubs_generate(protos):
    health_pb2 = protos[2]
    assert health_pb2.HealthCheckResponse.SERVING == 1


def _wrap(grpc_future):
    """Adapts a grpc future to concurrent.futures for as_completed."""
    future = concurrent.futures.Future()
    grpc_future.add_done_callback(lambda f: future.set_exception(f.exception()) if f.exception() else future.set_result(f.result()))
    return future

"""Stock grpcio client against the Swift EchoServer over TLS (ALPN h2)."""
import os
import subprocess

import grpc
import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    cert, key = str(directory / "cert.pem"), str(directory / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-days", "1", "-keyout", key, "-out", cert],
        check=True, capture_output=True)
    binary = os.environ.get("ECHO_SERVER_BIN", os.path.join(ROOT, ".build", "debug", "EchoServer"))
    if not os.path.exists(binary):
        pytest.fail(f"EchoServer binary not found at {binary}: run `swift build` first")
    process = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key],
                               stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline().strip()
        if not line.startswith("listening on "):
            pytest.fail(f"EchoServer did not start: {line!r}")
        yield line[len("listening on "):], open(cert, "rb").read()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_unary_over_tls(protos, tls_server):
    address, cert = tls_server
    echo_pb2, echo_pb2_grpc, _ = protos
    credentials = grpc.ssl_channel_credentials(root_certificates=cert)
    options = [("grpc.ssl_target_name_override", "localhost")]
    with grpc.secure_channel(address, credentials, options=options) as channel:
        stub = echo_pb2_grpc.EchoStub(channel)
        assert stub.Unary(echo_pb2.EchoRequest(message="tls"), timeout=10).message == "tls"
        with pytest.raises(grpc.RpcError) as raised:
            stub.Unary(echo_pb2.EchoRequest(fail_with_code=7, fail_with_message="denied"), timeout=10)
        assert raised.value.code() == grpc.StatusCode.PERMISSION_DENIED

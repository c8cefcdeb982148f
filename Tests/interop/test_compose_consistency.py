"""compose/ must stay consistent with the code: every environment variable a
compose service sets must be one that service documents in its --help, and
each service listens on the port its peers are told to call."""
import pathlib
import re
import subprocess

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose" / "docker-compose.yml"
BINARIES = {"PointsService": "points", "PaymentsService": "payments", "Gateway": "gateway"}


def help_text(binary: str) -> str:
    path = ROOT / ".build" / "debug" / binary
    assert path.exists(), f"{path} is missing: run swift build first"
    return subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=30, check=True).stdout


def services():
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_every_compose_variable_is_documented_by_its_service():
    for binary, name in BINARIES.items():
        service = services()[name]
        assert service["command"] == [binary]
        documented = set(re.findall(r"\b([A-Z][A-Z0-9_]{2,})\b", help_text(binary)))
        unknown = set(service["environment"]) - documented
        assert not unknown, f"{name}: compose sets {sorted(unknown)} which {binary} --help does not document"


def test_peers_call_the_ports_services_listen_on():
    svc = services()
    listen = {name: svc[name]["environment"]["LISTEN_ADDR"].rsplit(":", 1)[1] for name in BINARIES.values()}
    assert svc["payments"]["environment"]["POINTS_ADDR"] == f"points:{listen['points']}"
    assert svc["gateway"]["environment"]["POINTS_ADDR"] == f"points:{listen['points']}"
    assert svc["gateway"]["environment"]["PAYMENTS_ADDR"] == f"payments:{listen['payments']}"
    assert svc["gateway"]["ports"] == [f"{listen['gateway']}:{listen['gateway']}"]


def test_each_service_owns_its_database():
    svc = services()
    assert svc["points"]["environment"]["DATABASE_URL"].endswith("/points")
    assert svc["payments"]["environment"]["DATABASE_URL"].endswith("/payments")
    assert "DATABASE_URL" not in svc["gateway"]["environment"]
    init = (ROOT / "compose" / "init-databases.sql").read_text()
    assert "CREATE DATABASE points" in init and "CREATE DATABASE payments" in init


def test_the_image_ships_the_catalog_and_the_apple_root():
    dockerfile = (ROOT / "compose" / "Dockerfile").read_text()
    assert "COPY config ./config" in dockerfile
    assert (ROOT / "config" / "AppleRootCA-G3.cer").exists()
    assert (ROOT / "config" / "packages.json").exists()


def test_only_the_gateway_publishes_a_port():
    svc = services()
    published = sorted(name for name, service in svc.items() if service.get("ports") or service.get("network_mode") == "host")
    assert published == ["gateway"]
    for name in ["points", "payments", "postgres"]:
        assert "edge" not in svc[name].get("networks", []), f"{name} is on the gateway's public network"


def test_services_authenticate_each_other_by_mutual_tls():
    svc = services()
    secrets = yaml.safe_load(COMPOSE.read_text())["secrets"]
    assert all(not spec["file"].endswith("ca.key") for spec in secrets.values()), "the CA's key is never mounted"
    for name in ["points", "payments"]:
        env = svc[name]["environment"]
        assert env["INTERNAL_AUTH"] == "mtls"
        assert env["TLS_CERT"] == f"/run/secrets/{name}_cert" and env["TLS_KEY"] == f"/run/secrets/{name}_key"
        assert env["TLS_CLIENT_CA"] == "/run/secrets/internal_ca"
        assert sorted(svc[name]["secrets"]) == sorted(["internal_ca", f"{name}_cert", f"{name}_key"]), f"{name} gets only its own key"
    payments = svc["payments"]["environment"]
    assert payments["POINTS_TLS_CA"] == "/run/secrets/internal_ca"
    assert payments["POINTS_TLS_SERVER_NAME"] == payments["POINTS_ADDR"].split(":")[0]
    gateway = svc["gateway"]["environment"]
    assert gateway["INTERNAL_AUTH"] == "mtls"
    assert gateway["BACKEND_TLS_CERT"] == "/run/secrets/gateway_cert" and gateway["BACKEND_TLS_KEY"] == "/run/secrets/gateway_key"
    assert sorted(svc["gateway"]["secrets"]) == ["gateway_cert", "gateway_key", "internal_ca"]
    assert gateway["POINTS_TLS_SERVER_NAME"] == gateway["POINTS_ADDR"].split(":")[0]
    assert gateway["PAYMENTS_TLS_SERVER_NAME"] == gateway["PAYMENTS_ADDR"].split(":")[0]
    # The identities PointsService authorises are the names the callers' certificates carry.
    points = svc["points"]["environment"]
    assert points["PAYMENTS_IDENTITY"] == "payments" and points["GATEWAY_IDENTITY"] == "gateway"
    assert payments["GATEWAY_IDENTITY"] == "gateway"

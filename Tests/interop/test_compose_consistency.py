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

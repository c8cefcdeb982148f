"""compose/ must stay consistent with the code: every service is the
database or an instance of one of the three binaries (two or more of each),
runs a command that exists, sets only variables that binary documents in
--help (see service_contract.py), listens on the
ports its defaults use, lists every instance of its peers, has a health check
that hits a path and port the process serves, and gets its secrets from
files only; the image's build context (.dockerignore) leaves out local
state and secrets but nothing the Dockerfile copies."""
import pathlib
import re
import subprocess

import yaml

import service_contract as contract
from service_contract import BINARIES, ROOT

COMPOSE_DIR = ROOT / "compose"
COMPOSE = COMPOSE_DIR / "docker-compose.yml"


def document():
    return yaml.safe_load(COMPOSE.read_text())


def services():
    return document()["services"]


def instances(kind: str) -> list:
    return sorted(name for name in services() if re.fullmatch(rf"{kind}-\d+", name))


def kind_of(name: str) -> str:
    return re.sub(r"-\d+$", "", name)


def env_file_variables(service: dict) -> set:
    """Variable names a service's env_file provides, read from the checked-in example."""
    names = set()
    for path in service.get("env_file", []):
        example = COMPOSE_DIR / (path + ".example")
        assert example.exists(), f"{path} has no checked-in {example.name} naming its variables"
        names |= {line.split("=", 1)[0] for line in example.read_text().splitlines() if line and not line.startswith("#")}
    return names


def test_every_service_is_the_database_or_an_instance_of_a_binary():
    for name in services():
        assert name == "postgres" or kind_of(name) in BINARIES, f"{name} is not something the code builds"
    for kind in BINARIES:
        assert len(instances(kind)) >= 2, f"compose runs fewer than two {kind} instances"


def test_every_instance_runs_its_binary():
    for name, service in services().items():
        if name == "postgres":
            continue
        binary = BINARIES[kind_of(name)]
        assert service["command"] == [binary], f"{name} runs {service['command']}"
        assert binary in contract.help_text(binary), f"{binary} --help does not name itself"


def test_every_compose_variable_is_documented_by_its_service():
    for name, service in services().items():
        if name == "postgres":
            continue
        binary = BINARIES[kind_of(name)]
        variables = set(service["environment"]) | env_file_variables(service)
        unknown = variables - contract.allowed(binary)
        assert not unknown, f"{name}: compose sets {sorted(unknown)} which {binary} --help does not document"


def test_services_listen_on_their_default_ports():
    for name, service in services().items():
        if name == "postgres":
            continue
        binary = BINARIES[kind_of(name)]
        env = service["environment"]
        for variable in ["LISTEN_ADDR", "ADMIN_LISTEN_ADDR"]:
            assert contract.port(env[variable]) == contract.default_port(binary, variable), f"{name} {variable}"
            assert env[variable].startswith("0.0.0.0:"), f"{name} must listen on every interface of its container"


def test_callers_list_every_instance_of_their_peers():
    for name, service in services().items():
        env = service.get("environment", {})
        for variable, peer in [("POINTS_ADDR", "points"), ("PAYMENTS_ADDR", "payments")]:
            if variable not in env:
                continue
            listen = contract.port(services()[instances(peer)[0]]["environment"]["LISTEN_ADDR"])
            assert env[variable].split(",") == [f"{instance}:{listen}" for instance in instances(peer)], f"{name} {variable}"
            assert env[f"{peer.upper()}_TLS_SERVER_NAME"] == peer, "every instance serves the same name, checked whatever is dialled"
    assert "POINTS_ADDR" in services()[instances("payments")[0]]["environment"]
    assert {"POINTS_ADDR", "PAYMENTS_ADDR"} <= set(services()[instances("gateway")[0]]["environment"])


def test_every_container_has_a_health_check_on_a_served_path_and_port():
    for name, service in services().items():
        check = service.get("healthcheck")
        assert check and check["test"], f"{name} has no health check"
        if name == "postgres":
            # Over TCP: on first start the image's init server answers on the socket only.
            assert re.search(r"\bpg_isready -h 127\.0\.0\.1 ", " ".join(check["test"])), check["test"]
            continue
        binary = BINARIES[kind_of(name)]
        url = next(word for word in check["test"] if word.startswith("http://"))
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)(/\w+)", url)
        assert match, url
        port, path = int(match.group(1)), match.group(2)
        env = service["environment"]
        if binary == "Gateway":
            assert port == contract.port(env["LISTEN_ADDR"]) and path in contract.gateway_public_paths(), url
        else:
            assert port == contract.port(env["ADMIN_LISTEN_ADDR"]) and path in contract.admin_paths(), url
        assert path == "/readyz", f"{name}: a container is healthy when its dependencies are"
        assert check["test"][:2] == ["CMD", "curl"]
    dockerfile = (COMPOSE_DIR / "Dockerfile").read_text()
    assert re.search(r"FROM debian:bookworm-slim\n(?:.*\n)*?RUN apt-get .*\n(?:.*\n)*?.*\bcurl\b", dockerfile), "the image has curl"


def test_dependencies_wait_for_healthy_services_that_exist():
    for name, service in services().items():
        for dependency, condition in service.get("depends_on", {}).items():
            assert dependency in services(), f"{name} waits for {dependency}, which compose does not run"
            assert condition == {"condition": "service_healthy"}, f"{name} -> {dependency}"


def test_each_service_owns_its_database():
    for kind, database in [("points", "points"), ("payments", "payments")]:
        for name in instances(kind):
            assert re.fullmatch(rf"postgresql://iap@postgres:5432/{database}\?passfile=/run/secrets/pgpass",
                                services()[name]["environment"]["DATABASE_URL"])
    for name in instances("gateway"):
        assert "DATABASE_URL" not in services()[name]["environment"]
    init = (COMPOSE_DIR / "init-databases.sql").read_text()
    assert "CREATE DATABASE points" in init and "CREATE DATABASE payments" in init


def test_secrets_come_from_files_never_from_this_file():
    doc = document()
    for spec in doc["secrets"].values():
        assert set(spec) == {"file"}, spec
        assert spec["file"].startswith(("./certs/", "./secrets/")) and not spec["file"].endswith("ca.key"), spec
    ignored = subprocess.run(["git", "check-ignore", "compose/certs/x.key", "compose/secrets/pgpass", "compose/secrets/gateway.env"],
                             cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert len(ignored) == 3, "certs/ and secrets/ stay out of version control"
    for name, service in services().items():
        env = service.get("environment", {})
        for variable, value in env.items():
            assert not re.search(r"PASSWORD$|SECRET$", variable), f"{name}: {variable} belongs in a file"
            assert "://" not in str(value) or not re.search(r"://[^/@]*:[^/@]*@", str(value)), f"{name}: a password in {variable}"
        if name == "postgres":
            assert env["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
            continue
        binary = BINARIES[kind_of(name)]
        for variable in contract.secret_settings(binary) - {"DATABASE_URL"}:
            assert variable not in env and variable in env_file_variables(service), f"{name}: {variable} comes from a file"
        for path in service.get("env_file", []):
            assert path.startswith("./secrets/")


def test_only_the_gateways_publish_ports():
    svc = services()
    published = sorted(name for name, service in svc.items() if service.get("ports") or service.get("network_mode") == "host")
    assert published == instances("gateway")
    listen = contract.port(svc[instances("gateway")[0]]["environment"]["LISTEN_ADDR"])
    assert sorted(port for name in published for port in svc[name]["ports"]) == [f"8080:{listen}", f"8081:{listen}"]
    for name, service in svc.items():
        if kind_of(name) != "gateway":
            assert "edge" not in service.get("networks", []), f"{name} is on the gateway's public network"


def test_the_image_ships_the_catalog_and_the_apple_root():
    dockerfile = (COMPOSE_DIR / "Dockerfile").read_text()
    assert "COPY config ./config" in dockerfile
    assert (ROOT / "config" / "AppleRootCA-G3.cer").exists()
    assert (ROOT / "config" / "packages.json").exists()


def test_services_authenticate_each_other_by_mutual_tls():
    svc = services()
    for kind in ["points", "payments"]:
        for name in instances(kind):
            env = svc[name]["environment"]
            assert env["INTERNAL_AUTH"] == "mtls"
            assert env["TLS_CERT"] == f"/run/secrets/{kind}_cert" and env["TLS_KEY"] == f"/run/secrets/{kind}_key"
            assert env["TLS_CLIENT_CA"] == "/run/secrets/internal_ca"
            assert sorted(svc[name]["secrets"]) == sorted(["internal_ca", f"{kind}_cert", f"{kind}_key", "pgpass"]), f"{name} gets only its own key"
    for name in instances("payments"):
        assert svc[name]["environment"]["POINTS_TLS_CA"] == "/run/secrets/internal_ca"
        assert svc[name]["environment"]["GATEWAY_IDENTITY"] == "gateway"
    for name in instances("gateway"):
        gateway = svc[name]["environment"]
        assert gateway["INTERNAL_AUTH"] == "mtls"
        assert gateway["BACKEND_TLS_CERT"] == "/run/secrets/gateway_cert" and gateway["BACKEND_TLS_KEY"] == "/run/secrets/gateway_key"
        assert sorted(svc[name]["secrets"]) == ["gateway_cert", "gateway_key", "internal_ca"]
    # The identities PointsService authorises are the names the callers' certificates carry.
    for name in instances("points"):
        points = svc[name]["environment"]
        assert points["PAYMENTS_IDENTITY"] == "payments" and points["GATEWAY_IDENTITY"] == "gateway"


def brace_expanded(word: str) -> list:
    """A shell word with at most one {a,b,...} group, expanded."""
    match = re.search(r"\{([^{}]*)\}", word)
    if not match:
        return [word]
    return [word[:match.start()] + choice + word[match.end():] for choice in match.group(1).split(",")]


def test_the_key_handover_sets_the_mode_first_and_gives_uid_10001_only_what_containers_read():
    """The header's recipe, and the runbook's: `chmod` after `chown 10001`
    fails without root (the file is no longer yours), which left pgpass
    readable by others and so ignored by libpq; and uid 10001 gets exactly
    the files mounted as keys and pgpass, never the CA's key."""
    mounted = {"compose/" + spec["file"].removeprefix("./")
               for name, spec in document()["secrets"].items() if name.endswith("_key") or name == "pgpass"}
    assert len(mounted) == 4 and not any(path.endswith("ca.key") for path in mounted)
    header = [line.lstrip("#").strip() for line in COMPOSE.read_text().splitlines() if line.startswith("#")]
    runbook = [line.strip() for line in (ROOT / "docs" / "OPERATIONS.md").read_text().splitlines()]
    for where, lines in [("compose header", header), ("docs/OPERATIONS.md", runbook)]:
        commands = [line.split() for line in lines if re.match(r"(sudo )?(chmod|chown) ", line)]
        handover = [c for c in commands if "pgpass" in " ".join(c)]
        assert [c[:2] for c in handover] == [["chmod", "600"], ["sudo", "chown"]], f"{where}: {handover}"
        for command in handover:
            operands = command[2:] if command[0] == "chmod" else command[3:]
            assert command[0] == "chmod" or command[2] == "10001", f"{where}: {command}"
            files = {path for word in operands for path in brace_expanded(word)}
            assert files == mounted, f"{where}: {' '.join(command)} should name exactly {sorted(mounted)}"


def dockerignore_patterns() -> list:
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert not any(p.startswith("!") for p in patterns), "no exceptions: the matcher below does not model them"
    return patterns


def dockerignored(path: str, patterns: list) -> bool:
    """Docker's rule: a path is left out when it or a folder above it matches
    a pattern (`*` and `?` within one segment, `**` across segments)."""
    def regex(pattern):
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            else:
                out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
                i += 1
        return re.compile(out + "$")
    compiled = [regex(p.strip("/")) for p in patterns]
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return any(r.match(prefix) for r in compiled for prefix in prefixes)


def test_the_build_context_leaves_out_state_and_secrets_but_not_what_the_image_copies():
    patterns = dockerignore_patterns()
    assert dockerignored(".build/x", patterns) and not dockerignored("Sources/x.swift", patterns), "the matcher itself"
    for path in [".git/HEAD", ".build/release/Gateway", ".build-asan/x", ".data/pg.pass", ".data/internal-pki/ca.key",
                 ".venv/bin/python", "compose/certs/ca.key", "compose/certs/points.key", "compose/secrets/pgpass",
                 "compose/secrets/gateway.env", "compose/secrets/AuthKey.p8", "compose/.env"]:
        assert dockerignored(path, patterns), f"{path} reaches the image's build context"
    dockerfile = (COMPOSE_DIR / "Dockerfile").read_text()
    sources = [word for line in re.findall(r"^COPY (?!--from)(.*)$", dockerfile, re.M) for word in line.split()[:-1]]
    assert {"Package.swift", "Sources", "config"} <= set(sources), sources
    for source in sources:
        tracked = subprocess.run(["git", "ls-files", "--", source], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        assert tracked, f"COPY {source}: nothing tracked there"
        left_out = [path for path in tracked if dockerignored(path, patterns)]
        assert not left_out, f"COPY {source} would miss {left_out[:5]}"

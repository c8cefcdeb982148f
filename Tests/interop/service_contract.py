"""What the three binaries document about themselves, read from their --help
and from the gateway's route table: the settings (variables, defaults, which
are secrets) and the HTTP paths a probe may hit. The compose and Kubernetes
tests check the deployment files against it."""
import functools
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The binaries by the short name deployments give them.
BINARIES = {"points": "PointsService", "payments": "PaymentsService", "gateway": "Gateway"}

@functools.lru_cache(maxsize=None)
def help_text(binary: str) -> str:
    path = ROOT / ".build" / "debug" / binary
    assert path.exists(), f"{path} is missing: run swift build first"
    return subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=30, check=True).stdout


@functools.lru_cache(maxsize=None)
def settings(binary: str) -> dict:
    """Variable -> {"default": str | None, "secret": bool}, from --help."""
    result = {}
    lines = help_text(binary).splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^  (?:--[a-z0-9-]+ VALUE / )?([A-Z][A-Z0-9_]+)$", line)
        if not match:
            continue
        description = lines[index + 1] if index + 1 < len(lines) else ""
        default = re.search(r"\[default: ([^\]]*)\]$", description)
        result[match.group(1)] = {"default": default.group(1) if default else None, "secret": description.endswith("(secret)")}
    assert result, f"{binary} --help lists no settings"
    return result


def documented(binary: str) -> set:
    return set(settings(binary))


def allowed(binary: str) -> set:
    """The variables a deployment may set for `binary`."""
    return documented(binary)


def secret_settings(binary: str) -> set:
    return {name for name, spec in settings(binary).items() if spec["secret"]}


def default_port(binary: str, variable: str) -> int:
    spec = settings(binary).get(variable)
    assert spec and spec["default"], f"{binary} documents no default for {variable}"
    return int(spec["default"].rsplit(":", 1)[1])


def port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


@functools.lru_cache(maxsize=None)
def gateway_public_paths() -> set:
    """The unauthenticated GET paths of the gateway's route table (probes)."""
    source = (ROOT / "Sources" / "Gateway" / "Routing" / "RouteSpec.swift").read_text()
    return set(re.findall(r'RouteSpec\(method: "GET", pattern: "(/[a-z]+)", requiresAuthentication: false\)', source))


def admin_paths() -> set:
    """The paths the admin listener (Sources/AdminServer, with /metrics from Metrics' endpoint) answers."""
    sources = "\n".join(p.read_text() for folder in ("AdminServer", "Metrics") for p in (ROOT / "Sources" / folder).rglob("*.swift"))
    paths = {path for path in ("/metrics", "/livez", "/readyz") if f'"{path}"' in sources}
    assert paths, "Sources/AdminServer names none of /metrics, /livez, /readyz"
    return paths

"""promtool on what the metrics module renders and on the alert rules.

- The exposition samples in Tests/MetricsTests/Fixtures/ (rendered by the
  Metrics module, kept byte-equal to its output by ExpositionSampleTests)
  pass `promtool check metrics`, lint included.
- deploy/prometheus/alerts.yml passes `promtool check rules`, its unit tests
  (alerts_test.yml) pass `promtool test rules`, and every alert has a case
  where it fires and one where it must not, proven by mutation: with every
  expression replaced by one that never fires, each alert's firing case
  fails; with one that always fires, each alert's quiet case fails.
- The alerts name only metrics the services export; prometheus.yml is valid
  and scrapes the local run; docs/OPERATIONS.md covers every alert and metric.

promtool comes from Debian's prometheus package (scripts/install-deps.sh);
without it these tests fail, they do not skip.
"""
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
FIXTURES = ROOT / "Tests" / "MetricsTests" / "Fixtures"
SERVICE_SAMPLES = ["gateway.prom", "payments.prom", "points.prom"]
OPERATIONS = ROOT / "docs" / "OPERATIONS.md"


def promtool(*args, stdin=None, cwd=None):
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not installed: run scripts/install-deps.sh (it installs Debian's prometheus package, "
                    "which provides promtool)")
    return subprocess.run([path, *args], input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd)


def alerts():
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    return [rule for group in rules["groups"] for rule in group["rules"] if "alert" in rule]


def duration_seconds(text):
    """A Prometheus duration such as 90s, 2m or 1h30m, in seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text or "0s")
    assert "".join(n + u for n, u in parts) == (text or "0s"), f"unreadable duration {text!r}"
    return sum(int(n) * units[u] for n, u in parts)


def exported_families():
    """Family names with a TYPE line in the service samples, and the sample names they render."""
    families, samples = {}, set()
    for name in SERVICE_SAMPLES:
        for line in (FIXTURES / name).read_text().splitlines():
            if line.startswith("# TYPE "):
                _, _, family, kind = line.split(" ")
                families[family] = kind
            elif line and not line.startswith("#"):
                samples.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return families, samples


# --- the exposition ----------------------------------------------------------

def test_every_exposition_sample_passes_promtool_check_metrics():
    files = sorted(path.name for path in FIXTURES.glob("*.prom"))
    assert files == sorted(SERVICE_SAMPLES + ["format.prom"])
    for name in files:
        result = promtool("check", "metrics", stdin=(FIXTURES / name).read_text())
        assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), \
            f"{name}: promtool check metrics exit {result.returncode}\n{result.stdout}{result.stderr}"


def test_promtool_check_metrics_refuses_what_it_should():
    # The check above would pass vacuously if promtool accepted anything.
    bad = {
        "no HELP": "# TYPE a_total counter\na_total 1\n",
        "counter without _total": "# HELP a A.\n# TYPE a counter\na 1\n",
        "unescaped quote": '# HELP a_total A.\n# TYPE a_total counter\na_total{k="say "hi""} 1\n',
        "bad float": "# HELP a A.\n# TYPE a gauge\na 1,5\n",
    }
    for why, text in bad.items():
        assert promtool("check", "metrics", stdin=text).returncode != 0, why


def test_the_samples_show_every_family_the_alerts_need():
    families, samples = exported_families()
    for family, kind in families.items():
        if kind == "histogram":
            assert {family + "_bucket", family + "_sum", family + "_count"} <= samples, family
        elif family != "metrics_label_overflow_total":  # has a series only after an overflow (format.prom)
            assert family in samples, family


# --- the alert rules ---------------------------------------------------------

def test_alert_rules_pass_promtool_check_rules():
    result = promtool("check", "rules", str(PROMETHEUS / "alerts.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in result.stdout


def test_alert_unit_tests_pass():
    result = promtool("test", "rules", "alerts_test.yml", cwd=PROMETHEUS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_firing_case_and_a_quiet_case_after_its_for_duration():
    tests = yaml.safe_load((PROMETHEUS / "alerts_test.yml").read_text())["tests"]
    cases = [case for test in tests for case in test["alert_rule_test"]]
    for rule in alerts():
        name, pending = rule["alert"], duration_seconds(rule.get("for"))
        mine = [case for case in cases if case["alertname"] == name]
        assert any(case["exp_alerts"] for case in mine), f"{name} has no case where it fires"
        assert any(not case["exp_alerts"] and duration_seconds(case["eval_time"]) >= pending for case in mine), \
            f"{name} has no case where it must stay quiet at or after its for: {rule.get('for')}"
    known = {rule["alert"] for rule in alerts()}
    assert {case["alertname"] for case in cases} <= known, "a test names an alert that does not exist"


def failed_cases(expression, tmp_path):
    """Runs the unit tests with every alert's expression replaced; returns
    {(alertname, "fires" or "quiet")} of the cases that failed."""
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            rule["expr"] = expression
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(rules))
    shutil.copy(PROMETHEUS / "alerts_test.yml", tmp_path / "alerts_test.yml")
    result = promtool("test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert result.returncode != 0, "the unit tests pass whatever the expressions say"
    failures = re.findall(r"alertname: (\w+), time: [^,]+, \n\s+exp:\[(\]?)", result.stdout + result.stderr)
    return {(name, "quiet" if empty else "fires") for name, empty in failures}


def test_each_firing_case_fails_when_no_alert_can_fire(tmp_path):
    failed = failed_cases("vector(0) > 1", tmp_path)
    for rule in alerts():
        assert (rule["alert"], "fires") in failed, f"{rule['alert']}'s firing case passes with an expression that never fires"


def test_each_quiet_case_fails_when_every_alert_fires(tmp_path):
    failed = failed_cases("vector(1)", tmp_path)
    for rule in alerts():
        assert (rule["alert"], "quiet") in failed, f"{rule['alert']}'s quiet case passes with an expression that always fires"


def test_alerts_use_only_metrics_the_services_export():
    families, samples = exported_families()
    for rule in alerts():
        names = set(re.findall(r"\b(?:iap|process|metrics)_[a-z0-9_]+\b", rule["expr"]))
        names |= {"up"} if re.search(r"\bup\s*[{=]", rule["expr"]) else set()
        assert names, f"{rule['alert']} names no metric"
        unknown = {name for name in names if name != "up" and name not in samples and name not in families}
        assert not unknown, f"{rule['alert']} uses {sorted(unknown)}, which no service sample shows"


def test_every_alert_has_a_severity_summary_and_runbook_anchor():
    for rule in alerts():
        assert rule["labels"]["severity"] in {"page", "ticket"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["runbook_url"] == f"docs/OPERATIONS.md#{rule['alert'].lower()}", rule["alert"]


# --- the scrape configuration and the operator's document ---------------------

def test_prometheus_config_is_valid_and_scrapes_the_local_run():
    result = promtool("check", "config", str(PROMETHEUS / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    targets = {job["job_name"]: [t for c in job["static_configs"] for t in c["targets"]] for job in config["scrape_configs"]}
    # The admin listeners' defaults, read from the code (ADMIN_LISTEN_ADDR).
    def admin_default(path):
        return re.search(r'AdminListener\.option\(default: "([^"]+)"\)', (ROOT / path).read_text()).group(1)
    assert targets == {"iap-gateway": [admin_default("Sources/Gateway/Options/GatewaySettings.swift")],
                       "iap-payments": [admin_default("Sources/PaymentsService/Configuration/PaymentsSettings.swift")],
                       "iap-points": [admin_default("Sources/PointsService/Configuration/PointsSettings.swift")]}
    for rule in alerts():  # the jobs the alerts select are the ones scraped
        for job in re.findall(r'job=~?"([^"]+)"', rule["expr"]):
            assert any(re.fullmatch(job, name) for name in targets), f"{rule['alert']}: job {job} is not scraped"


def test_kubernetes_config_is_valid_and_scrapes_every_workload_under_the_alerts_job_names():
    """deploy/prometheus/kubernetes.yml names its jobs as prometheus.yml and
    the alerts do, and each job's DNS SRV name is a headless Service in
    deploy/kubernetes that selects that workload's pods (ready or not) and
    targets its admin port."""
    result = promtool("check", "config", str(PROMETHEUS / "kubernetes.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load((PROMETHEUS / "kubernetes.yml").read_text())
    local = {job["job_name"] for job in yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())["scrape_configs"]}
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == local == {"iap-gateway", "iap-payments", "iap-points"}
    manifests = [item for path in sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
                 for item in yaml.safe_load_all(path.read_text()) if item]
    services = {item["metadata"]["name"]: item for item in manifests if item["kind"] == "Service"}
    deployments = {item["metadata"]["name"]: item for item in manifests if item["kind"] == "Deployment"}
    for job_name, job in jobs.items():
        workload = job_name.removeprefix("iap-")
        names = [name for sd in job["dns_sd_configs"] for name in sd["names"]]
        assert len(names) == 1, names
        match = re.fullmatch(r"_([a-z]+)\._tcp\.([a-z-]+)\.([a-z-]+)\.svc\.cluster\.local", names[0])
        assert match, names[0]
        port_name, service_name, namespace = match.groups()
        service = services[service_name]
        assert service["metadata"]["namespace"] == namespace
        assert service["spec"].get("clusterIP") == "None", "SRV records name each pod only for a headless Service"
        assert service["spec"].get("publishNotReadyAddresses") is True, "a pod that is not ready is still scraped"
        pod_labels = deployments[workload]["spec"]["template"]["metadata"]["labels"]
        assert all(pod_labels.get(k) == v for k, v in service["spec"]["selector"].items()), job_name
        container_ports = {p["name"]: p["containerPort"]
                           for p in deployments[workload]["spec"]["template"]["spec"]["containers"][0]["ports"]}
        annotations = deployments[workload]["spec"]["template"]["metadata"]["annotations"]
        [port] = [p for p in service["spec"]["ports"] if p["name"] == port_name]
        assert container_ports[port["targetPort"]] == port["port"] == int(annotations["prometheus.io/port"]), job_name


def test_operations_doc_covers_every_alert_and_every_metric():
    text = OPERATIONS.read_text()
    headings = re.findall(r"^### (\w+)$", text, flags=re.MULTILINE)
    assert [h for h in headings if h.startswith("IAP")] == [rule["alert"] for rule in alerts()], \
        "docs/OPERATIONS.md must have one '### AlertName' section per alert, in alerts.yml's order"
    families, _ = exported_families()
    missing = [family for family in families if f"`{family}`" not in text]
    assert not missing, f"docs/OPERATIONS.md does not describe {missing}"

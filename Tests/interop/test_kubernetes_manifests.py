"""deploy/kubernetes/ must be valid for the Kubernetes version we pin and
consistent with the code, checked offline: every manifest validates with
kubernetes-validate (its bundled schemas; the CloudNativePG Cluster against
schemas/cnpg-cluster-v1.schema.json), every variable a container sets is one
its binary documents in --help (service_contract.py), container ports are the ports the settings use,
commands exist, probes hit paths and ports the process serves, Services and
NetworkPolicies select what exists, and the network rules are the caller
policy of docs/ARCHITECTURE.md."""
import copy
import json
import pathlib
import re
import socket

import jsonschema
import kubernetes_validate
import pytest
import yaml

import service_contract as contract
from service_contract import BINARIES, ROOT

KUBERNETES_VERSION = "1.31.0"
MANIFESTS = ROOT / "deploy" / "kubernetes"
CNPG_SCHEMA = pathlib.Path(__file__).resolve().parent / "schemas" / "cnpg-cluster-v1.schema.json"
NAMESPACE = "iap-credits"
POSTGRES_LABELS = {"cnpg.io/cluster": "iap-postgres"}
PROMETHEUS = {"namespace": {"kubernetes.io/metadata.name": "monitoring"}, "pod": {"app.kubernetes.io/name": "prometheus"}}


def resources() -> list:
    found = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        found += [(path.name, item) for item in yaml.safe_load_all(path.read_text()) if item]
    assert found, "no manifests"
    return found


def of_kind(kind: str) -> dict:
    return {item["metadata"]["name"]: item for _, item in resources() if item["kind"] == kind}


def container(deployment: dict) -> dict:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def init_containers(deployment: dict) -> list:
    return deployment["spec"]["template"]["spec"].get("initContainers", [])


def env(deployment: dict) -> dict:
    return {entry["name"]: entry for entry in container(deployment)["env"]}


def binary(deployment: dict) -> str:
    return BINARIES[deployment["metadata"]["name"]]


def pod_labels() -> dict:
    """Workload -> the labels of its pods (the Deployments and the database)."""
    labels = {name: item["spec"]["template"]["metadata"]["labels"] for name, item in of_kind("Deployment").items()}
    labels["postgres"] = POSTGRES_LABELS
    return labels


def selects(selector: dict, labels: dict) -> bool:
    assert set(selector) <= {"matchLabels"}, f"only matchLabels selectors are used: {selector}"
    return all(labels.get(key) == value for key, value in selector.get("matchLabels", {}).items())


def validate(resource: dict):
    if resource["kind"] == "Cluster":
        jsonschema.Draft202012Validator(json.loads(CNPG_SCHEMA.read_text())).validate(resource)
    else:
        kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)


# MARK: schemas, offline


def test_every_manifest_validates_offline_against_the_pinned_kubernetes_version(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("validation tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    for path, resource in resources():
        try:
            validate(resource)
        except Exception as error:  # noqa: BLE001 - the message names the resource
            pytest.fail(f"{path}: {resource['kind']}/{resource['metadata']['name']}: {error}")


def test_the_validators_refuse_mistakes():
    deployment = copy.deepcopy(of_kind("Deployment")["gateway"])
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(deployment)
    misspelt = copy.deepcopy(of_kind("Deployment")["points"])
    container(misspelt)["readinesProbe"] = container(misspelt).pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(misspelt)
    cluster = copy.deepcopy(of_kind("Cluster")["iap-postgres"])
    cluster["spec"]["instances"] = "2"
    with pytest.raises(jsonschema.ValidationError):
        validate(cluster)
    cluster = copy.deepcopy(of_kind("Cluster")["iap-postgres"])
    cluster["spec"]["bootstrap"]["initdb"]["postInitSql"] = cluster["spec"]["bootstrap"]["initdb"].pop("postInitSQL")
    with pytest.raises(jsonschema.ValidationError):
        validate(cluster)


def test_the_pinned_tools_are_the_ones_in_requirements():
    requirements = (ROOT / "scripts" / "requirements.txt").read_text()
    assert re.search(r"^kubernetes-validate==[0-9.]+$", requirements, re.M)
    # The tool ships the schemas of the version we pin (it never downloads any).
    assert KUBERNETES_VERSION in kubernetes_validate.utils.all_versions()


# MARK: what is there


def test_the_system_is_complete_and_in_one_namespace():
    assert set(of_kind("Namespace")) == {NAMESPACE}
    assert set(of_kind("Deployment")) == set(BINARIES)
    # One Service per workload, and a headless one naming its admin
    # listener for Prometheus (monitoring.yaml).
    assert set(of_kind("Service")) == set(BINARIES) | {f"{name}-admin" for name in BINARIES}
    assert set(of_kind("PodDisruptionBudget")) == set(BINARIES)
    assert "gateway" in of_kind("HorizontalPodAutoscaler")
    assert "package-catalog" in of_kind("ConfigMap")
    assert set(of_kind("Cluster")) == {"iap-postgres"}
    for _, resource in resources():
        if resource["kind"] != "Namespace":
            assert resource["metadata"]["namespace"] == NAMESPACE, resource["metadata"]["name"]
        assert resource["kind"] != "Secret", "secrets are created by the operator, never kept here"


def test_postgres_is_a_primary_and_a_standby_with_both_databases():
    spec = of_kind("Cluster")["iap-postgres"]["spec"]
    assert spec["instances"] == 2
    initdb = spec["bootstrap"]["initdb"]
    assert (initdb["database"], initdb["owner"]) == ("points", "points")
    assert "CREATE DATABASE payments OWNER payments" in initdb["postInitSQL"]
    assert [role["name"] for role in spec["managed"]["roles"]] == ["payments"]
    assert spec["affinity"]["podAntiAffinityType"] == "required", "the standby is on another node"
    connections = sum(
        autoscaler["spec"]["maxReplicas"] * int(env(of_kind("Deployment")[name])["DATABASE_MAX_CONNECTIONS"]["value"])
        for name, autoscaler in of_kind("HorizontalPodAutoscaler").items() if name != "gateway")
    assert connections < int(spec["postgresql"]["parameters"]["max_connections"]), "every replica's pool fits the database"
    text = (MANIFESTS / "postgres-cluster.yaml").read_text()
    assert "operator must be installed" in text


def test_the_catalog_config_map_is_the_repository_catalog():
    data = of_kind("ConfigMap")["package-catalog"]["data"]["packages.json"]
    assert json.loads(data) == json.loads((ROOT / "config" / "packages.json").read_text())
    points = of_kind("Deployment")["points"]
    mount = next(m for m in container(points)["volumeMounts"] if m["name"] == "catalog")
    volume = next(v for v in points["spec"]["template"]["spec"]["volumes"] if v["name"] == "catalog")
    assert volume["configMap"]["name"] == "package-catalog"
    assert env(points)["PACKAGES_FILE"]["value"] == f"{mount['mountPath']}/packages.json"


# MARK: the containers against the code


def test_every_container_runs_its_binary_with_documented_variables():
    for name, deployment in of_kind("Deployment").items():
        assert container(deployment)["command"] == [binary(deployment)], name
        unknown = set(env(deployment)) - contract.allowed(binary(deployment))
        assert not unknown, f"{name} sets {sorted(unknown)} which {binary(deployment)} --help does not document"


def test_container_ports_are_the_ports_the_settings_use():
    for name, deployment in of_kind("Deployment").items():
        variables = env(deployment)
        ports = {port["name"]: port["containerPort"] for port in container(deployment)["ports"]}
        listen, admin = (contract.port(variables[v]["value"]) for v in ["LISTEN_ADDR", "ADMIN_LISTEN_ADDR"])
        assert listen == contract.default_port(binary(deployment), "LISTEN_ADDR"), name
        assert admin == contract.default_port(binary(deployment), "ADMIN_LISTEN_ADDR"), name
        assert sorted(ports.values()) == sorted([listen, admin]), name
        assert ports["admin"] == admin
        assert all(variables[v]["value"].startswith("0.0.0.0:") for v in ["LISTEN_ADDR", "ADMIN_LISTEN_ADDR"]), name
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert int(annotations["prometheus.io/port"]) == admin and annotations["prometheus.io/path"] in contract.admin_paths()


def test_probes_hit_served_paths_readiness_is_dependencies_liveness_is_the_process():
    for name, deployment in of_kind("Deployment").items():
        spec = container(deployment)
        ports = {port["name"]: port["containerPort"] for port in spec["ports"]}
        for kind in ["startupProbe", "readinessProbe", "livenessProbe"]:
            probe = spec[kind]["httpGet"]
            port = ports[probe["port"]] if isinstance(probe["port"], str) else probe["port"]
            if port == ports["admin"]:
                assert probe["path"] in contract.admin_paths(), f"{name} {kind}"
            else:
                assert name == "gateway" and probe["path"] in contract.gateway_public_paths(), f"{name} {kind}"
        assert spec["readinessProbe"]["httpGet"]["path"] == "/readyz", f"{name}: ready means its dependencies are"
        assert spec["livenessProbe"]["httpGet"]["path"] in {"/livez", "/healthz"}, f"{name}: alive means the process, never the database"
        assert spec["startupProbe"]["failureThreshold"] * spec["startupProbe"]["periodSeconds"] >= 60


def test_migrations_run_in_an_init_container_before_the_service():
    """A service applies its migrations at start-up before its admin
    listener (the probes' port) opens, so a migration longer than the
    startup probe's 2 minutes got the pod killed and started again, the
    migration again with it, in a loop. The migrations run in an init
    container instead (`migrate`: apply them and exit), and the service
    container, probes and all, starts once they are applied."""
    deployments = of_kind("Deployment")
    for name in ["points", "payments"]:
        deployment = deployments[name]
        assert [c["name"] for c in init_containers(deployment)] == ["migrate"], name
        migrate, service = init_containers(deployment)[0], container(deployment)
        assert migrate["command"] == [binary(deployment), "migrate"], name
        assert re.search(r"^  migrate +Apply database migrations and exit\.$", contract.help_text(binary(deployment)), re.M)
        assert migrate["image"] == service["image"], f"{name}: the migrations of the release that starts"
        variables = {entry["name"]: entry for entry in migrate["env"]}
        unknown = set(variables) - contract.allowed(binary(deployment))
        assert not unknown, f"{name}'s migrate sets {sorted(unknown)}, which {binary(deployment)} --help does not document"
        assert variables["DATABASE_URL"] == env(deployment)["DATABASE_URL"], f"{name}: the service's own database"
        for variable in ["PACKAGES_FILE", "LOG_LEVEL"]:
            if variable in env(deployment):
                assert variables.get(variable) == env(deployment)[variable], f"{name}: migrate reads {variable} as the service does"
        assert not {"ports", "startupProbe", "readinessProbe", "livenessProbe"} & set(migrate), f"{name}: migrate serves nothing"
        assert migrate["securityContext"] == service["securityContext"], name
        assert {"cpu", "memory"} <= set(migrate["resources"]["requests"]) and "memory" in migrate["resources"]["limits"]
        volumes = {volume["name"] for volume in deployment["spec"]["template"]["spec"]["volumes"]}
        assert {mount["name"] for mount in migrate["volumeMounts"]} <= volumes, name
    assert not init_containers(deployments["gateway"]), "the gateway has no database"


def test_pods_run_as_non_root_with_resources_and_at_least_two_replicas():
    for name, deployment in of_kind("Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        assert deployment["spec"]["replicas"] >= 2, name
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001, name
        assert pod["automountServiceAccountToken"] is False
        security = container(deployment)["securityContext"]
        assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True
        assert security["capabilities"]["drop"] == ["ALL"]
        resources_ = container(deployment)["resources"]
        assert {"cpu", "memory"} <= set(resources_["requests"]) and "memory" in resources_["limits"], name
        assert selects(deployment["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"])


def test_secrets_are_referenced_never_written():
    operations = (ROOT / "docs" / "OPERATIONS.md").read_text()
    for name, deployment in of_kind("Deployment").items():
        variables = env(deployment)
        for secret in contract.secret_settings(binary(deployment)):
            assert "secretKeyRef" in variables[secret].get("valueFrom", {}), f"{name}: {secret} comes from a Secret"
        for variable, entry in variables.items():
            value = entry.get("value", "")
            assert not re.search(r"://[^/@]*:[^/@]*@", value), f"{name}: a password in {variable}"
            reference = entry.get("valueFrom", {}).get("secretKeyRef")
            if reference:
                assert f"`{reference['name']}`" in operations, f"docs/OPERATIONS.md tells how to create {reference['name']}"
        mounts = {m["name"]: m["mountPath"] for m in container(deployment)["volumeMounts"]}
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        for variable in ["TLS_CERT", "TLS_KEY", "TLS_CLIENT_CA", "POINTS_TLS_CA", "BACKEND_TLS_CA_FILE", "BACKEND_TLS_CERT",
                         "BACKEND_TLS_KEY", "APPLE_API_KEY_PATH"]:
            if variable not in variables:
                continue
            path = variables[variable]["value"]
            volume = next(volume for volume, mount in mounts.items() if path.startswith(mount + "/"))
            assert "secret" in volumes[volume], f"{name}: {variable} is a mounted Secret"
            assert f"`{volumes[volume]['secret']['secretName']}`" in operations
    for name in ["points", "payments"]:
        assert env(of_kind("Deployment")[name])["DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == f"{name}-database"
    assert "DATABASE_URL" not in env(of_kind("Deployment")["gateway"])


def test_internal_calls_are_mutual_tls_to_the_services_by_name():
    deployments = of_kind("Deployment")
    services = of_kind("Service")
    for name in ["points", "payments"]:
        assert env(deployments[name])["INTERNAL_AUTH"]["value"] == "mtls"
    assert env(deployments["gateway"])["INTERNAL_AUTH"]["value"] == "mtls"
    for caller, variable, callee in [("gateway", "POINTS_ADDR", "points"), ("gateway", "PAYMENTS_ADDR", "payments"),
                                     ("payments", "POINTS_ADDR", "points")]:
        host, port = env(deployments[caller])[variable]["value"].rsplit(":", 1)
        assert host == callee and callee in services
        service_port = next(p for p in services[callee]["spec"]["ports"] if p["port"] == int(port))
        assert service_port["targetPort"] == "grpc"
    assert env(deployments["points"])["PAYMENTS_IDENTITY"]["value"] == "payments"
    assert env(deployments["points"])["GATEWAY_IDENTITY"]["value"] == "gateway"
    assert env(deployments["payments"])["GATEWAY_IDENTITY"]["value"] == "gateway"


# MARK: Services, budgets, autoscalers


def test_every_service_selects_a_deployment_and_a_named_port():
    deployments = of_kind("Deployment")
    for name, service in of_kind("Service").items():
        selected = [d for d in deployments.values() if selects({"matchLabels": service["spec"]["selector"]}, d["spec"]["template"]["metadata"]["labels"])]
        assert len(selected) == 1, f"Service {name} selects {len(selected)} Deployments"
        names = {port["name"] for port in container(selected[0])["ports"]}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in names, f"Service {name} targets {port['targetPort']}"
    published = sorted(name for name, service in of_kind("Service").items() if service["spec"].get("type", "ClusterIP") != "ClusterIP")
    assert published == ["gateway"], "only the gateway is reachable from outside"
    # The notification rate limit is per client address: the published
    # Service must keep it (Cluster rewrites it to the node's address).
    for name in published:
        assert of_kind("Service")[name]["spec"].get("externalTrafficPolicy") == "Local", name


def test_the_public_service_serves_only_tls_from_a_secret():
    """Bearer tokens and Apple's notifications (which Apple sends only to
    HTTPS URLs) never cross the network in clear: the published Service has
    one port, 443, to the gateway's listener, which serves TLS with a
    certificate and key mounted from a Secret (and then refuses plaintext);
    the probes of that port speak HTTPS."""
    gateway = of_kind("Deployment")["gateway"]
    variables = env(gateway)
    ports = {port["name"]: port["containerPort"] for port in container(gateway)["ports"]}
    service = of_kind("Service")["gateway"]["spec"]
    assert [(port["port"], port["protocol"]) for port in service["ports"]] == [(443, "TCP")], service["ports"]
    target = service["ports"][0]["targetPort"]
    assert ports[target] == contract.port(variables["LISTEN_ADDR"]["value"]), "443 reaches the public listener"
    assert {"TLS_CERT", "TLS_KEY"} <= contract.allowed("Gateway")
    assert "--tls-cert" in contract.help_text("Gateway") and "plaintext clients are refused" in contract.help_text("Gateway")
    mounts = {m["name"]: m["mountPath"] for m in container(gateway)["volumeMounts"]}
    volumes = {v["name"]: v for v in gateway["spec"]["template"]["spec"]["volumes"]}
    secrets = set()
    for variable in ["TLS_CERT", "TLS_KEY"]:
        path = variables[variable]["value"]
        volume = next(name for name, mount in mounts.items() if path.startswith(mount + "/"))
        secrets.add(volumes[volume]["secret"]["secretName"])
    assert secrets == {"gateway-public-tls"}, "the public certificate and its key come from one Secret"
    assert variables["BACKEND_TLS_CERT"]["value"] != variables["TLS_CERT"]["value"], "the public certificate is not the internal identity"
    for kind in ["startupProbe", "readinessProbe", "livenessProbe"]:
        probe = container(gateway)[kind]["httpGet"]
        if probe["port"] in (target, ports[target]):
            assert probe.get("scheme") == "HTTPS", f"the gateway's {kind} speaks plaintext to a TLS-only port"
    assert service["externalTrafficPolicy"] == "Local", "TLS passes through the balancer with the client's address"


def test_budgets_and_autoscalers_target_deployments():
    deployments = of_kind("Deployment")
    for name, budget in of_kind("PodDisruptionBudget").items():
        assert any(selects(budget["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"]) for d in deployments.values()), name
        assert budget["spec"]["minAvailable"] >= 1
    for name, autoscaler in of_kind("HorizontalPodAutoscaler").items():
        target = autoscaler["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment" and target["name"] in deployments, name
        assert autoscaler["spec"]["minReplicas"] >= 2 and autoscaler["spec"]["maxReplicas"] > autoscaler["spec"]["minReplicas"]


# MARK: NetworkPolicies


def policies() -> dict:
    return of_kind("NetworkPolicy")


def workloads_selected(selector: dict) -> set:
    return {name for name, labels in pod_labels().items() if selects(selector, labels)}


def peer(entry: dict) -> str:
    """One `from`/`to` entry as a workload name, "prometheus", "dns", or a CIDR."""
    if "ipBlock" in entry:
        return entry["ipBlock"]["cidr"]
    namespace = entry.get("namespaceSelector", {}).get("matchLabels")
    pod = entry.get("podSelector", {}).get("matchLabels")
    if namespace is None:
        matched = workloads_selected(entry["podSelector"])
        assert len(matched) == 1, f"{entry} selects {matched}: every selector names one workload"
        return matched.pop()
    if namespace == PROMETHEUS["namespace"] and pod == PROMETHEUS["pod"]:
        return "prometheus"
    if namespace == {"kubernetes.io/metadata.name": "kube-system"} and pod == {"k8s-app": "kube-dns"}:
        return "dns"
    if namespace == {"kubernetes.io/metadata.name": "cnpg-system"} and pod is None:
        return "cnpg-operator"
    raise AssertionError(f"unknown peer {entry}")


def rules(workload: str, direction: str) -> set:
    """(peer, port) pairs allowed for `workload` in `direction` ("ingress"/"egress"); peer "*" = anywhere."""
    allowed = set()
    for policy in policies().values():
        if workload not in workloads_selected(policy["spec"]["podSelector"]):
            continue
        key = "from" if direction == "ingress" else "to"
        for rule in policy["spec"].get(direction, []):
            peers = [peer(entry) for entry in rule[key]] if key in rule else ["*"]
            ports = [port["port"] for port in rule.get("ports", [])] or ["*"]
            allowed |= {(p, port) for p in peers for port in ports}
    return allowed


def test_everything_is_denied_unless_allowed_and_every_pod_resolves_names():
    deny = policies()["default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    for workload in pod_labels():
        assert {("dns", 53)} <= rules(workload, "egress"), f"{workload} cannot resolve names"
        for policy in policies().values():
            if workload in workloads_selected(policy["spec"]["podSelector"]) and policy["spec"]["podSelector"]:
                assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}


def test_every_policy_selector_matches_a_workload():
    for name, policy in policies().items():
        if policy["spec"]["podSelector"]:
            assert workloads_selected(policy["spec"]["podSelector"]), f"policy {name} selects nothing"


def test_ingress_is_the_caller_policy():
    ports = {name: {port["name"]: port["containerPort"] for port in container(d)["ports"]} for name, d in of_kind("Deployment").items()}
    assert rules("gateway", "ingress") == {("*", ports["gateway"]["https"]), ("prometheus", ports["gateway"]["admin"])}
    assert rules("payments", "ingress") == {("gateway", ports["payments"]["grpc"]), ("prometheus", ports["payments"]["admin"])}
    assert rules("points", "ingress") == {
        ("gateway", ports["points"]["grpc"]), ("payments", ports["points"]["grpc"]), ("prometheus", ports["points"]["admin"])}
    database = {entry for entry in rules("postgres", "ingress") if entry[1] == 5432}
    assert database == {("points", 5432), ("payments", 5432), ("postgres", 5432), ("cnpg-operator", 5432)}
    for workload in pod_labels():
        open_ = {entry for entry in rules(workload, "ingress") if entry[0] == "*"}
        assert not open_ or workload == "gateway", f"{workload} is reachable from anywhere"


def test_egress_reaches_only_what_each_workload_needs():
    ports = {name: {port["name"]: port["containerPort"] for port in container(d)["ports"]} for name, d in of_kind("Deployment").items()}
    assert rules("gateway", "egress") == {("dns", 53), ("points", ports["points"]["grpc"]), ("payments", ports["payments"]["grpc"])}
    assert rules("points", "egress") == {("dns", 53), ("postgres", 5432)}
    payments = rules("payments", "egress")
    assert {("points", ports["points"]["grpc"]), ("postgres", 5432)} <= payments
    assert not {entry for entry in payments if entry[0] in {"gateway", "*"}}
    outside = {entry for entry in payments if "/" in str(entry[0])}
    assert outside == {("0.0.0.0/0", 443), ("0.0.0.0/0", 80)}, "Apple's API and OCSP only"
    for workload in ["gateway", "points", "payments"]:
        assert ("postgres", 5432) not in rules(workload, "egress") or workload in {"points", "payments"}

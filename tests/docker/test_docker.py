"""The Docker deployment (docker/): the compose file validates with Debian's docker-compose (1.29), and what it
runs is real: every `arena` command and flag exists, the TOML file loads as ArenaSettings, every Dockerfile it
builds exists and copies only paths the repository has. The images cannot be built here (no Docker engine)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
COMPOSE = DOCKER / "docker-compose.yml"
ARENA = str(Path(sys.executable).with_name("arena"))
DOCKER_COMPOSE = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(
    DOCKER_COMPOSE is None, reason="Debian's docker-compose is not installed (scripts/test installs it)"
)


def compose_config(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DOCKER_COMPOSE, "-f", str(path), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | (env or {}),
    )


@pytest.fixture(scope="module")
def config() -> dict:
    """The compose file as docker-compose resolves it (variables substituted, anchors expanded)."""
    if DOCKER_COMPOSE is None:
        pytest.skip("Debian's docker-compose is not installed (scripts/test installs it)")
    done = compose_config(COMPOSE, {"WALLET_DIR": str(REPO)})
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


@needs_compose
def test_the_compose_file_validates():
    done = subprocess.run([DOCKER_COMPOSE, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@needs_compose
def test_validation_is_real_a_broken_file_is_refused(tmp_path):
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE.read_text().replace("    healthcheck:\n", "    healthchek:\n", 1))
    done = compose_config(broken)
    assert done.returncode != 0 and "healthchek" in done.stderr


def mounts(service: dict) -> dict[str, tuple[str, str]]:
    """target -> (source, mode) of a service's volumes, in docker-compose 1.29's normalised short syntax."""
    found = {}
    for volume in service.get("volumes", []):
        source, target, mode = volume.split(":") if isinstance(volume, str) else (
            volume["source"], volume["target"], "ro" if volume.get("read_only") else "rw"
        )  # fmt: skip
        found[target] = (source, mode)
    return found


def test_services_have_healthchecks_volumes_and_a_read_only_wallet(config):
    services = config["services"]
    assert {"postgres", "setup", "validator", "worker", "vllm", "vllm-judge"} <= set(services)
    for name, service in services.items():
        if name != "setup":  # a one-shot: the validator waits for it to complete successfully
            assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    assert services["validator"]["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    assert mounts(services["setup"])["/data"][1] == "ro" and mounts(services["setup"])["/var/lib/arena"][1] == "rw"
    assert mounts(services["postgres"])["/var/lib/postgresql/data"] == ("pgdata", "rw")
    assert "pgdata" in config["volumes"] and "catalog" in config["volumes"]
    assert mounts(services["validator"])["/var/lib/arena"] == ("catalog", "rw")
    assert mounts(services["worker"])["/var/lib/arena"] == ("catalog", "ro")  # workers only read the catalog
    for name in ("validator", "worker"):
        assert mounts(services[name])["/etc/arena/arena.toml"] == (str(DOCKER / "arena.toml"), "ro")
    assert config["secrets"]["wallet"]["file"] == str(REPO)
    assert services["validator"]["secrets"] == [{"source": "wallet", "target": "wallet"}]  # /run/secrets: read-only
    command = services["validator"]["command"]
    assert command[command.index("--wallet.path") + 1] == "/run/secrets/wallet"
    assert "seccomp:unconfined" in services["worker"]["security_opt"]  # bubblewrap needs user namespaces
    assert services["validator"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for gpu in ("vllm", "vllm-judge"):
        devices = services[gpu]["deploy"]["resources"]["reservations"]["devices"]
        assert devices[0]["capabilities"] == ["gpu"]
    database = services["validator"]["environment"]["ARENA_DATABASE_URL"]
    assert database.startswith("postgresql://arena:") and database.endswith("@postgres:5432/arena")
    assert services["worker"]["environment"]["ARENA_DATABASE_URL"] == database


def arena_help(*words: str) -> str:
    done = subprocess.run(
        [ARENA, *words, "--help"], capture_output=True, text=True, env=os.environ | {"COLUMNS": "250"}, timeout=60
    )
    assert done.returncode == 0, f"arena {' '.join(words)} is not a command: {done.stderr}"
    return done.stdout


def check_arena_command(argv: list[str]) -> None:
    """The subcommand path exists and every --flag it is given is one of its options."""
    words = [a for a in argv if not a.startswith("-")]
    depth = 2 if words[0] in ("validator",) else 1
    text = arena_help(*words[:depth])
    for flag in (a for a in argv if a.startswith("--")):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), f"arena {' '.join(words[:depth])}: no {flag}"


def test_every_arena_command_the_deployment_runs_exists(config):
    for name in ("validator", "worker"):
        check_arena_command([str(part) for part in config["services"][name]["command"]])
    for dockerfile in ("Dockerfile.validator", "Dockerfile.worker"):
        text = (DOCKER / dockerfile).read_text()
        assert 'ENTRYPOINT ["arena"]' in text
        check_arena_command(json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1)))


def test_the_toml_file_loads_as_the_settings_the_containers_use():
    done = subprocess.run(
        [ARENA, "config", "show", "--json", "--config", str(DOCKER / "arena.toml")],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"VLLM_API_KEY": "the-key"},  # the compose environment passes it
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)
    assert settings["race"]["workers"] == 0  # episodes go to the worker containers
    assert settings["api"]["wallet_path"] == "/run/secrets/wallet"
    assert settings["catalog"]["path"].startswith("/var/lib/arena/")
    assert [u["base_url"] for u in settings["race"]["upstreams"]] == ["http://vllm:8000/v1"]
    # vLLM starts with --api-key ${VLLM_API_KEY}: the upstream sends the same key
    assert [u["api_key"] for u in settings["race"]["upstreams"]] == ["the-key"]
    assert settings["judge"]["base_url"] == "http://vllm-judge:8000/v1"


def test_dockerfiles_exist_copy_real_paths_and_sandbox_the_worker(config):
    for name, service in config["services"].items():
        if "build" in service:
            dockerfile = Path(service["build"]["context"]) / service["build"]["dockerfile"]
            assert dockerfile.is_file(), f"{name}: {dockerfile} is missing"
    for dockerfile in DOCKER.glob("Dockerfile.*"):
        for line in dockerfile.read_text().splitlines():
            if line.startswith("COPY "):
                for source in line.split()[1:-1]:
                    assert (REPO / source).exists(), f"{dockerfile.name}: COPY {source} does not exist"
    worker = (DOCKER / "Dockerfile.worker").read_text()
    assert re.search(r"apt-get install [^\n]*bubblewrap", worker)
    assert "bubblewrap" not in (DOCKER / "Dockerfile.validator").read_text().split("RUN", 1)[-1].split("\n")[0]
    # The setup service (the validator's image) builds the suite and a worker may cluster: the guard reads WordNet.
    for name in ("Dockerfile.validator", "Dockerfile.worker"):
        assert re.search(r"apt-get install [^\n]*wordnet-base", (DOCKER / name).read_text()), name

"""docker/docker-compose.yml run here as far as it can be without a container engine.

Each service's own command, with the compose file's arguments, its configuration
(docker/arena.toml through ARENA_CONFIG, the compose environment) and its
read-only mounts (bubblewrap --ro-bind): the one-shot `setup` service builds the
catalog and the suite from a documents file on a read-only data mount, a
`worker` serves episodes from the catalog volume mounted read-only, and the
validator runs one cycle through them. What cannot exist here is replaced at
the edges only: PostgreSQL is a throwaway database on the local server instead
of the `postgres` service, the chain is the local chain instead of finney, and
the `vllm` upstream is the offline policy (same api_key_env), listening on loopback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from arena.runner.sandbox import bubblewrap_path
from tests.arena.store.test_store import temporary_database
from tests.docker.test_docker import COMPOSE, DOCKER, DOCKER_COMPOSE, compose_config

pytestmark = pytest.mark.skipif(
    bubblewrap_path() is None or DOCKER_COMPOSE is None, reason="needs bubblewrap and Debian's docker-compose"
)
ARENA = str(Path(sys.executable).with_name("arena"))
KEY = "compose-test-key"


def ro(*paths: Path) -> list[str]:
    """bwrap: the whole host, with ``paths`` read-only, as a compose ``:ro`` volume is."""
    argv = [bubblewrap_path(), "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in paths:
        argv += ["--ro-bind", str(path), str(path)]
    return argv


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_deployment_runs_setup_worker_and_validator(tmp_path):
    done = compose_config(COMPOSE, {"WALLET_DIR": str(tmp_path), "SUITE_SEED": "s", "VLLM_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    volume, data = tmp_path / "volume", tmp_path / "data"
    volume.mkdir()
    data.mkdir()
    from arena.taskpack.synthetic import generate_products, write_documents

    write_documents(generate_products(2500, seed=3), data / "documents.jsonl.gz")
    port = free_port()
    upstream = [{"name": "vllm", "base_url": f"http://127.0.0.1:{port}/v1", "api_key_env": "VLLM_API_KEY",
                 "models": ["heuristic-policy"], "context_length": 32768}]  # fmt: skip
    with temporary_database("postgresql", tmp_path) as url:
        setup = services["setup"]
        env = {**os.environ, **{k: str(v) for k, v in setup["environment"].items()}}
        env |= {
            "ARENA_CONFIG": str(DOCKER / "arena.toml"),  # mounted at /etc/arena/arena.toml
            "ARENA_DATABASE_URL": url,  # instead of @postgres:5432
            "ARENA_VOLUME": str(volume),  # the `catalog` volume at /var/lib/arena
            "ARENA_DATA": str(data),  # ${ARENA_DATA_DIR}:/data:ro
            "ARENA_CATALOG__PATH": str(volume / "catalog"),
            "ARENA_RACE__SUITE_DIR": str(volume / "suite"),
            "ARENA_RACE__UPSTREAMS": json.dumps(upstream),
            "ARENA_RACE__MODEL": "heuristic-policy",
            "ARENA_RACE__JUDGE_KIND": "rules",
            "ARENA_JUDGE__KIND": "rules",
            "ARENA_RACE__DRAW_SIZE": "2",
            "ARENA_RACE__QUALIFYING_SIZE": "2",
            "ARENA_RACE__QUALIFICATION_FRACTION": "0",
            "ARENA_RACE__ATTEMPTS": "1",
            "ARENA_LOG_LEVEL": "WARNING",
            "SUITE_PROBLEMS": "40",
            "VLLM_API_KEY": KEY,
            "PATH": f"{Path(ARENA).parent}{os.pathsep}{os.environ['PATH']}",  # the image has `arena` on its PATH
        }
        assert setup["entrypoint"] == ["sh", "/etc/arena/setup.sh"]
        for _attempt in range(2):  # the second run keeps what the first built
            built = subprocess.run([*ro(data), "sh", str(DOCKER / "setup.sh")], env=env, capture_output=True,
                                   text=True, timeout=600)  # fmt: skip
            assert built.returncode == 0, built.stderr[-3000:]
        assert (volume / "catalog" / "catalog.json").is_file() and (
            volume / "suite" / "sealed" / "manifest.json"
        ).is_file()
        assert (volume / "catalog" / "knowledge").is_dir()

        policy = subprocess.Popen([ARENA, "policy", "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        worker_args = [str(a) for a in services["worker"]["command"]]
        assert worker_args[0] == "worker"
        worker = subprocess.Popen([*ro(volume), ARENA, *worker_args[:-1], "1"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=(tmp_path / "worker.log").open("w"),
                                  start_new_session=True)  # fmt: skip
        try:
            from arena.store import open_store
            from tests.support.race_support import agent_code, seed_store

            store = seed_store(
                url, [("miner-dialogue", agent_code("dialogue")), ("miner-first-hit", agent_code("first_hit"))]
            )
            store.dispose()
            args = [str(a) for a in services["validator"]["command"]]
            for flag in ("--network", "--wallet.name", "--wallet.hotkey", "--wallet.path"):  # the chain: local here
                i = args.index(flag)
                del args[i : i + 2]
            args = [a for a in args if a not in ("--api", "--api-host", "0.0.0.0", "--api-port", "8000")]
            cycle = subprocess.run([ARENA, *args, "--local", "--once", "--json"], env=env, capture_output=True,
                                   text=True, timeout=600)  # fmt: skip
            assert cycle.returncode == 0, cycle.stderr[-3000:] + (tmp_path / "worker.log").read_text()[-2000:]
            report = json.loads(cycle.stdout.strip().splitlines()[-1])
            store = open_store(url)
            with store.transaction() as session:
                from arena.store import episodes as episode_rows

                episodes = episode_rows.list_episodes(session, cycle=report["cycle"])
            store.dispose()
            # Every episode ran, and on the one worker (the validator runs none: race.workers = 0 in arena.toml).
            assert episodes and all(e.status.value == "done" for e in episodes)
            assert len({e.worker_id for e in episodes}) == 1 and None not in {e.worker_id for e in episodes}
        finally:
            for process in (worker, policy):
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)

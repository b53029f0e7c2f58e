"""The steps of ``arena demo`` (``arena.commands.demo``): a whole local race on the embedded defaults, start to end.

1. a small synthetic catalog and its index (with a knowledge corpus);
2. generated problems of all four intents, clustered into a versioned suite;
3. the store (``./arena.db`` by default) migrated, the suite imported, a
   LocalChain with the subnet owner at uid 0 (the burn uid: what no miner
   earned goes there, never to the validator), a validator and four miners
   whose hotkeys live in a wallet folder under the demo directory (never
   ``~/.bittensor``);
4. the reference agents submitted, signed, over real HTTP to the validator's
   API, plus a renamed copy of one of them, which the API must reject;
5. one full cycle in real sandboxes with the built-in offline policy:
   qualifying, race, judging, scoring, promotion, weights on the LocalChain;
6. the leaderboard, the champion (or "undecided": the demo's small draw
   cannot always tell agents apart, and then it says so), the promotion
   decision with its interval, the weight vector, and the corpus exported
   from the store with its funnel.

A cycle that halts (the validator could not measure: no bubblewrap, a dead
model server or judge) makes ``arena demo`` fail with the fix to apply.

Every step reuses what an earlier run left: re-running continues the race
from the database (a new cycle) instead of failing.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import uvicorn
from pydantic import BaseModel, model_validator
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from arena.agents import AGENTS_DIR
from arena.commands.common import show
from arena.settings import ArenaSettings

MINERS = ("tool_calling", "search_loop", "shortcut")
COPYCAT = "copycat"
OWNER = "owner"  # registered first: uid 0, the burn uid


class DemoPlan(BaseModel):
    products: int = 3000
    seed: int = 7
    problems: int = 96
    public: int | None = None  # default: a sixth of the problems (at least 6)
    draw_size: int | None = None  # default: half of the problems (the bank may hold fewer: then all of it)
    attempts: int = 1

    @model_validator(mode="after")
    def _sizes(self) -> DemoPlan:
        # Paired decisions need problems: the larger the draw, the smaller the gap the demo can resolve
        # (docs/race.md). Episodes of the reference agents take about a second each, so half the
        # problems is affordable; what the draw cannot resolve the demo reports as undecided.
        if self.public is None:
            self.public = max(6, self.problems // 6)
        if self.draw_size is None:
            self.draw_size = max(6, self.problems // 2)
        return self


class DemoResult(BaseModel):
    cycle: int
    champion: str | None
    decision: dict = {}  # the promotion stage's detail (verdict, reason, interval)
    halt: dict | None = None  # the cycle halted: why, and the fix
    standings: list[dict]
    weights: dict[int, float]
    rejected_copy: str | None
    qualifying: dict = {}  # the qualifying stage's detail: who did not qualify, and the rule
    neurons: dict[int, tuple[str, str]] = {}  # uid -> (the demo's wallet name, hotkey)
    funnel: dict
    paths: dict[str, str]


def run_demo(settings: ArenaSettings, out_dir: Path, plan: DemoPlan, console: Console) -> DemoResult:
    out_dir.mkdir(parents=True, exist_ok=True)
    catalog_dir = ensure_catalog(out_dir, plan, console)
    suite_dir = ensure_suite(out_dir, catalog_dir, plan, console)

    from arena.chain.local import LocalChain
    from arena.store import open_store
    from arena.store import suites as suite_rows
    from arena.store.migrate import upgrade_database

    database_url = settings.database_url
    upgrade_database(database_url)
    store = open_store(database_url)
    with store.transaction() as session:
        suite_rows.import_suite(session, suite_dir)
    chain = LocalChain(store.sessions, netuid=settings.race.netuid)
    wallets = ensure_wallets(out_dir / "wallets", chain)
    validator_hotkey = wallets["validator"]
    rejected = submit_agents(settings, store, chain, wallets, out_dir, console)

    report = run_cycle(settings, store, chain, validator_hotkey, suite_dir, catalog_dir, plan, console)
    funnel = export_corpus(database_url, out_dir / "corpus", console) if report.halt is None else {}
    names = submission_names(store)
    standings = [
        {"submission": names.get(s.submission_id, str(s.submission_id)), **s.model_dump(exclude={"id"})}
        for s in report.standings
    ]
    weights = dict(zip(report.weights.uids, report.weights.weights, strict=True)) if report.weights else {}
    names_of = {address: name for name, address in wallets.items()}
    neurons = {n.uid: (names_of.get(n.hotkey, "?"), n.hotkey) for n in chain.neurons()}
    store.dispose()
    return DemoResult(
        cycle=report.cycle,
        champion=names.get(report.champion_id) if report.champion_id is not None else None,
        decision=report.stages.get("promotion", {}),
        halt=report.halt.model_dump() if report.halt is not None else None,
        standings=standings,
        weights=weights,
        rejected_copy=rejected,
        qualifying=report.stages.get("qualifying", {}),
        neurons=neurons,
        funnel=funnel,
        paths={
            "database": database_url,
            "catalog": str(catalog_dir),
            "suite": str(suite_dir),
            "wallets": str(out_dir / "wallets"),
            "corpus": str(out_dir / "corpus"),
        },
    )


def ensure_catalog(out_dir: Path, plan: DemoPlan, console: Console) -> Path:
    from arena.taskpack.build import build_catalog

    catalog_dir = out_dir / "catalog"
    if (catalog_dir / "catalog.json").is_file():
        console.print(f"[bold]catalog[/] reusing {catalog_dir}")
        return catalog_dir
    console.print(f"[bold]catalog[/] building {plan.products} synthetic products (seed {plan.seed})")
    build_catalog(catalog_dir, synthetic=plan.products, seed=plan.seed, console=console)
    return catalog_dir


def ensure_suite(out_dir: Path, catalog_dir: Path, plan: DemoPlan, console: Console) -> Path:
    from arena.generator.generate import GeneratorConfig, generate, write_knowledge, write_problems
    from arena.problems.partitions import PartitionPlan
    from arena.problems.suites import build_suite
    from arena.shop.index import CatalogIndex

    suite_dir = out_dir / "suite"
    if (suite_dir / "public" / "manifest.json").is_file():
        console.print(f"[bold]suite[/] reusing {suite_dir}")
        return suite_dir
    console.print(f"[bold]problems[/] generating {plan.problems} problems of all four intents")
    result = generate(CatalogIndex(catalog_dir), GeneratorConfig(n=plan.problems, seed=plan.seed))
    problems_file = out_dir / "problems.jsonl"
    write_problems(result.problems, problems_file)
    if result.documents and not (catalog_dir / "knowledge" / "knowledge.json").is_file():
        write_knowledge(result.documents, catalog_dir / "knowledge")
    console.print(f"[bold]suite[/] clustering and partitioning into {suite_dir}")
    build_suite(
        result.problems, suite_dir, seed=f"demo-{plan.seed}", plan=PartitionPlan(public=plan.public),
        sources=[problems_file],
    )  # fmt: skip
    return suite_dir


def ensure_wallets(wallet_dir: Path, chain) -> dict[str, str]:
    """Hotkeys for the validator and the miners, registered on the local chain."""
    from arena.wallets import ensure_wallet, hotkey_address

    addresses = {}
    for name in (OWNER, "validator", *MINERS, COPYCAT):
        address = hotkey_address(ensure_wallet(wallet_dir, name))
        chain.register(address, validator_permit=name == "validator")
        addresses[name] = address
    return addresses


def copycat_source(original: Path, out: Path) -> Path:
    """A 'new' agent that is the tool-calling template with its names changed."""
    code = original.read_text()
    for old, new in (("messages", "history"), ("reply", "answer"), ("client", "llm"), ("call", "invocation")):
        code = re.sub(rf"\b{old}\b", new, code)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(code)
    return out


def submit_agents(settings, store, chain, hotkeys: dict[str, str], out_dir: Path, console: Console) -> str | None:
    """Each miner posts its agent, signed, over loopback HTTP; the copy must be refused."""
    from arena.api.app import create_app
    from arena.miner.client import MinerClient, Validator
    from arena.store import submissions as submission_rows
    from arena.wallets import ensure_wallet

    with store.transaction() as session:
        already = {s.hotkey for s in submission_rows.list_submissions(session)}
    todo = [name for name in (*MINERS, COPYCAT) if hotkeys[name] not in already]
    if not todo:
        console.print("[bold]submissions[/] every miner has submitted already (this run continues the race)")
        return None
    app = create_app(settings, store=store, chain=chain, validator_hotkey=hotkeys["validator"])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    validator = Validator(hotkey=hotkeys["validator"], url=f"http://127.0.0.1:{port}")
    rejected = None
    try:
        for name in todo:
            agent = AGENTS_DIR / f"{name}.py"
            if name == COPYCAT:
                agent = copycat_source(AGENTS_DIR / "tool_calling.py", out_dir / "agents" / f"{COPYCAT}.py")
            with MinerClient(ensure_wallet(out_dir / "wallets", name)) as client:
                result = client.submit(agent, [validator], chain=chain)
            receipt = result.receipts[0]
            if receipt.accepted:
                console.print(f"[bold]submissions[/] {name}: accepted as #{receipt.submission_id}")
            else:
                console.print(f"[bold]submissions[/] {name}: [yellow]rejected[/] ({receipt.error}: {receipt.detail})")
                if name == COPYCAT:
                    rejected = f"{receipt.error}: {receipt.detail}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    return rejected


def run_cycle(settings, store, chain, validator_hotkey, suite_dir, catalog_dir, plan: DemoPlan, console: Console):
    from arena.race.settings import RaceSettings
    from arena.race.validator_service import Validator

    race = RaceSettings(
        **{
            **settings.race.model_dump(exclude={"suite_dir", "draw_size", "attempts", "workers"}),
            "suite_dir": suite_dir,
            "draw_size": plan.draw_size,
            "attempts": plan.attempts,
            "workers": 2,
        }
    )
    bars: dict[str, TaskID] = {}
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)  # fmt: skip

    def on_progress(update) -> None:
        key = f"cycle {update.cycle} {update.step}"
        if key not in bars:
            bars[key] = progress.add_task(key, total=update.total)
        progress.update(bars[key], completed=update.done, total=update.total)

    validator = Validator(
        settings, race=race, store=store, chain=chain, hotkey=validator_hotkey, catalog_path=catalog_dir,
        on_progress=on_progress,
    )  # fmt: skip
    with progress:
        report = validator.run_once()
    validator.close()
    return report


def export_corpus(database_url: str, out: Path, console: Console) -> dict:
    """The judged store as a corpus; one agent may dominate a three-miner demo, so no share cap."""
    from arena.store import open_store
    from distill.export_model import ExportConfig
    from distill.store_export import export_store

    store = open_store(database_url)
    try:
        summary = export_store(store, ExportConfig(out=out, max_agent_share=1.0))
    finally:
        store.dispose()
    console.print(f"[bold]corpus[/] written to {out} (dataset card: {out / 'README.md'})")
    return summary.funnel.model_dump()


def submission_names(store) -> dict[int, str]:
    from arena.store import submissions as submission_rows

    with store.transaction() as session:
        return {s.id: s.agent_name for s in submission_rows.list_submissions(session)}


def print_result(result: DemoResult, console: Console) -> None:
    if result.halt is not None:
        halt = result.halt
        console.print(f"[bold red]cycle {result.cycle} halted[/] at {halt['stage']} ({halt['kind']}): {halt['reason']}")
        console.print("nothing was promoted and no new weights were set: the validator could not measure")
        console.print(f"fix: {halt['fix']}")
        return
    table = Table(title=f"Leaderboard after cycle {result.cycle}")
    for column in ("rank", "agent", "qualifying", "race", "success", "coef", "champion"):
        table.add_column(column, no_wrap=True)
    for row in sorted(result.standings, key=lambda r: (r.get("rank") is None, r.get("rank") or 0)):
        table.add_row(
            str(row.get("rank") or "-"), row["submission"].removesuffix(".py"), _fmt(row.get("qualifying_score")),
            _fmt(row.get("race_score")), _fmt(row.get("success_rate")), _fmt(row.get("mean_coefficient")),
            "yes" if row.get("is_champion") else "",
        )  # fmt: skip
    show(table, console)
    console.print(f"columns: {LEGEND}", highlight=False, soft_wrap=True)  # one line: greppable, never cut
    for line in not_raced(result):
        console.print(line, highlight=False, soft_wrap=True)
    decision = result.decision
    verdict = decision.get("verdict")
    if result.champion is None:
        console.print(f"champion: [bold]{'undecided' if verdict == 'undecided' else 'nobody'}[/]")
    else:
        console.print(f"champion: [bold]{result.champion.removesuffix('.py')}[/]")
    if decision.get("reason"):
        console.print(f"decision ({verdict or 'kept'}): {decision['reason']}", soft_wrap=True)  # one line, greppable
    weights = Table("uid", "wallet", Column("hotkey", overflow="fold"), "weight", title="weights set on the chain")
    for uid, weight in sorted(result.weights.items()):
        name, hotkey = result.neurons.get(uid, ("?", "-"))
        weights.add_row(str(uid), f"{name} (the burn uid)" if uid == 0 else name, hotkey, f"{weight:.3f}")
    show(weights, console)
    if result.rejected_copy:
        console.print(f"the copied agent was rejected: {result.rejected_copy}")
    f = result.funnel
    console.print(
        f"corpus funnel: episodes {f.get('episodes')} -> agentic {f.get('agentic')} -> gated {f.get('gated')} -> "
        f"train {f.get('train')} / eval {f.get('eval')} (sub-task {f.get('subtask')}, rejected {f.get('rejected')})"
    )
    for name, path in result.paths.items():
        console.print(f"{name}: {path}")


LEGEND = (
    "qualifying: score on the public qualifying problems; race: score on the cycle's hidden draw (what ranks); "
    "success: share of race episodes solved; coef: the judge's mean coefficient (0-1) over judged episodes, "
    "how well the reasoning was done; champion: holds the champion's weight share"
)


def not_raced(result: DemoResult) -> list[str]:
    """Why each entrant without a race score did not race, from the qualifying stage's own detail."""
    stage = result.qualifying
    lines = []
    for row in result.standings:
        if row.get("race_score") is not None:
            continue
        name = row["submission"].removesuffix(".py")
        if row["submission_id"] in stage.get("not_qualified", []):
            lines.append(
                f"{name} did not race: it did not qualify ({stage.get('rule', 'below the qualifying threshold')}; "
                f"the leader scored {_fmt(stage.get('leader_score'))}, {name} {_fmt(row.get('qualifying_score'))})"
            )
        else:
            lines.append(f"{name} did not race this cycle")
    return lines


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

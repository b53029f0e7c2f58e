"""`arena suite`: build, check, draw from, seal and import versioned suites.

Machine output (drawn ids, the archive's sha256, ``--json`` reports) is the
only thing on stdout; summaries and failures go to stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import orjson
import typer
from pydantic import ValidationError
from rich.markup import escape

from arena.commands.common import err, fail, out

app = typer.Typer(help="Versioned suites: build, draw, check, seal, import, fetch.", no_args_is_help=True)

SuiteDir = Annotated[Path, typer.Argument(help="Suite directory.")]


def _errors() -> tuple[type[Exception], ...]:
    from arena.problems.ledger import LedgerError
    from arena.problems.official import ProblemFileError
    from arena.problems.partitions import PartitionError
    from arena.problems.suites import SuiteError

    return SuiteError, LedgerError, PartitionError, ProblemFileError, OSError


def _emit(text: str) -> None:
    """One line of machine output: no markup (a JSON list looks like a tag), no wrapping."""
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _json_file(path: Path) -> dict:
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        fail(f"{path}: cannot read it as JSON ({exc})")
    if not isinstance(value, dict):
        fail(f"{path}: expected a JSON object")
    return value


def _open(path: Path):
    from arena.problems.suites import Suite, SuiteError

    try:
        return Suite(path)
    except SuiteError as exc:
        fail(str(exc))


@app.command("build")
def suite_build(
    problems: Annotated[list[Path], typer.Option("--problems", help="Task file (JSONL); repeat for more.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Suite directory to create (must not exist).")],
    seed: Annotated[str, typer.Option("--seed", help="Partition seed; keep it secret and long for a real bank.")],
    public: Annotated[int, typer.Option("--public", min=0, help="Problems in the public qualifying suite.")] = 30,
    heldout_fraction: Annotated[
        float, typer.Option("--heldout-fraction", min=0.0, max=0.99, help="Fraction of clusters held out for eval.")
    ] = 0.2,
    train_fraction: Annotated[
        float, typer.Option("--train-fraction", min=0.0, max=0.99, help="Fraction of clusters in the train pool.")
    ] = 0.0,
    version: Annotated[str | None, typer.Option("--version", help="Version name (default: from the hash).")] = None,
    catalog_id: Annotated[str | None, typer.Option("--catalog-id", help="Catalog the suite is meant for.")] = None,
    generator_config: Annotated[
        Path | None, typer.Option("--generator-config", help="JSON file: the generator config, kept in the manifest.")
    ] = None,
    cluster_config: Annotated[
        Path | None, typer.Option("--cluster-config", help="JSON file of leak-cluster settings (else the defaults).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest summary as JSON on stdout.")] = False,
) -> None:
    """Cluster problems into leak clusters, partition them by cluster and publish a suite."""
    from arena.problems.official import load_problems
    from arena.problems.partitions import PartitionPlan
    from arena.problems.suites import build_suite

    if not seed.strip():
        fail("--seed must not be empty")
    try:
        plan = PartitionPlan(public=public, heldout_fraction=heldout_fraction, train_fraction=train_fraction)
    except ValidationError as exc:
        fail(exc.errors()[0]["msg"])
    generator = _json_file(generator_config) if generator_config is not None else None
    clustering = None
    if cluster_config is not None:
        from arena.problems.clusters import ClusterConfig

        try:
            clustering = ClusterConfig.model_validate(_json_file(cluster_config))
        except ValidationError as exc:
            first = exc.errors()[0]
            fail(f"{cluster_config}: {'.'.join(map(str, first['loc'])) or '(top)'}: {first['msg']}")
    try:
        loaded = load_problems(*problems)
        err.print(f"clustering {len(loaded)} problems from {len(problems)} file(s)")
        suite = build_suite(
            loaded,
            out_dir,
            seed=seed,
            plan=plan,
            cluster_config=clustering,
            version=version,
            catalog_id=catalog_id,
            generator=generator,
            sources=problems,
        )
    except _errors() as exc:
        fail(str(exc))
    manifest = suite.manifest
    summary = {
        "dir": str(out_dir),
        "version": manifest.version,
        "content_hash": manifest.content_hash,
        "problems": manifest.problem_count,
        "clusters": manifest.cluster_count,
        "partitions": {name.value: counts.model_dump() for name, counts in manifest.counts.items()},
        "seed_file": str(out_dir / "sealed" / "manifest.json"),  # where the secret seed is kept (never the seed)
    }
    if as_json:
        _emit(json.dumps(summary))
    err.print(
        f"suite {manifest.version} at {out_dir}: {manifest.problem_count} problems, {manifest.cluster_count} clusters"
    )
    for name, counts in manifest.counts.items():
        err.print(
            f"  {name.value:<10} {counts.problems:>5} problems {counts.clusters:>5} clusters  {_by_intent(counts.by_intent)}",
            highlight=False,
        )
    if any("variant_kind" in p.extra for p in loaded):  # generated banks only: it reads the files back
        _report_variants(suite)
    # `--seed "$(openssl rand -hex 32)"` never shows the operator the seed: say where it is kept, not what it is.
    err.print(
        f'the partition seed is kept in {out_dir / "sealed" / "manifest.json"} ("seed"): keep it secret, as the whole '
        "sealed/ folder, and back it up with the suite (the same problems and seed rebuild the same suite)",
        highlight=False,
    )


def _report_variants(suite) -> None:
    """Generated variants by kind and how many share their source's cluster (docs/generator.md, Variants)."""
    from arena.problems.partitions import PartitionName
    from arena.problems.variants import family_joins

    joins = family_joins(p for name in PartitionName for p in suite.problems(name))
    if joins:
        listed = ", ".join(f"{kind} {joined}/{total}" for kind, (joined, total) in joins.items())
        err.print(f"variants in their source's cluster, by kind: {listed}", highlight=False)


INTENT_ORDER = ("product", "shop", "voucher", "knowledge")


def _by_intent(counts: dict[str, int]) -> str:
    """``product 5, shop 3, voucher 5, knowledge 6``: the per-intent counts in the usual order, for people."""
    names = [*(i for i in INTENT_ORDER if i in counts), *sorted(set(counts) - set(INTENT_ORDER))]
    return ", ".join(f"{name} {counts[name]}" for name in names) or "-"


@app.command("check")
def suite_check(path: SuiteDir) -> None:
    """Exit 0 only when every invariant holds; otherwise name each failure (exit 1)."""
    from arena.problems.suites import check_suite

    failures = check_suite(path)
    for failure in failures:
        err.print(f"[bold red]FAIL[/] {escape(failure)}", markup=True, highlight=False)
    if failures:
        raise typer.Exit(1)
    err.print(f"{path}: ok (manifest hashes, partitions disjoint by cluster, ledger chain, held-out never revealed)")


@app.command("draw")
def suite_draw(
    path: SuiteDir,
    cycle: Annotated[int, typer.Option("--cycle", min=0, help="Race cycle number.")],
    draw_seed: Annotated[str, typer.Option("--draw-seed", help="Public randomness, hex (e.g. a block hash).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Problems to draw (one per cluster).")] = 30,
    record: Annotated[bool, typer.Option("--record", help="Append the reveal to the suite's ledger.")] = False,
) -> None:
    """Print the cycle's drawn problem ids as a JSON list on stdout."""
    from arena.problems.draw import draw, record_draw

    suite = _open(path)
    try:
        ids = record_draw(suite, cycle, draw_seed, n) if record else draw(suite, cycle, draw_seed, n)
    except _errors() as exc:
        fail(str(exc))
    _emit(json.dumps(ids))
    if record:
        err.print(f"recorded the reveal of {len(ids)} clusters for cycle {cycle} in {suite.ledger_path}")


@app.command("retire")
def suite_retire(
    path: SuiteDir,
    cycle: Annotated[int, typer.Option("--cycle", min=0, help="The cycle whose race is over.")],
) -> None:
    """Move every revealed, not yet retired cluster to the train pool (a ledger event)."""
    from arena.problems.draw import retire

    suite = _open(path)
    try:
        event = retire(suite, cycle)
    except _errors() as exc:
        fail(str(exc))
    _emit(json.dumps(event.cluster_ids))
    err.print(f"retired {len(event.cluster_ids)} clusters to the train pool (ledger seq {event.seq})")


@app.command("show")
def suite_show(
    path: SuiteDir,
    seq: Annotated[int | None, typer.Option("--seq", min=0, help="Ledger event to stop at (default: latest).")] = None,
) -> None:
    """Print the partition (cluster ids per partition) as it stood after ledger event SEQ, as JSON."""
    from arena.problems.draw import partition_at

    suite = _open(path)
    try:
        state = partition_at(suite, seq)
    except _errors() as exc:
        fail(str(exc))
    _emit(state.model_dump_json())


@app.command("seal")
def suite_seal(
    path: SuiteDir,
    archive: Annotated[Path, typer.Option("--out", help="tar.gz to write (must not exist).")],
) -> None:
    """Archive the sealed bank deterministically; print its sha256 on stdout."""
    from arena.problems.sealed_banks import seal_bank

    try:
        digest = seal_bank(path, archive)
    except _errors() as exc:
        fail(str(exc))
    _emit(digest)
    err.print(f"sealed {path}/sealed into {archive}; send the sha256 beside it by another channel")


@app.command("import")
def suite_import(
    source: Annotated[
        Path, typer.Argument(help="A suite directory (imported into the store) or a sealed bank tar.gz.")
    ],
    sha256: Annotated[
        str | None, typer.Option("--sha256", help="Sealed bank: the sha256 the archive must have.")
    ] = None,
    dest: Annotated[Path | None, typer.Option("--out", help="Sealed bank: the suite directory to create.")] = None,
    public: Annotated[
        Path | None, typer.Option("--public", help="The suite's published public/ folder, verified and copied in.")
    ] = None,
    database_url: Annotated[
        str | None, typer.Option("--database-url", help="Suite directory: the store (default ARENA_DATABASE_URL).")
    ] = None,
) -> None:
    """Import a suite directory into the store (problems, clusters, partitions, ledger), or verify a sealed
    bank's sha256 and unpack it as a suite directory (--sha256 --out)."""
    if source.is_dir():
        _import_into_store(source, database_url)
        return
    if sha256 is None or dest is None:
        fail("a sealed bank needs --sha256 and --out (a suite directory is imported into the store as it is)")
    from arena.problems.sealed_banks import import_sealed_bank

    try:
        suite = import_sealed_bank(source, sha256, dest, public=public)
    except _errors() as exc:
        fail(str(exc))
    err.print(f"imported suite {suite.manifest.version} into {dest}")
    if public is None:
        err.print("no --public given: races can be drawn, but `arena suite check` will report public/ missing")


def _import_into_store(suite_dir: Path, database_url: str | None) -> None:
    """The store keeps the suite's problems with their clusters and partitions, and its ledger; re-importing
    adds new ledger events and refuses a rewritten history."""
    from arena.store import StoreError, open_store
    from arena.store import suites as suite_rows
    from arena.store.migrate import upgrade_database

    try:
        upgrade_database(database_url)
        store = open_store(database_url)
        with store.transaction() as session:
            imported = suite_rows.import_suite(session, suite_dir)
        store.dispose()
    except (StoreError, ValueError, OSError) as exc:
        fail(str(exc))
    print(imported.model_dump_json())
    err.print(f"suite {imported.suite_id} is in the store")


@app.command("fetch")
def suite_fetch(
    validator_url: Annotated[str, typer.Option("--validator-url", help="The validator API, http(s)://HOST[:PORT].")],
    folder: Annotated[Path, typer.Option("--out", help="Folder to write public/qualifying.jsonl and manifests into.")],
    timeout: Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds per HTTP request.")] = 30.0,
) -> None:
    """Download the public qualifying suite a validator races on (checked against its sha256)."""
    import hashlib

    import httpx

    base = validator_url.rstrip("/")
    try:
        with httpx.Client(base_url=base, timeout=timeout) as client:
            info = client.get("/v1/suite")
            if info.status_code != 200:
                fail(f"{base}/v1/suite answered {info.status_code}: {info.text[:300]}")
            meta = info.json()
            body = client.get(meta["qualifying_url"])
            if body.status_code != 200:
                fail(f"{base}{meta['qualifying_url']} answered {body.status_code}: {body.text[:300]}")
    except httpx.HTTPError as exc:
        fail(f"cannot reach the validator at {base}: {exc}")
    except (ValueError, KeyError) as exc:
        fail(f"{base}/v1/suite did not answer a suite description: {exc}")
    expected = meta["public"]["qualifying"]["sha256"]
    if hashlib.sha256(body.content).hexdigest() != expected:
        fail(f"the qualifying problems from {base} do not match the suite's sha256 {expected}: not written")
    public = folder / "public"
    public.mkdir(parents=True, exist_ok=True)
    (public / "qualifying.jsonl").write_bytes(body.content)
    (public / "manifest.json").write_text(json.dumps(meta["public"], indent=2) + "\n")
    catalog = meta.get("catalog") or {}
    if catalog.get("manifest"):
        (folder / "catalog.json").write_text(json.dumps(catalog["manifest"], indent=2) + "\n")
    problems = meta["public"]["qualifying"]["problems"]
    err.print(f"suite {meta['suite_id']}: {problems} public qualifying problem(s) in {public / 'qualifying.jsonl'}")
    # The catalog beside the fetched suite (miner/suite -> miner/catalog), not the validator's own `catalog`
    # folder, which an operator's checkout already has.
    beside = folder.parent / "catalog"
    how = catalog.get("how_to_get", "ask the operator").replace("--out catalog", f"--out {beside}")
    err.print(f"catalog: {how}", markup=False, highlight=False)
    err.print(
        f"then: arena run-agent my_agent.py --catalog {beside} --problems {public / 'qualifying.jsonl'}",
        markup=False,
        highlight=False,
    )

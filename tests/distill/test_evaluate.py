"""The held-out evaluation harness: `arena eval` against the built-in offline policy on a
small generated suite's heldout partition, in the real sandbox, and `arena eval compare`."""

from __future__ import annotations

import json
import math

import pytest
from rich.console import Console
from typer.testing import CliRunner

from arena.commands.evaluate import app, comparison_table, versus_table
from arena.generator.generate import GeneratorConfig, generate
from arena.problems.partitions import PartitionName, PartitionPlan
from arena.problems.suites import build_suite
from arena.runner.sandbox import bubblewrap_path
from arena.scoring.metrics import pass_at_k, pass_hat_k
from arena.shop.index import CatalogIndex
from arena.taskpack.build import build_catalog
from distill.eval_report import compare_runs, render_comparison
from distill.eval_results import EvalMetrics, ProblemResult, load_run
from distill.evaluate import EvalSettings, metrics_from_results, sample_seed

runner = CliRunner()


@pytest.fixture(scope="module")
def heldout_suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval")
    catalog_dir = root / "catalog"
    build_catalog(catalog_dir, synthetic=1500, seed=7)
    result = generate(CatalogIndex(catalog_dir), GeneratorConfig(n=8, seed=3, intents=["product", "shop"], variants=1))
    suite = build_suite(
        result.problems, root / "suite", seed="eval-seed", plan=PartitionPlan(public=0, heldout_fraction=0.5)
    )
    return catalog_dir, root / "suite", suite


def test_pass_at_k_matches_the_estimator_on_known_counts():
    # 3 problems, 4 samples each, with 0, 1 and 3 successes.
    results = [
        ProblemResult(id="a", intent="product", greedy=False, successes=[False] * 4),
        ProblemResult(id="b", intent="product", greedy=True, successes=[True, False, False, False]),
        ProblemResult(id="c", intent="shop", greedy=True, successes=[True, True, False, True]),
    ]
    metrics = metrics_from_results(results, EvalSettings(model="m", samples=4), {})
    assert metrics.asr == pytest.approx(2 / 3)
    # Hand-computed: pass@1 = mean(c/n) = (0 + 1/4 + 3/4) / 3; pass@2 = 1 - C(n-c,2)/C(4,2).
    assert metrics.pass_at_1 == pytest.approx((0 + 0.25 + 0.75) / 3)
    expected_at_2 = (0 + (1 - math.comb(3, 2) / math.comb(4, 2)) + 1.0) / 3
    assert metrics.pass_at_k[2] == pytest.approx(expected_at_2)
    assert metrics.pass_at_k[4] == pytest.approx(2 / 3)
    assert metrics.pass_hat_k[2] == pytest.approx((0 + 0 + math.comb(3, 2) / math.comb(4, 2)) / 3)
    assert metrics.by_intent["shop"].pass_at_1 == pytest.approx(0.75) and metrics.by_intent["product"].n == 2


@pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")
def test_eval_offline_policy_on_the_heldout_partition(heldout_suite, tmp_path):
    catalog_dir, suite_dir, suite = heldout_suite
    heldout = suite.problems(PartitionName.heldout)
    assert heldout, "the suite must hold out some problems"
    out_dir = tmp_path / "run"
    args = ["--catalog", str(catalog_dir), "--suite", str(suite_dir), "--partition", "heldout",
            "--samples", "2", "--temperature", "0.7", "--out", str(out_dir), "--label", "offline"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = EvalMetrics.model_validate_json((out_dir / "metrics.json").read_text())
    assert metrics.n_problems == len(heldout) and metrics.samples == 2
    assert set(metrics.pass_at_k) == {1, 2} and set(metrics.pass_hat_k) == {1, 2}
    assert metrics.asr > 0  # the offline policy solves some generated product/shop problems

    rows = [json.loads(line) for line in (out_dir / "records.jsonl").read_text().splitlines()]
    assert len(rows) == len(heldout) * 3  # one greedy run + two samples per problem
    assert all(row["never_train"] and row["evaluation"]["phase"] in ("greedy", "sampled") for row in rows)
    # Only held-out problems ran, and each record was scored by the race's scorer.
    assert {row["record"]["problem"]["id"] for row in rows} == {p.id for p in heldout}
    assert all(row["record"]["outcome"] is not None for row in rows)
    greedy = {r["record"]["problem"]["id"]: r["record"]["outcome"]["success"] for r in rows if r["evaluation"]["phase"] == "greedy"}  # fmt: skip
    assert metrics.asr == pytest.approx(sum(greedy.values()) / len(greedy))
    # The greedy pass ran at temperature 0, pinned by the proxy, whatever the agent asked; each sampled
    # attempt carried its own seed, the one the config's seed, the problem and the attempt give.
    seeds = set()
    for row in rows:
        record = row["record"]
        for call in record["llm_calls"]:
            expected = 0.0 if row["evaluation"]["phase"] == "greedy" else 0.7
            assert call["request"]["temperature"] == expected
            if row["evaluation"]["phase"] == "sampled":
                assert call["request"]["seed"] == sample_seed(0, record["problem"]["id"], record["attempt"])
                seeds.add(call["request"]["seed"])
    assert len(seeds) == 2 * len(heldout)  # every sampled attempt of every problem had a seed of its own

    # pass@k in metrics.json equals the estimator applied to the recorded counts.
    _, problems = load_run(out_dir)
    counts = [(len(p.successes), sum(p.successes)) for p in problems]
    assert metrics.pass_at_k[2] == pytest.approx(sum(pass_at_k(n, c, 2) for n, c in counts) / len(counts))
    assert metrics.pass_hat_k[2] == pytest.approx(sum(pass_hat_k(n, c, 2) for n, c in counts) / len(counts))
    report = (out_dir / "report.md").read_text()
    assert "ASR (greedy)" in report and f"{metrics.asr:.1%}" in report

    # compare: the run against itself has identical intervals that contain the point estimate.
    compared = runner.invoke(app, ["compare", str(out_dir), str(out_dir), "--json", "--resamples", "200"])
    assert compared.exit_code == 0, compared.output
    table = json.loads(compared.stdout)
    versus = table[1].pop("vs_first"), table[1].pop("verdict")
    assert table[0].pop("vs_first") is None and table[0].pop("verdict") is None
    assert table[0] == table[1] and table[0]["asr"]["low"] <= metrics.asr <= table[0]["asr"]["high"]
    assert versus[1] == "undecided" and versus[0]["mean_difference"] == 0.0  # a run against itself: no evidence


def test_compare_intervals_separate_a_clearly_better_run():
    ids = [f"p{i}" for i in range(60)]
    base = [
        ProblemResult(id=i, intent="product", greedy=n % 5 == 0, successes=[n % 5 == 0] * 2) for n, i in enumerate(ids)
    ]
    better = [
        ProblemResult(id=i, intent="product", greedy=n % 5 != 4, successes=[n % 5 != 4] * 2) for n, i in enumerate(ids)
    ]
    settings = EvalSettings(model="m", samples=2)
    runs = [
        (metrics_from_results(base, settings.model_copy(update={"label": "base"}), {}), base),
        (metrics_from_results(better, settings.model_copy(update={"label": "sft"}), {}), better),
    ]
    rows = compare_runs(runs, resamples=500)
    assert rows[0].asr.value == pytest.approx(0.2) and rows[1].asr.value == pytest.approx(0.8)
    assert rows[0].asr.high < rows[1].asr.low  # 60 problems: the intervals do not overlap
    assert rows[1].k == 2 and rows[1].pass_at_k.value == pytest.approx(0.8)
    assert "| sft | 60 |" in render_comparison(rows)
    # Paired by problem: sft solves every problem base does and 36 more, so it is better with confidence.
    assert rows[1].verdict == "better" and rows[1].vs_first.b_better == 0 and rows[1].vs_first.lower > 0.4
    assert "**better**" in render_comparison(rows)


def test_compare_refuses_a_directory_that_is_not_a_run(tmp_path):
    result = runner.invoke(app, ["compare", str(tmp_path)])
    assert result.exit_code == 2
    assert "metrics.json: missing" in result.output


def test_eval_needs_a_problem_source(tmp_path):
    result = runner.invoke(app, ["--catalog", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--problems" in result.output


def test_compare_names_one_k_and_prints_a_table_that_keeps_its_rows_at_80_columns():
    ids = [f"p{i}" for i in range(20)]
    eight = [
        ProblemResult(id=i, intent="product", greedy=n % 2 == 0, successes=[n % 3 == 0] * 8) for n, i in enumerate(ids)
    ]
    two = [
        ProblemResult(id=i, intent="product", greedy=n % 4 == 0, successes=[n % 2 == 0] * 2) for n, i in enumerate(ids)
    ]
    runs = [
        (
            metrics_from_results(eight, EvalSettings(model="m", samples=8, label="base-model-with-a-long-name"), {}),
            eight,
        ),
        (metrics_from_results(two, EvalSettings(model="m", samples=2, label="sft"), {}), two),
    ]
    rows = compare_runs(runs, resamples=200)
    assert [row.k for row in rows] == [2, 2]  # never pass@8 beside pass@2
    assert rows[0].pass_at_k.value == pytest.approx(sum(pass_at_k(8, 8 * (n % 3 == 0), 2) for n in range(20)) / 20)
    assert "pass@2 |" in render_comparison(rows) and "pass@k" not in render_comparison(rows)
    console = Console(width=80, record=True)
    console.print(comparison_table(rows, 0.95))
    text = console.export_text()
    assert "pass@2" in text and "pass@8" not in text and "|---" not in text
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for row in rows:  # each run is one line of the table: its label and all its figures together
        line = next(line for line in lines if line.strip("│ ").startswith(row.label[:12]))
        assert f"{row.asr.value:.1%}" in line and f"{row.pass_at_k.value:.1%}" in line, text
    console = Console(width=80, record=True)
    console.print(versus_table(rows))
    against = console.export_text()
    assert rows[0].vs_first is None and rows[1].verdict in ("better", "worse", "undecided")
    assert "sft" in against and rows[1].verdict in against and all(len(line) <= 80 for line in against.splitlines())


@pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")
def test_episodes_lost_to_an_overloaded_model_server_are_rerun_counted_and_never_scored(
    heldout_suite, student_checkpoint, tmp_path
):
    """The real student behind the real in-process server, the real reference agent in the sandbox.
    The server is overloaded at first: its first generation takes longer than an episode may run,
    so the episodes whose calls wait on them (generating, or queued behind) are stopped by the wall
    clock while the server works. Each of those is the server's delay, not the student's failure:
    it is run again and counted, and no scored episode ended waiting for the server."""
    import asyncio
    import time

    import httpx
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from arena.runner.record import EpisodeLimits, EpisodeRecord
    from arena.runner.upstreams import Upstream, UpstreamRegistry
    from distill.evaluate import LOST_FILE, evaluate, infrastructure_loss
    from distill.serve import create_model_app
    from distill.student import apply_template

    catalog_dir, _, suite = heldout_suite
    problems = suite.problems(PartitionName.heldout)[:2]
    model = AutoModelForCausalLM.from_pretrained(student_checkpoint, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(student_checkpoint)
    apply_template(tokenizer)
    app = create_model_app(model, tokenizer, "student", max_new_tokens=4, max_batch=1, batch_wait_s=0.0)
    backend = app.state.backend
    step, busy = backend.step, {"left": 1}  # one generation held past the wall clock: both episodes wait on it
    wall_s = 25.0  # an honest episode here is a few seconds; the held generation outlasts it by 2 s

    def overloaded(running, joining):
        if joining and busy["left"] > 0:  # other work holds the server past an episode's whole wall clock
            busy["left"] -= 1
            time.sleep(wall_s + 2)
        return step(running, joining)

    backend.step = overloaded
    registry = UpstreamRegistry(
        [Upstream(name="served", base_url="http://served/v1", models=["student"])],
        transports={"served": httpx.ASGITransport(app=app)},
    )
    settings = EvalSettings(model="student", samples=0, concurrency=2, max_reruns=4)
    limits = EpisodeLimits(wall_s=wall_s, cpu_s=int(wall_s), llm_call_timeout_s=wall_s * 3)

    async def go():
        try:
            return await evaluate(CatalogIndex(catalog_dir), problems, registry, settings, tmp_path, limits=limits)
        finally:
            await registry.aclose()

    metrics = asyncio.run(go())
    lost = [json.loads(line) for line in (tmp_path / LOST_FILE).read_text().splitlines()]
    scored = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert busy["left"] == 0 and lost, "the overloaded server must have cost some episode its run"
    assert metrics.infra_reruns == len(lost)
    for row in lost:  # each lost run is the server's delay, as the proxy saw it
        assert "hung up" in row["evaluation"]["infra_lost"] and row["never_train"]
        assert row["record"]["termination"] == "timeout"
    assert len(scored) == len(problems) and metrics.n_problems == len(problems)
    for row in scored:  # every scored episode got its answers: none ended waiting for the server
        record = EpisodeRecord.model_validate(row["record"])
        assert infrastructure_loss(record) is None
        assert record.termination.value in ("returned", "terminated"), record.error
        assert record.llm_calls and all(call.status_code == 200 for call in record.llm_calls)
    assert set(metrics.terminations) <= {"returned", "terminated"}
    assert f"{len(lost)} episode(s) lost to the infrastructure" in (tmp_path / "report.md").read_text()

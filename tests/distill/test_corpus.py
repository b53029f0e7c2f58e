"""The corpus pipeline on real episodes: the reference agents run once in the real sandbox on the
shared tiny catalog, the rules judge judges them, and the export turns them into corpus files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from arena.commands.export import export
from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from arena.scoring import score_problem
from distill.normalize import normalize_record
from distill.structure import structural_verdicts
from judge.rules import RulesJudge

AGENTS = Path(__file__).resolve().parents[2] / "arena" / "agents"
MODEL = "heuristic-policy"
QUERIES = ["a red widget gadget", "cheap widget thing with free shipping", "widget gadget from shop s1"]

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def _problems():
    rewards = [{"product_id": "1001", "title": ["widget"]}, {"product_id": "2000"}, {"product_id": "1003"}]
    return [
        parse_row({"query": q, "reward": r, "id": f"corpus-{i}", "cluster_id": f"cl-{i}"})
        for i, (q, r) in enumerate(zip(QUERIES, rewards, strict=True))
    ]


@pytest.fixture(scope="module")
def episodes(catalog) -> dict[str, list[EpisodeRecord]]:
    """tool_calling on every problem, search_loop on two, all at once (each episode is ~10 s of sandbox start)."""
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=create_policy_app(seed=1))},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=EpisodeLimits(wall_s=90), allowlist=[MODEL]))
    problems = _problems()
    jobs = [("tool_calling", p) for p in problems] + [("search_loop", p) for p in problems[:2]]

    async def go():
        try:
            return await asyncio.gather(
                *(runner.run(AgentSource.from_path(AGENTS / f"{agent}.py"), p, MODEL) for agent, p in jobs)
            )
        finally:
            await registry.aclose()

    records = asyncio.run(go())
    by_agent: dict[str, list[EpisodeRecord]] = {}
    for (agent, problem), record in zip(jobs, records, strict=True):
        record.outcome = score_problem(problem, record.final_recommendation or [], catalog).model_dump(mode="json")
        by_agent.setdefault(agent, []).append(record)
    return by_agent


@pytest.fixture(scope="module")
def inputs(episodes, tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("corpus-inputs")
    records, judgments = folder / "records.jsonl", folder / "judgments.jsonl"
    judge = RulesJudge()
    with records.open("w") as r, judgments.open("w") as j:
        for record in [*episodes["tool_calling"], *episodes["search_loop"]]:
            r.write(record.model_dump_json() + "\n")
            j.write(json.dumps(judge.judge_now(record).line()) + "\n")
    return records, judgments


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("export")(export)
    app.command("other")(lambda: None)  # two commands: typer keeps `export` as a subcommand name
    return app


def run_export(*args: str):
    result = CliRunner().invoke(cli(), ["export", *args])
    return result


def rows(path: Path, *, missing_ok: bool = False) -> list[dict]:
    if missing_ok and not path.exists():
        return []  # an empty split is not written
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def verdicts(record: EpisodeRecord) -> dict:
    _, trace = normalize_record(record, source="test")
    return structural_verdicts(trace)


# --- the structural filter ------------------------------------------------------------------------


def test_tool_calling_episodes_are_agentic(episodes):
    for record in episodes["tool_calling"]:
        found = verdicts(record)
        assert list(found) == ["inference", "tool_calls", "attribution", "continuity", "final_recommendation"]
        # every stage but the last must pass for an agent that did what its model said
        assert all(v.passed for name, v in found.items() if name != "final_recommendation"), found
    recommended = [r for r in episodes["tool_calling"] if r.final_recommendation]
    assert recommended and all(verdicts(r)["final_recommendation"].passed for r in recommended)


def test_search_loop_episodes_are_subtask_with_the_failing_stage_named(episodes):
    for record in episodes["search_loop"]:
        found = verdicts(record)
        assert found["inference"].passed
        assert not found["tool_calls"].passed and "0 tool call" in found["tool_calls"].reason
        assert not found["attribution"].passed and "not emitted by the model" in found["attribution"].reason


def _agentic(episodes) -> EpisodeRecord:
    return next(r for r in episodes["tool_calling"] if len(r.llm_calls) >= 2 and r.final_recommendation)


def test_a_tool_message_that_differs_from_the_environment_fails_attribution(episodes):
    record = _agentic(episodes).model_copy(deep=True)
    request = record.llm_calls[1].request["messages"]
    tool = next(m for m in request if m["role"] == "tool")
    tool["content"] = json.dumps([{"product_id": "9999", "title": "planted by the agent"}])
    found = verdicts(record)
    assert not found["attribution"].passed
    assert "differs from the environment's result" in found["attribution"].reason


def test_an_executed_call_the_model_never_emitted_fails_attribution(episodes):
    record = _agentic(episodes).model_copy(deep=True)
    extra = record.tool_calls[0].model_copy(update={"arguments": {"q": "something the model never asked", "page": 1}})
    record.tool_calls.insert(1, extra)
    record.tool_calls = record.tool_calls * 1 + [extra] * 2  # 3 strays: below the 90% default share
    found = verdicts(record)
    assert not found["attribution"].passed and "not emitted by the model" in found["attribution"].reason


def test_forged_assistant_history_fails_continuity(episodes):
    record = _agentic(episodes).model_copy(deep=True)
    request = record.llm_calls[1].request["messages"]
    assistant = next(m for m in request if m["role"] == "assistant")
    assistant["content"] = "I carefully compared every candidate."  # words the model never said
    found = verdicts(record)
    assert not found["continuity"].passed and "forged history" in found["continuity"].reason


def test_one_shot_prompts_fail_continuity(episodes):
    first, second = episodes["search_loop"][:2]
    record = first.model_copy(deep=True)
    if len(record.llm_calls) < 2:  # the model said yes at once: add the other episode's narrow question
        record.llm_calls.append(second.llm_calls[0].model_copy(update={"index": len(record.llm_calls)}))
    found = verdicts(record)
    assert not found["continuity"].passed and "one-shot" in found["continuity"].reason


# --- the export command ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(inputs, tmp_path_factory) -> Path:
    records, judgments = inputs
    out = tmp_path_factory.mktemp("corpus") / "out"
    result = run_export(
        "--records", str(records), "--judgments", str(judgments), "--out", str(out),
        "--min-coefficient", "0", "--max-agent-share", "1", "--eval-fraction", "0.34", "--seed", "3",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_the_export_writes_the_train_problems_with_rewards_and_nothing_else(exported):
    train_ids = {r["metadata"]["problem_id"] for r in rows(exported / "train.jsonl")}
    eval_ids = {r["metadata"]["problem_id"] for r in rows(exported / "eval.jsonl", missing_ok=True)}
    problems = rows(exported / "problems.jsonl")
    assert {p["id"] for p in problems} == train_ids and not eval_ids & train_ids
    assert all(p["reward"] for p in problems)
    from arena.problems.official import iter_problems

    assert {p.id for p in iter_problems(exported / "problems.jsonl")} == train_ids  # what rft and grpo read


def test_export_writes_every_file_in_the_canonical_schema(exported, episodes):
    card = (exported / "README.md").read_text()
    for name in ("train", "eval", "subtask", "rejected", "kto"):
        # Written with rows, or named in the card as not written: an empty JSONL split loads as an error.
        path = exported / f"{name}.jsonl"
        assert (path.is_file() and rows(path)) or (
            not path.exists() and f"`{name}.jsonl`" in card.split("Not written")[1]
        )
    train, evals, subtask = (
        rows(exported / "train.jsonl"),
        rows(exported / "eval.jsonl"),
        rows(exported / "subtask.jsonl"),
    )
    agentic_ids = {r.episode_id for r in episodes["tool_calling"] if all(v.passed for v in verdicts(r).values())}
    assert {r["metadata"]["episode_id"] for r in train + evals} == agentic_ids
    assert {r["metadata"]["episode_id"] for r in subtask} >= {r.episode_id for r in episodes["search_loop"]}
    for row in train + evals:
        meta = row["metadata"]
        assert set(row) == {"messages", "tools", "metadata"}
        assert meta["agent"]["name"] == "tool_calling" and len(meta["agent"]["sha256"]) == 64
        assert all(v["passed"] for v in meta["filter"].values()) and all(v["passed"] for v in meta["gates"].values())
        assert meta["judge"]["judge"] == "rules" and meta["provenance"] == "validator-recorded"
        calls = [c for m in row["messages"] for c in m.get("tool_calls", [])]
        assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)
    for row in subtask:
        assert row["metadata"]["agent"]["name"] == "search_loop"
        assert row["metadata"]["filter"]["tool_calls"]["passed"] is False
    clusters = lambda part: {r["metadata"]["cluster_id"] for r in part}  # noqa: E731
    assert evals and train and not clusters(train) & clusters(evals)
    kto = rows(exported / "kto.jsonl")
    assert kto and all(set(k) == {"prompt", "completion", "label"} for k in kto)
    assert all(k["completion"][0]["role"] == "assistant" for k in kto)


def test_dataset_card_has_the_funnel_intents_agents_and_plots(exported):
    card = (exported / "README.md").read_text()
    assert "| episodes read | 5 |" in card and "**train**" in card and "sub-task" in card
    assert "## Counts per intent" in card and "distinct agents: 1" in card
    assert (exported / "funnel.png").read_bytes()[:4] == b"\x89PNG"
    assert (exported / "scores.png").read_bytes()[:4] == b"\x89PNG"


def test_unjudged_episodes_fail_the_reasoning_gate(inputs, tmp_path):
    records, _ = inputs
    result = run_export("--records", str(records), "--out", str(tmp_path / "o"), "--max-agent-share", "1")
    # Nothing reached train: the export says why and fails, and writes no empty split (it would load as an error).
    assert result.exit_code == 1, result.output
    assert "train is empty" in result.stderr and "failed 'reasoning'" not in result.stderr
    # The cause is that nobody judged them, and the line names the fix: judge them, or take no threshold.
    line = next(line for line in result.stderr.splitlines() if "train is empty" in line)
    assert "unjudged" in line and "arena judge run" in line and "--judgments" in line, line
    assert "--min-coefficient 0" in line, line
    rejected = rows(tmp_path / "o" / "rejected.jsonl")
    assert rejected and all(
        r["metadata"]["gates"]["reasoning"] == {"passed": False, "reason": "unjudged"} for r in rejected
    )
    assert not (tmp_path / "o" / "train.jsonl").exists()
    assert "train is empty" in (tmp_path / "o" / "README.md").read_text()


def test_agent_share_cap_and_duplicates(inputs, tmp_path):
    records, judgments = inputs
    doubled = tmp_path / "doubled.jsonl"
    lines = records.read_text().splitlines()
    again = [json.loads(line) | {"episode_id": json.loads(line)["episode_id"] + "-again"} for line in lines]
    doubled.write_text("\n".join(lines + [json.dumps(r) for r in again]) + "\n")
    result = run_export("--records", str(doubled), "--out", str(tmp_path / "o"), "--min-coefficient", "0",
                        "--max-agent-share", "1", "--eval-fraction", "0")  # fmt: skip
    assert result.exit_code == 0, result.output
    rejected = rows(tmp_path / "o" / "rejected.jsonl")
    dupes = [r for r in rejected if "duplicate" in r["metadata"]["gates"]]
    assert dupes and all(
        r["metadata"]["gates"]["duplicate"]["reason"].startswith("duplicate of episode") for r in dupes
    )
    capped = run_export("--records", str(records), "--out", str(tmp_path / "c"), "--min-coefficient", "0",
                        "--max-agent-share", "0.5", "--eval-fraction", "0")  # fmt: skip
    assert capped.exit_code == 0, capped.output
    # One agent can never be at most half of a non-empty split: the cap binds at 1/k (here 100%)
    # instead of cutting everything, and says so.
    uncapped = run_export("--records", str(records), "--out", str(tmp_path / "u"), "--min-coefficient", "0",
                          "--max-agent-share", "1", "--eval-fraction", "0")  # fmt: skip
    assert uncapped.exit_code == 0, uncapped.output
    assert rows(tmp_path / "c" / "train.jsonl") == rows(tmp_path / "u" / "train.jsonl") != []
    assert "share cap cannot hold" in capped.stderr and "binds at 100%" in capped.stderr
    assert "share cap cannot hold" not in uncapped.stderr


def test_bad_input_is_named(tmp_path, inputs):
    records, _ = inputs
    bad = tmp_path / "bad.jsonl"
    bad.write_text(records.read_text().splitlines()[0] + "\n{not json\n" + json.dumps({"episode_id": 1}) + "\n")
    result = run_export("--records", str(bad), "--out", str(tmp_path / "o"), "--min-coefficient", "0")
    assert result.exit_code == 0, result.output
    card = (tmp_path / "o" / "README.md").read_text()
    assert f"{bad}:2: not valid JSON" in card and f"{bad}:3: not an episode record" in card
    assert run_export("--out", str(tmp_path / "x")).exit_code == 2
    missing = run_export("--records", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "x"))
    assert missing.exit_code == 2 and "nope.jsonl does not exist" in missing.output
    assert run_export("--records", str(records), "--out", str(tmp_path / "x"), "--cycles", "5:1").exit_code == 2


# --- the exported files load with datasets and format with trl ------------------------------------


def test_train_file_loads_with_datasets_and_formats_with_trl(exported):
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("trl")
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.data_utils import apply_chat_template, is_conversational

    from distill.gates import TEMPLATE, render

    train = datasets.load_dataset("json", data_files=str(exported / "train.jsonl"), split="train")
    assert len(train) == len(rows(exported / "train.jsonl"))
    specials = ["<|im_start|>", "<|im_end|>", "<unk>", "<pad>"]
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = [render(r["messages"], r["tools"]) for r in rows(exported / "train.jsonl")]
    raw.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=specials, vocab_size=2000))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<pad>", unk_token="<unk>",
        chat_template=TEMPLATE.read_text(),
    )  # fmt: skip
    for example in train:
        assert is_conversational(example)
        text = apply_chat_template({"messages": example["messages"]}, tokenizer, tools=example["tools"])["text"]
        # transformers renders the shipped template exactly as the format gate's jinja2 does
        assert text == render(example["messages"], example["tools"])
        assert "<tool_call>" in text and "<tool_response>" in text
        assert len(tokenizer(text)["input_ids"]) > 20
    kto = rows(exported / "kto.jsonl")[0]
    formatted = apply_chat_template(kto, tokenizer)
    assert formatted["prompt"].endswith("<|im_start|>assistant\n") and formatted["completion"]


# --- the database path ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_database_export_streams_judged_episodes_and_never_the_heldout(backend, episodes, tmp_path):
    from arena.problems.partitions import PartitionName
    from arena.store import cycles as cycle_rows
    from arena.store import episodes as episode_rows
    from arena.store import judgments as judgment_rows
    from arena.store import submissions as submission_rows
    from arena.store import suites as suite_rows
    from arena.store.episodes import EpisodeKey
    from arena.store.judgments import JudgmentResult
    from arena.store.models_race import EpisodeStage
    from distill.export import run_export as export_items
    from distill.export_model import ExportConfig, GateConfig
    from distill.importers import store_items
    from tests.arena.store.test_store import make_suite, migrated_store, new_submission

    suite = make_suite(tmp_path / "suite", "corpus", clusters=8)
    with migrated_store(backend, tmp_path) as store:
        with store.transaction() as s:
            imported = suite_rows.import_suite(s, suite.path)
            submission = submission_rows.add_submission(s, new_submission("corpus-miner", b"print('agent')\n"))
            cycle_rows.start_cycle(s, 1, imported.suite_id, {})
            bank = suite_rows.suite_problems(s, imported.suite_id, PartitionName.race_bank)
            heldout = suite_rows.suite_problems(s, imported.suite_id, PartitionName.heldout)
            chosen = [*bank[:3], heldout[0]]
            keys = [
                EpisodeKey(cycle=1, stage=EpisodeStage.race, submission_id=submission.id,
                                suite_id=imported.suite_id, problem_id=p.id)
                for p in chosen
            ]  # fmt: skip
            infos = episode_rows.ensure_episodes(s, keys)
            records = [*episodes["tool_calling"][:2], episodes["search_loop"][0], episodes["tool_calling"][2]]
            judge = RulesJudge()
            for info, record in zip(infos, records, strict=True):
                episode_rows.complete(s, info.id, record, record.outcome)
                verdict = judge.judge_now(record)
                result = JudgmentResult(level=verdict.level, coefficient=verdict.coefficient)
                judgment_rows.add_version(s, info.id, "rules", verdict.rubric_version, result)
        seen = []
        config = ExportConfig(out=tmp_path / "out", gates=GateConfig(min_coefficient=0), max_agent_share=1)
        summary = export_items(store_items(store, batch_size=2), config, on_verdict=seen.append)
        # The command's database path stores the run and every verdict, for the API.
        from arena.store.exports import latest_verdict
        from distill.store_export import export_store

        stored_config = config.model_copy(update={"out": tmp_path / "out2"})
        export_store(store, stored_config, batch_size=2)
        with store.transaction() as s:
            loop_verdict = latest_verdict(s, str(infos[2].id))
            assert latest_verdict(s, str(infos[3].id)) is None  # held out: never exported, never judged here
        assert loop_verdict["destination"] == "subtask"
        assert loop_verdict["filter"]["tool_calls"]["passed"] is False
    assert summary.funnel.episodes == 4 and summary.funnel.heldout == 1  # read, then kept out of every file
    exported = [
        r
        for name in ("train", "eval", "subtask", "rejected")
        for r in rows(tmp_path / "out" / f"{name}.jsonl", missing_ok=True)
    ]
    assert {r["metadata"]["episode_id"] for r in exported} == {str(i.id) for i in infos[:3]}
    assert {v.episode_id for v in seen} == {str(i.id) for i in infos[:3]}
    by_id = {r["metadata"]["episode_id"]: r["metadata"] for r in exported}
    first = by_id[str(infos[0].id)]
    assert first["cycle"] == 1 and first["submission_id"] == submission.id and first["partition"] == "race_bank"
    assert first["cluster_id"] == chosen[0].cluster_id and first["judge"]["judge"] == "rules"
    loop = by_id[str(infos[2].id)]
    assert loop["agent"]["name"] == "search_loop" and loop["filter"]["tool_calls"]["passed"] is False
    assert next(v for v in seen if v.episode_id == str(infos[2].id)).destination == "subtask"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_record_stored_before_the_knowledge_filter_never_reaches_the_corpus(backend, episodes, tmp_path):
    """Issue 30 class 4: a record made when web_search read the whole corpus may quote another problem's
    answer page (a race-bank or held-out one) in its tool results or model messages. The export leaves it
    out, named, and exports the same record made under the per-problem filter."""
    from arena.problems.partitions import PartitionName
    from arena.runner.record import ToolCallRecord
    from arena.store import cycles as cycle_rows
    from arena.store import episodes as episode_rows
    from arena.store import submissions as submission_rows
    from arena.store import suites as suite_rows
    from arena.store.episodes import EpisodeKey
    from arena.store.models_race import EpisodeStage
    from distill.export import run_export as export_items
    from distill.export_model import ExportConfig, GateConfig
    from distill.importers import store_items
    from tests.arena.store.test_store import make_suite, migrated_store, new_submission

    foreign = {
        "url": "https://knowledge.invalid/x/0123456789abcdef",
        "title": "X",
        "content": "Answer: held-out-secret",
    }
    base = episodes["tool_calling"][0]
    call = ToolCallRecord(index=99, name="web_search", arguments={"q": "answer"}, ok=True, result=[foreign],
                          at_s=0.1, duration_ms=1.0)  # fmt: skip
    records = [
        base.model_copy(update={"tool_calls": [*base.tool_calls, call], "knowledge_scope": scope})
        for scope in (None, "problem")
    ]
    suite = make_suite(tmp_path / "suite", "corpus", clusters=8)
    with migrated_store(backend, tmp_path) as store:
        with store.transaction() as s:
            imported = suite_rows.import_suite(s, suite.path)
            submission = submission_rows.add_submission(s, new_submission("corpus-miner", b"print('agent')\n"))
            cycle_rows.start_cycle(s, 1, imported.suite_id, {})
            public = suite_rows.suite_problems(s, imported.suite_id, PartitionName.public)[:2]
            keys = [
                EpisodeKey(cycle=1, stage=EpisodeStage.qualifying, submission_id=submission.id,
                           suite_id=imported.suite_id, problem_id=p.id)
                for p in public
            ]  # fmt: skip
            infos = episode_rows.ensure_episodes(s, keys)
            for info, record in zip(infos, records, strict=True):
                episode_rows.complete(s, info.id, record, record.outcome)
        config = ExportConfig(out=tmp_path / "out", gates=GateConfig(min_coefficient=0), max_agent_share=1)
        summary = export_items(store_items(store, batch_size=2), config)
    assert summary.funnel.unreadable == 1 and f"episode {infos[0].id}" in summary.unreadable[0]
    assert "predate the per-problem knowledge filter" in summary.unreadable[0]
    written = "".join(p.read_text() for p in (tmp_path / "out").glob("*.jsonl"))
    exported = {json.loads(line)["metadata"]["episode_id"] for line in written.splitlines() if '"metadata"' in line}
    assert str(infos[1].id) in exported and str(infos[0].id) not in exported

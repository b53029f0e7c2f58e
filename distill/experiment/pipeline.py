"""The experiment's steps, in order, each cached by its inputs (see steps.py).

The held-out problems are chosen once, by the suite step, and every row is evaluated on exactly
those, by the same backend (the fp32 checkpoint served in-process by distill/serve.py) with the same
template, the same token budget and the same scorer. Nothing reads held-out outcomes to choose a
setting: the stages' settings come from the config file alone, and the best row for pass@k is the
one with the highest greedy ASR, which the report states as such.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.problems.model import Problem
from distill.experiment import arena_store
from distill.experiment.config import ExperimentConfig, StagePlan
from distill.experiment.steps import StepResult, Steps, step_key

if TYPE_CHECKING:
    from distill.experiment.report import LeakInflation, OfficialTasks
    from distill.gguf_export import Precision

Log = Callable[[str], None]
STUDENT_SERVED = "student"  # the upstream name; each row is served under its own model name


class ExperimentError(RuntimeError):
    """A step that cannot go on: the message names the step and the reason."""


# --- helpers shared by the steps --------------------------------------------------------------------


def _round_robin(problems: list[Problem], limit: int | None) -> list[Problem]:
    """The first ``limit`` problems taking one intent after the other, so a short list has every intent."""
    if limit is None or limit >= len(problems):
        return problems
    queues: dict[str, list[Problem]] = defaultdict(list)
    for problem in problems:
        queues[problem.intent.value].append(problem)
    chosen: list[Problem] = []
    while len(chosen) < limit:
        for intent in sorted(queues):
            if queues[intent] and len(chosen) < limit:
                chosen.append(queues[intent].pop(0))
    return chosen


def _partitions(config: ExperimentConfig, suite_dir: Path) -> tuple[list[Problem], list[Problem], dict[str, Problem]]:
    from arena.problems.partitions import PartitionName
    from arena.problems.suites import Suite

    suite = Suite(suite_dir)
    known: dict[str, Problem] = {}
    for partition in PartitionName:
        try:
            known |= {p.id: p for p in suite.problems(partition)}
        except ValueError:
            continue  # an empty or sealed partition
    heldout = _round_robin(suite.problems(PartitionName.heldout), config.suite.heldout_limit)
    train = _round_robin(suite.problems(PartitionName.train_pool), config.suite.train_limit)
    return heldout, train, known


TURN_MARGIN = 16  # tokens past the longest trained turn (a turn's JSON can come out a little longer)


def assistant_turn_tokens(tokenizer, train_file: Path) -> list[list[int]]:
    """The length of every assistant turn of ``train_file``, row by row, as the student is trained on
    it: the runs of the template's assistant mask."""
    rows: list[list[int]] = []
    if not train_file.is_file():
        return rows
    for line in train_file.open(encoding="utf-8"):
        row = json.loads(line)
        encoded = tokenizer.apply_chat_template(
            row["messages"], tools=row.get("tools") or None, tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )  # fmt: skip
        lengths: list[int] = []
        run = 0
        for masked in [*encoded["assistant_masks"], 0]:
            if masked:
                run += 1
            elif run:
                lengths.append(run)
                run = 0
        rows.append(lengths)
    return rows


def assistant_turn_calls(train_file: Path) -> list[int]:
    """The tool calls of every assistant turn of ``train_file``, as the student is trained on them."""
    if not train_file.is_file():
        return []
    return [
        len(message.get("tool_calls") or ())
        for line in train_file.open(encoding="utf-8")
        for message in json.loads(line)["messages"]
        if message.get("role") == "assistant"
    ]


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def episode_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """From evaluation records: tokens per episode and how the student's first turns went."""
    first_called = first_executed = cut = 0
    tokens = []
    for record in records:
        cut += any(hit.get("limit") == "completion_tokens" for hit in record.get("limits_hit") or [])
        calls = [c for c in record["llm_calls"] if c.get("status_code") == 200 and c.get("response")]
        tokens.append(sum(c["usage"]["prompt_tokens"] + c["usage"]["completion_tokens"] for c in record["llm_calls"]))
        if calls and calls[0]["response"].get("tool_calls"):
            first_called += 1
            executed = record.get("tool_calls") or []
            if executed and executed[0].get("ok"):
                first_executed += 1
    n = len(records)
    return {
        "episodes": n,
        "tokens_per_episode": sum(tokens) / n if n else 0.0,
        "first_turn_tool_calls": first_called / n if n else 0.0,
        "first_turn_executed": first_executed / n if n else 0.0,
        "episode_budget_spent": cut,  # episodes refused a call because they had generated the episode's budget
    }


# --- the experiment ---------------------------------------------------------------------------------


class Experiment:
    def __init__(self, config: ExperimentConfig, out: Path, log: Log = print) -> None:
        self.config = config
        self.out = out
        self.log = log
        self.steps = Steps(out, log)
        # Set by ``budget`` (after the export): what the evaluations and rollouts generate per turn, and
        # what an evaluated episode generates in all.
        self.turn_tokens: int = config.student.max_new_tokens or 0
        self.episode_tokens: int = config.student.episode_tokens or 0
        self.turn_calls: int | None = config.student.turn_calls

    # Each step returns its result; what later steps need is read back from the step directories.

    def catalog(self) -> StepResult:
        plan = self.config.catalog

        def work(folder: Path) -> dict:
            from arena.taskpack.build import build_catalog

            build_catalog(folder / "catalog", synthetic=plan.products, seed=plan.seed)
            return {"products": plan.products}

        from arena.shop.index import INDEX_FORMAT

        # The index format is an input: a catalog cached by an older build would not open.
        return self.steps.run("catalog", step_key("catalog", plan.model_dump(), INDEX_FORMAT), work)

    @property
    def catalog_dir(self) -> Path:
        return self.steps.dir("catalog") / "catalog"

    def suite(self, catalog: StepResult) -> StepResult:
        plan = self.config.suite

        def work(folder: Path) -> dict:
            from arena.generator.generate import GeneratorConfig, generate, write_knowledge, write_problems
            from arena.problems.partitions import PartitionPlan
            from arena.problems.suites import build_suite
            from arena.shop.index import CatalogIndex

            generated = generate(
                CatalogIndex(self.catalog_dir), GeneratorConfig(n=plan.problems, seed=plan.seed, variants=plan.variants)
            )
            write_problems(generated.problems, folder / "problems.jsonl")
            if generated.documents:
                write_knowledge(generated.documents, folder / "knowledge")
            build_suite(
                generated.problems,
                folder / "suite",
                seed=f"experiment-{plan.seed}",
                plan=PartitionPlan(
                    public=0, heldout_fraction=plan.heldout_fraction, train_fraction=plan.train_fraction
                ),
                sources=[folder / "problems.jsonl"],
            )
            heldout, train, _ = _partitions(self.config, folder / "suite")
            write_problems(train, folder / "train.jsonl")
            return {
                "generated": len(generated.problems),
                "heldout": len(heldout),
                "heldout_clusters": len({p.cluster_id for p in heldout}),
                "heldout_by_intent": dict(sorted(Counter(p.intent.value for p in heldout).items())),
                "train": len(train),
            }

        return self.steps.run("suite", step_key("suite", catalog.key, plan.model_dump()), work)

    @property
    def suite_dir(self) -> Path:
        return self.steps.dir("suite") / "suite"

    def knowledge(self):
        from arena.shop.knowledge import knowledge_for_catalog

        folder = self.steps.dir("suite") / "knowledge"
        return knowledge_for_catalog(self.catalog_dir, folder if folder.is_dir() else None)

    def arena(self, suite: StepResult) -> StepResult:
        """The reference agents race the train pool with the offline policy, sandboxed; the rules judge
        judges every episode; episodes and judgments go to the store as in the race (``arena_store``),
        which the corpus export reads. The records stay beside it as JSONL for reading."""
        plan = self.config.arena

        def work(folder: Path) -> dict:
            from arena.agents import agent_path
            from arena.policy.chat_format import MODEL_ID
            from arena.policy.upstream import registry_for
            from arena.runner.batch import run_batch
            from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
            from arena.runner.record import EpisodeLimits
            from arena.shop.index import CatalogIndex
            from judge.batch import judge_batch
            from judge.factory import open_judge
            from judge.settings import JudgeSettings

            _, train, _ = _partitions(self.config, self.suite_dir)
            registry = registry_for(MODEL_ID, seed=self.config.seed)
            runner = EpisodeRunner(
                CatalogIndex(self.catalog_dir),
                registry,
                RunnerConfig(limits=EpisodeLimits(wall_s=plan.wall_s), sandbox=True, allowlist=[MODEL_ID]),
                knowledge=self.knowledge(),
            )
            summary: dict[str, Any] = {}
            runs: list[arena_store.AgentEpisodes] = []

            async def go():
                records = []
                try:
                    for agent in plan.agents:
                        done, batch = await run_batch(
                            runner, AgentSource.from_path(agent_path(agent)), train, model=MODEL_ID,
                            samples=plan.samples, concurrency=plan.concurrency, out=folder / f"{agent}.jsonl",
                        )  # fmt: skip
                        # run_batch returns episodes as they finish, which follows the machine's load; the
                        # store's ids, and through them the export's row order, duplicate choice and agent
                        # cap, must follow the problems alone.
                        done = sorted(done, key=lambda r: (r.problem.id, r.attempt))
                        records += done
                        runs.append(arena_store.AgentEpisodes(agent, agent_path(agent).read_bytes(), done))
                        summary[agent] = {
                            "episodes": len(done),
                            "successes": sum(bool((r.outcome or {}).get("success")) for r in done),
                        }
                    judge = open_judge(JudgeSettings(), "rules")  # the experiment is judged offline
                    outcomes = await judge_batch(judge, records)
                    await judge.aclose()
                    return outcomes
                finally:
                    await registry.aclose()

            outcomes = asyncio.run(go())
            with (folder / "judgments.jsonl").open("w", encoding="utf-8") as handle:
                for outcome in outcomes:
                    handle.write(json.dumps(outcome.line(), ensure_ascii=False) + "\n")
            from arena.store.db import safe_url

            stored = arena_store.store_race(self.store_url, self.suite_dir, runs, outcomes)
            self.log(
                f"[arena] stored {stored['episodes']} episodes as cycle {stored['cycle']} in {safe_url(self.store_url)}"
            )
            return {"agents": summary, "judged": len(outcomes), "store": stored}

        # "stored": an arena step cached before episodes went to the store has no "store" result to export from.
        return self.steps.run(
            "arena", step_key("arena", suite.key, plan.model_dump(), self.config.seed, "stored"), work
        )

    def export(self, arena: StepResult, student: Path) -> StepResult:
        plan = self.config.export
        template_sha = _file_sha(self._template())

        def work(folder: Path) -> dict:
            from arena.store import open_store
            from distill.export import run_export
            from distill.export_model import ExportConfig, GateConfig
            from distill.importers import store_items

            stored = arena.result["store"]
            store = open_store(self.store_url)
            config = ExportConfig(
                out=folder / "corpus",
                eval_fraction=0.0,
                max_agent_share=plan.max_agent_share,
                gates=GateConfig(
                    min_coefficient=plan.min_coefficient,
                    max_tokens=plan.max_tokens,
                    tokenizer=student / "tokenizer.json",
                    template=self._template(),
                ),
            )
            try:
                items = store_items(store, cycles=(stored["cycle"], stored["cycle"]), suites=[stored["suite_id"]])
                summary = run_export(items, config)
            finally:
                store.dispose()
            return {"funnel": summary.funnel.model_dump()}

        return self.steps.run("export", step_key("export", arena.key, plan.model_dump(), template_sha), work)

    @property
    def store_url(self) -> str:
        return self.config.arena.store or arena_store.default_url(self.steps.dir("arena"))

    @property
    def corpus_dir(self) -> Path:
        return self.steps.dir("export") / "corpus"

    def leak(self, suite: StepResult, export: StepResult) -> StepResult:
        def work(folder: Path) -> dict:
            from distill.experiment.leak import corpus_problem_ids, leak_check

            heldout, _, known = _partitions(self.config, self.suite_dir)
            # kto.jsonl is cut from the train rows (per-step prompt/completion, no metadata): checked through them.
            files = [self.corpus_dir / f"{name}.jsonl" for name in ("train", "eval", "subtask", "teacher")]
            used = corpus_problem_ids(files)
            return {"verdict": leak_check(heldout, known, used), "corpus_problems": len(used)}

        return self.steps.run("leak", step_key("leak", suite.key, export.key), work)

    def budget(self, export: StepResult, student: Path) -> StepResult:
        """The tokens a generated turn may take, and an evaluated episode with all its turns: the
        config's, or the longest assistant turn (and episode) the student trains on (train split,
        student tokens, end of turn included) plus a margin. And the tool calls a turn may make: the
        config's, or the most one assistant turn of the train split makes."""

        def work(folder: Path) -> dict:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(student)
            rows = assistant_turn_tokens(tokenizer, self.corpus_dir / "train.jsonl")
            turns = sorted(length for row in rows for length in row)
            return {
                "turns": len(turns),
                "median": turns[len(turns) // 2] if turns else 0,
                "longest": max(turns, default=0),
                "longest_episode": max((sum(row) for row in rows), default=0),
                "calls": max(assistant_turn_calls(self.corpus_dir / "train.jsonl"), default=0),
            }

        # "episodes", "calls": the fields the result gained; a result cached before them lacks them.
        result = self.steps.run(
            "budget", step_key("budget", export.key, _file_sha(self._template()), "episodes", "calls"), work
        )
        found = result.result
        student_plan = self.config.student
        configured = student_plan.max_new_tokens
        self.turn_tokens = configured if configured is not None else max(found["longest"] + TURN_MARGIN, 64)
        episode = student_plan.episode_tokens
        # Never below one turn's budget: a first turn must be able to take what any turn may.
        self.episode_tokens = max(
            episode if episode is not None else found["longest_episode"] + TURN_MARGIN, self.turn_tokens
        )
        self.log(
            f"[budget] {self.turn_tokens} new tokens a turn (train turns: median {found['median']}, "
            f"longest {found['longest']}{'' if configured is None else '; set by the config'}), "
            f"{self.episode_tokens} an episode (longest train episode {found['longest_episode']}"
            f"{'' if episode is None else '; set by the config'})"
        )
        if student_plan.turn_calls is None:
            # No train turn calls a tool (a corpus without one): nothing to derive a bound from.
            self.turn_calls = found["calls"] or None
        self.log(
            f"[budget] {self.turn_calls or 'any number of'} tool calls a turn (most in one train turn: "
            f"{found['calls']}{'' if student_plan.turn_calls is None else '; set by the config'})"
        )
        return result

    @staticmethod
    def _template() -> Path:
        from distill.student import TEMPLATE

        return TEMPLATE

    def evaluate(
        self,
        row: str,
        checkpoint: Path,
        key: str,
        *,
        sampled: bool = False,
        on: str = "eval",
        problems: list[Problem] | None = None,
        catalog_dir: Path | None = None,
    ) -> StepResult:
        """One row on the held-out problems (or on ``problems``, solved on ``catalog_dir``, as step
        ``ON-ROW``): greedy ASR (and, when ``sampled``, pass@1 / pass@k)."""
        plan = self.config.eval
        samples = plan.sampled.k if sampled and plan.sampled else 0
        temperature = plan.sampled.temperature if sampled and plan.sampled else 0.7
        name = f"{'sampled' if sampled else on}-{row}"
        chosen = [p.id for p in problems] if problems is not None else None

        def work(folder: Path) -> dict:
            from arena.shop.knowledge import knowledge_for_catalog
            from distill.eval_results import ProblemResult
            from distill.evaluate import EvalSettings
            from distill.evaluate import evaluate as run_eval

            heldout = problems if problems is not None else _partitions(self.config, self.suite_dir)[0]
            catalog = catalog_dir or self.catalog_dir
            metrics = serve_and_evaluate(
                checkpoint,
                f"{self.config.model}-{row}",
                heldout,
                catalog,
                self.knowledge() if catalog_dir is None else knowledge_for_catalog(catalog),
                folder,
                run_eval,
                EvalSettings(
                    model=f"{self.config.model}-{row}",
                    samples=samples,
                    temperature=temperature,
                    mode=plan.mode,
                    concurrency=plan.concurrency,
                    seed=self.config.seed,
                    label=row,
                ),  # fmt: skip
                llm_calls=plan.llm_calls,
                wall_s=plan.wall_s,
                call_timeout_s=plan.llm_call_timeout_s,
                max_new_tokens=self.turn_tokens,
                episode_tokens=self.episode_tokens,
                turn_calls=self.turn_calls,
                backend=plan.backend,
                gguf_type=plan.gguf_type,
                n_ctx=plan.n_ctx,
                on_done=episode_progress(self.log, name, len(heldout) * (1 + samples)),
            )
            results = [ProblemResult.model_validate_json(line) for line in (folder / "problems.jsonl").open()]
            stats = episode_stats([row["record"] for row in _records(folder / "records.jsonl")])
            self.log(
                f"[{name}] ASR {metrics.asr:.1%} on {metrics.n_problems} problems; "
                f"{stats['tokens_per_episode']:.0f} tokens per episode; first turns calling a tool "
                f"{stats['first_turn_tool_calls']:.0%} (executed {stats['first_turn_executed']:.0%})"
            )
            return {
                "metrics": metrics.model_dump(mode="json"),
                "greedy": {r.id: r.greedy for r in results},
                "successes": {r.id: r.successes for r in results},
                "stats": stats,
            }

        budget = (self.turn_tokens, self.episode_tokens, self.turn_calls)
        return self.steps.run(name, step_key(name, key, plan.model_dump(), *budget, chosen), work)

    def train(self, stage: StagePlan, start: Path, start_key: str, export: StepResult) -> StepResult:
        controlled = self._controlled(stage)

        def work(folder: Path) -> dict:
            from distill.experiment.controls import ControlError
            from distill.train.stages import run_stage

            try:
                control = self._format_control_file(stage, controlled, start, folder) if controlled else None
            except ControlError as exc:
                raise ExperimentError(f"train-{stage.name}: {exc}") from None
            if stage.kind == "firehose-sft":
                self._firehose_file(folder)
            config = stage_config(
                stage, start=start, data=self.corpus_dir, output=folder, catalog=self.catalog_dir,
                problems=self.steps.dir("suite") / "train.jsonl", seed=self.config.seed,
                turn_tokens=self.turn_tokens, turn_calls=self.turn_calls,
            )  # fmt: skip
            report = run_stage(config)
            self.log(
                f"[train-{stage.name}] {report.examples} examples, {report.steps} steps, loss "
                f"{report.first_loss} -> {report.last_loss}, {report.seconds:.0f} s"
            )
            return {"report": report.model_dump(mode="json"), **({"format_control": control} if control else {})}

        name = f"train-{stage.name}"
        matched = controlled.model_dump() if controlled else None
        # A stage that samples rollouts generates under the evaluation's budget; one that does not, doesn't read it.
        rollouts = [(self.turn_tokens, self.turn_calls)] if stage.kind in ("rft", "grpo") else []
        return self.steps.run(name, step_key(name, start_key, export.key, stage.model_dump(), matched, *rollouts), work)

    def official_pack(self) -> StepResult:
        """The official test tasks: the first ``per_intent`` usable tasks of each file, and a task-pack
        catalog built from them (gold products rebuilt, distractors, background, knowledge pages)."""
        plan = self.config.official_tasks
        assert plan is not None

        def work(folder: Path) -> dict:
            from arena.taskpack.build import build_catalog
            from arena.taskpack.pack import SUMMARY
            from distill.experiment.controls import ControlError, official_files, official_problems

            try:
                files = official_files(plan.tasks)
            except ControlError as exc:
                raise ExperimentError(str(exc)) from None
            heads = []
            for path in files:
                # Twice the tasks needed: a conflicting one (not solvable in the pack) is passed over.
                lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
                head = folder / "tasks" / path.name
                head.parent.mkdir(parents=True, exist_ok=True)
                head.write_text("\n".join(lines[: 2 * plan.per_intent]) + "\n", encoding="utf-8")
                heads.append(head)
            build_catalog(folder / "catalog", tasks=heads, background=plan.background, seed=plan.seed)
            summary = json.loads((folder / "catalog" / SUMMARY).read_text())
            unusable = {c["task_id"] for c in summary.get("conflicts", [])}
            problems = official_problems(heads, plan.per_intent, unusable)
            (folder / "problems.jsonl").write_text(
                "".join(p.model_dump_json() + "\n" for p in problems), encoding="utf-8"
            )
            return {"problems": len(problems), "conflicts": len(unusable)}

        digests = [_file_sha(p) for p in sorted(plan.tasks.glob("synthesize_*_test.jsonl"))]
        return self.steps.run("official", step_key("official", plan.model_dump(), digests), work)

    @property
    def official_catalog(self) -> Path:
        return self.steps.dir("official") / "catalog"

    def _firehose_file(self, folder: Path) -> None:
        """``FOLDER/firehose.jsonl``: the train split and the sub-task firehose, one file."""
        from distill.experiment.controls import read_rows

        rows = read_rows(self.corpus_dir / "train.jsonl") + read_rows(self.corpus_dir / "subtask.jsonl")
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (folder / "firehose.jsonl").write_text(text, encoding="utf-8")

    def _controlled(self, stage: StagePlan) -> StagePlan | None:
        if stage.kind != "format-control":
            return None
        target = self.config.controlled(stage)
        return next(s for s in self.config.stages if s.name == target)

    def _format_control_file(self, stage: StagePlan, controlled: StagePlan, start: Path, folder: Path) -> dict:
        """``FOLDER/format_control.jsonl``: failed or judge-rejected rows of this run with the rendered
        tokens of the controlled stage's train file (each row counted up to the stage's max_length)."""
        from transformers import AutoTokenizer

        from distill.experiment.controls import failed_or_rejected, format_control_rows, read_rows
        from distill.student import apply_template

        tokenizer = AutoTokenizer.from_pretrained(start)
        apply_template(tokenizer)
        limit = int(controlled.settings.get("max_length") or 1024)

        def tokens_of(row: dict) -> int:
            ids = tokenizer.apply_chat_template(row["messages"], tools=row.get("tools") or None, tokenize=True)
            if isinstance(ids, dict) or hasattr(ids, "keys"):
                ids = ids["input_ids"]
            return min(len(ids), limit)

        target = sum(tokens_of(row) for row in read_rows(self.corpus_dir / "train.jsonl"))
        # Failed trajectories the judge passed are in train.jsonl (the gates do not ask for success), the
        # ones the judge or the format gate rejected in rejected.jsonl: the control reads both.
        candidates = read_rows(self.corpus_dir / "train.jsonl") + read_rows(self.corpus_dir / "rejected.jsonl")
        rows, tokens = format_control_rows(candidates, tokens_of, target, self.config.seed)
        path = folder / "format_control.jsonl"
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        self.log(f"[train-{stage.name}] format control: {len(rows)} rows, {tokens} tokens (target {target})")
        return {
            "controls": controlled.name, "candidates": sum(map(failed_or_rejected, candidates)), "examples": len(rows), "tokens": tokens,
            "target": target, "file": str(path),
        }  # fmt: skip


def stage_config(
    stage: StagePlan,
    *,
    start: Path,
    data: Path,
    output: Path,
    catalog: Path,
    problems: Path,
    seed: int,
    turn_tokens: int,
    turn_calls: int | None = None,
):
    """A configured stage as ``arena distill`` runs it (``distill.train.config.StageConfig``): the
    experiment's fixed choices (CPU, fp32 weights, no checkpoints), then the stage's settings, then
    where it reads and writes. ``subtask-sft`` is SFT on ``subtask.jsonl``."""
    from distill.train.config import StageName, resolve

    values: dict[str, Any] = {
        "report_to": "none",
        "use_cpu": True,
        "save_strategy": "no",
        "logging_steps": 1,
        "seed": seed,
        **stage.settings,
        "model": str(start),
        "data": str(data),
        "output": str(output),
        "dtype": "float32",
    }
    if stage.lora is not None:
        values["lora"] = stage.lora
    if stage.kind == "subtask-sft":
        values["train_file"] = "subtask.jsonl"
    if stage.kind == "firehose-sft":
        values["train_file"] = str(output / "firehose.jsonl")  # written by the step before training
    if stage.kind == "format-control":
        values["train_file"] = str(output / "format_control.jsonl")  # written by the step before training
    if stage.kind in ("rft", "grpo"):
        values["catalog"] = str(catalog)
        values["problems_file"] = str(problems)
    if stage.rollout is not None:
        values["rollout"] = {"max_new_tokens": turn_tokens, "turn_calls": turn_calls, **stage.rollout}
    kind: StageName = "sft" if stage.kind in ("subtask-sft", "firehose-sft", "format-control") else stage.kind  # type: ignore[assignment]
    return resolve(values, kind, f"stage {stage.name}")


def serve_and_evaluate(
    checkpoint: Path,
    served: str,
    problems: list[Problem],
    catalog_dir: Path,
    knowledge,
    out_dir: Path,
    run_eval,
    settings,
    *,
    llm_calls: int,
    wall_s: float,
    call_timeout_s: float,
    max_new_tokens: int,
    episode_tokens: int | None = None,
    turn_calls: int | None = None,
    backend: str = "transformers",
    gguf_type: Precision = "f32",
    n_ctx: int = 8192,
    on_done: Callable[[Any], None] | None = None,
):
    """The checkpoint behind the in-process OpenAI server, evaluated through the race's episode runner.

    With ``backend="llama.cpp"`` the checkpoint is exported as GGUF (``gguf_type``) into ``out_dir``
    first and served from there; the file goes once the evaluation is done (1 GB at f32)."""
    import httpx
    from transformers import AutoTokenizer

    from arena.runner.upstreams import Upstream, UpstreamRegistry
    from arena.shop.index import CatalogIndex
    from distill.serve import create_model_app
    from distill.student import apply_template

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    apply_template(tokenizer)  # the template file itself, whatever a stage saved: every row renders alike
    exported: Path | None = None
    if backend == "llama.cpp":
        from distill.gguf_export import export_gguf
        from distill.serve import LlamaCppBackend
        from distill.student import source_gguf

        source = source_gguf(out_dir / "source")
        exported = export_gguf(checkpoint, source, out_dir / f"student-{gguf_type}.gguf", precision=gguf_type)
        source.unlink()
        model = LlamaCppBackend(exported, tokenizer, n_ctx=n_ctx)
    else:
        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    app = create_model_app(
        model, tokenizer, served, max_new_tokens=max_new_tokens, max_batch=settings.concurrency, turn_calls=turn_calls
    )
    registry = UpstreamRegistry(
        [Upstream(name=STUDENT_SERVED, base_url=f"http://{STUDENT_SERVED}/v1", models=[served])],
        transports={STUDENT_SERVED: httpx.ASGITransport(app=app)},
    )
    limits = eval_limits(
        llm_calls=llm_calls, wall_s=wall_s, call_timeout_s=call_timeout_s, episode_tokens=episode_tokens
    )

    async def go():
        try:
            return await run_eval(
                CatalogIndex(catalog_dir),
                problems,
                registry,
                settings,
                out_dir,
                knowledge=knowledge,
                limits=limits,
                on_done=on_done,
            )
        finally:
            await registry.aclose()

    try:
        return asyncio.run(go())
    finally:
        if exported is not None:
            exported.unlink(missing_ok=True)


def eval_limits(*, llm_calls: int, wall_s: float, call_timeout_s: float, episode_tokens: int | None):
    """The bounds of one evaluated episode: its turns, its clock (generous, see EvalPlan) and, when
    given, the tokens it may generate in all (the proxy caps each call at what is left of them)."""
    from arena.runner.record import EpisodeLimits

    return EpisodeLimits(
        wall_s=wall_s, llm_calls=llm_calls, cpu_s=int(wall_s), llm_call_timeout_s=call_timeout_s,
        **({"completion_tokens": episode_tokens} if episode_tokens else {}),
    )  # fmt: skip


def episode_progress(log: Log, name: str, total: int) -> Callable[[Any], None]:
    """A callback for each finished episode of a step: ``[name] 40/400 episodes`` about ten times a step
    and at its end, so an evaluation that runs for an hour shows it is moving."""
    every = max(1, total // 10)
    done = 0

    def advance(_record: Any) -> None:
        nonlocal done
        done += 1
        if done % every == 0 or done == total:
            log(f"[{name}] {done}/{total} episodes")

    return advance


class LeakFound(ExperimentError):
    pass


def run_experiment(config: ExperimentConfig, out: Path, *, log: Log = print, materialise=None):
    """Every step in order (cached ones are read back); writes report.json/.md/.png into ``out``."""
    from distill.experiment.report import (
        FormatControl,
        Heldout,
        Report,
        add_sampled,
        make_row,
        plot,
        render_markdown,
        with_control_gain,
    )  # fmt: skip
    from distill.student import materialise as default_materialise

    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(config.model_dump_json(indent=2) + "\n")
    run = Experiment(config, out, log)
    catalog = run.catalog()
    suite = run.suite(catalog)
    if suite.result["heldout"] == 0 or suite.result["train"] == 0:
        raise ExperimentError(f"suite: {suite.result['heldout']} held-out and {suite.result['train']} train problems")
    arena = run.arena(suite)
    student = (materialise or default_materialise)(config.student.cache)
    student_key = step_key("student", json.loads((student / "student.json").read_text()))
    export = run.export(arena, student)
    run.budget(export, student)
    leak = run.leak(suite, export)
    verdict = leak.result["verdict"]
    heldout = Heldout(n=suite.result["heldout"], clusters=suite.result["heldout_clusters"], leak_check=verdict)

    evaluations = {"base": run.evaluate("base", student, student_key)}
    checkpoints: dict[str, tuple[Path, str]] = {"base": (student, student_key)}
    trained: dict[str, StepResult] = {}
    skipped: list[str] = []

    def spent() -> float:
        return sum(step.seconds for step in run.steps.done.values())

    if verdict != "ok":
        _write(
            out, Report(model=config.model, heldout=heldout, rows=[]), config, run, {}, [], None, render_markdown, plot
        )
        raise LeakFound(f"leak check failed: {verdict}")
    for stage in config.stages:
        if stage.optional and config.budget_s is not None and spent() > config.budget_s:
            log(f"[train-{stage.name}] skipped: {spent():.0f} s spent of a {config.budget_s:.0f} s budget")
            skipped.append(stage.name)
            continue
        if stage.start not in checkpoints:
            skipped.append(f"{stage.name} (its start {stage.start} was skipped)")
            continue
        start, start_key = checkpoints[stage.start]
        result = run.train(stage, start, start_key, export)
        trained[stage.name] = result
        checkpoints[stage.name] = (Path(result.result["report"]["model_out"]), result.key)
        evaluations[stage.name] = run.evaluate(stage.name, checkpoints[stage.name][0], result.key)

    base = evaluations["base"].result
    rows = {
        name: make_row(name, step.result, base, trained[name].result if name in trained else None)
        for name, step in evaluations.items()
    }
    control_row = config.format_control
    format_control = None
    if control_row is not None and control_row in evaluations:
        control = evaluations[control_row].result
        rows = {name: with_control_gain(row, evaluations[name].result, control) for name, row in rows.items()}
        format_control = FormatControl(row=control_row, **_pick(trained[control_row].result["format_control"]))
    inflation = None
    if config.leak_inflation is not None and config.leak_inflation.row in checkpoints:
        inflation = run_leak_inflation(run, config, checkpoints, evaluations)
    official = None
    if config.official_tasks is not None:
        official = run_official_tasks(run, config, checkpoints)
    best = None
    if config.eval.sampled is not None:
        plan = config.eval.sampled
        trained_rows = [name for name in rows if name != "base"]
        best = max(trained_rows, key=lambda name: rows[name].asr, default=None)
        chosen = plan.rows if plan.rows is not None else ["base", *([best] if best else [])]
        subset = None
        if plan.problems is not None:
            subset = _round_robin(_partitions(config, run.suite_dir)[0], plan.problems)
        for name in chosen:
            if name not in checkpoints:
                continue
            path, key = checkpoints[name]
            sampled = run.evaluate(name, path, key, sampled=True, problems=subset)
            rows[name] = add_sampled(rows[name], sampled.result, plan.k)
        best = None if plan.rows is not None else best
    report = Report(
        model=config.model, heldout=heldout, rows=list(rows.values()), precision=precision_entry(config, trained),
        format_control=format_control, leak_inflation=inflation, official_tasks=official,
    )  # fmt: skip
    _write(out, report, config, run, evaluations, skipped, best, render_markdown, plot)
    return report


def _pick(control: dict[str, Any]) -> dict[str, Any]:
    return {k: control[k] for k in ("controls", "candidates", "examples", "tokens", "target")}


def precision_entry(config: ExperimentConfig, trained: dict[str, StepResult]) -> dict[str, Any]:
    """The precision path of this run: every trained stage's (they share one on a machine) and what
    served the rows. Two runs of one config on one machine give one report only along one path."""
    import torch

    paths = [step.result["report"].get("precision_path") or {} for step in trained.values()]
    train = paths[0] if paths else {}
    differing = sorted({k for path in paths for k in path if path.get(k) != train.get(k)})
    serving = config.eval.backend + (f" {config.eval.gguf_type}" if config.eval.backend == "llama.cpp" else " float32")
    return {
        **{f"train_{k}": v for k, v in train.items()},
        **({"train_differs_in": ", ".join(differing)} if differing else {}),
        "serving": serving,
        "serving_threads": torch.get_num_threads(),
    }


def run_leak_inflation(run: Experiment, config: ExperimentConfig, checkpoints, evaluations) -> LeakInflation:
    """The row's checkpoint on leak-cluster mates of the problems its corpus trained on."""
    from distill.experiment.controls import leak_mates
    from distill.experiment.leak import corpus_problem_ids
    from distill.experiment.report import leak_inflation

    plan = config.leak_inflation
    assert plan is not None
    heldout, _, known = _partitions(config, run.suite_dir)
    trained = corpus_problem_ids([run.corpus_dir / "train.jsonl"])
    mates = leak_mates(heldout, known, trained, plan.problems)
    if not mates:
        raise ExperimentError("leak inflation: no problem shares a cluster with a trained one (suite.variants: 0?)")
    path, key = checkpoints[plan.row]
    scored = run.evaluate(plan.row, path, key, on="leak", problems=mates)
    return leak_inflation(plan.row, scored.result, evaluations[plan.row].result)


def run_official_tasks(run: Experiment, config: ExperimentConfig, checkpoints) -> OfficialTasks:
    from distill.experiment.report import OfficialTasks, official_row

    plan = config.official_tasks
    assert plan is not None
    pack = run.official_pack()
    problems = [Problem.model_validate(p) for p in _records(run.steps.dir("official") / "problems.jsonl")]
    scored = {}
    for row in plan.rows:
        path, key = checkpoints[row]
        scored[row] = run.evaluate(
            row, path, step_key(key, pack.key), on="official", problems=problems, catalog_dir=run.official_catalog
        ).result
    base = scored.get("base") or scored[plan.rows[0]]
    return OfficialTasks(
        n=len(problems),
        by_intent=dict(sorted(Counter(p.intent.value for p in problems).items())),
        catalog=f"task pack of the chosen tasks, {plan.background} background products, seed {plan.seed}",
        rows=[official_row(row, result, base) for row, result in scored.items()],
    )


def _write(out, report, config, run, evaluations, skipped, best, render_markdown, plot) -> None:
    (out / "report.json").write_text(report.json_text())
    if report.rows:
        plot(report, out / "report.png")
    extra = {
        "name": config.name,
        "mode": config.eval.mode,
        "episodes": {name: step.result["stats"] for name, step in evaluations.items()},
        "skipped": skipped,
        "best": best,
        "budget": {"turn": run.turn_tokens, "episode": run.episode_tokens, "calls": run.turn_calls},
        "steps": {name: (step.seconds, step.cached) for name, step in run.steps.done.items()},
    }
    (out / "report.md").write_text(render_markdown(report, extra))

"""The export run: trajectories in, corpus files out, with a verdict on every episode.

One pass streams the trajectories: the filter and the gates are decided per
trajectory, sub-task and rejected rows are written at once, and gated rows
are spooled to disk with only a small key kept in memory. The split needs
every gated row's cluster, agent and fingerprint before it can choose, so a
second pass over the spool routes each row to train, eval or rejected. Memory
therefore grows with the number of episodes by a few hundred bytes each, not
with their size.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable

from pydantic import BaseModel

from distill.card import write_card, write_extras
from distill.export_model import FILES, FORMATS, PROBLEMS_FILE, EpisodeVerdict, ExportConfig, ExportSummary, Funnel
from distill.gates import UNJUDGED, TokenCounter, gate_verdicts
from distill.importers import Item, Unreadable
from distill.schema import Trajectory, Verdict
from distill.split import (
    HELDOUT,
    cap_agents,
    cluster_of,
    digest,
    effective_share,
    eval_clusters,
    fingerprint,
)
from distill.structure import structural_verdicts


class ExportError(ValueError):
    pass


# The fix for unjudged episodes, the same for the store and for record files.
JUDGE_THEM = (
    "judge them first (`arena judge run --database-url URL` judges the store; for record files, "
    "`arena judge run --records FILE > judgments.jsonl` and export with `--judgments judgments.jsonl`), "
    "or export with --min-coefficient 0 to keep unjudged trajectories"
)


class _Key(BaseModel):
    """What the split needs of a spooled row, kept in memory instead of the row."""

    episode_id: str
    cluster: str
    agent: str
    fingerprint: str
    gated: bool  # False: spooled only for KTO (agentic, well-formed, under the coefficient threshold)


VerdictSink = Callable[[EpisodeVerdict], None]


def _kto_rows(trajectory: Trajectory, label: bool) -> Iterable[dict]:
    for position, message in enumerate(trajectory.messages):
        if message.get("role") == "assistant":
            yield {"prompt": trajectory.messages[:position], "completion": [message], "label": label}


class CorpusExport:
    def __init__(self, config: ExportConfig, *, on_verdict: VerdictSink | None = None) -> None:
        self.config = config
        self.counter = TokenCounter(config.gates.tokenizer)
        self.summary = ExportSummary(out=str(config.out), config=config, funnel=Funnel(), counter=self.counter.name)
        self.on_verdict = on_verdict or (lambda _verdict: None)
        config.out.mkdir(parents=True, exist_ok=True)
        self._spool_path = config.out / ".gated.spool.jsonl"
        self._files = {name: (config.out / f"{name}.jsonl").open("w", encoding="utf-8") for name in FILES}
        self._spool = self._spool_path.open("w", encoding="utf-8")
        self._keys: list[_Key] = []
        self._problem_rows: dict[str, dict] = {}  # problem id -> its row, for gated trajectories

    def _write(self, name: str, row: dict) -> None:
        self._files[name].write(json.dumps(row, ensure_ascii=False) + "\n")

    def _count(self, name: str, trajectory: Trajectory) -> None:
        per = self.summary.intents.setdefault(name, {})
        per[trajectory.metadata.intent] = per.get(trajectory.metadata.intent, 0) + 1

    def _emit(self, name: str, trajectory: Trajectory) -> None:
        self._write(name, trajectory.row())
        self._count(name, trajectory)
        meta = trajectory.metadata
        self.on_verdict(
            EpisodeVerdict(episode_id=meta.episode_id, destination=name, filter=meta.filter, gates=meta.gates)
        )

    def add(self, item: Item | Unreadable) -> None:
        funnel = self.summary.funnel
        if isinstance(item, Unreadable):
            funnel.unreadable += 1
            self.summary.unreadable.append(str(item))
            return
        trajectory, trace = item
        funnel.episodes += 1
        meta = trajectory.metadata
        excluded = self.config.selection.excludes(trajectory)
        if excluded is not None:
            funnel.outside_selection += 1
            reason = excluded.split(" ")[0] if excluded.startswith(("cycle", "suite", "started")) else excluded
            self.summary.excluded[reason] = self.summary.excluded.get(reason, 0) + 1
            return
        if meta.partition == HELDOUT:
            funnel.heldout += 1  # measured only by running a policy on it; never a row of any file
            return
        if meta.rule is not None:
            self.summary.rules.append(meta.rule)
        if meta.judge is not None:
            self.summary.coefficients.append(meta.judge.coefficient)
        meta.filter = structural_verdicts(trace, self.config.filter)
        if not trajectory.agentic:  # gates judge training material: a sub-task row is not, so it has none
            funnel.subtask += 1
            stage = next(name for name, v in meta.filter.items() if not v.passed)
            self.summary.stage_failures[stage] = self.summary.stage_failures.get(stage, 0) + 1
            self._emit("subtask", trajectory)
            return
        funnel.agentic += 1
        meta.gates = gate_verdicts(trajectory, self.config.gates, self.counter)
        if not trajectory.gated:
            gate = next(name for name, v in meta.gates.items() if not v.passed)
            if gate == "reasoning" and meta.gates[gate].reason == UNJUDGED:
                gate = UNJUDGED  # counted apart: its cause is a missing judgment, not a low coefficient
            self.summary.gate_failures[gate] = self.summary.gate_failures.get(gate, 0) + 1
            funnel.rejected += 1
            self._emit("rejected", trajectory)
            if meta.gates["format"].passed:
                self._spool_row(trajectory, gated=False)  # a negative example for KTO
            return
        funnel.gated += 1
        if trace.problem_row is not None:
            self._problem_rows.setdefault(meta.problem_id, trace.problem_row)
        self._spool_row(trajectory, gated=True)

    def _spool_row(self, trajectory: Trajectory, *, gated: bool) -> None:
        meta = trajectory.metadata
        self._keys.append(
            _Key(
                episode_id=meta.episode_id,
                cluster=cluster_of(trajectory),
                agent=meta.agent.sha256,
                fingerprint=fingerprint(trajectory),
                gated=gated,
            )
        )
        self._spool.write(json.dumps(trajectory.row(), ensure_ascii=False) + "\n")

    def _plan(self) -> tuple[set[str], dict[int, str]]:
        """Eval clusters, and spool position -> why that gated row is rejected (duplicate or over the cap)."""
        seed = self.config.seed
        reasons: dict[int, str] = {}
        first: dict[str, str] = {}
        # The duplicate kept is the first in a seeded order, so the choice does not depend on input order.
        for position in sorted(range(len(self._keys)), key=lambda i: digest(seed, "dup", self._keys[i].episode_id)):
            key = self._keys[position]
            if not key.gated:
                continue
            if key.fingerprint in first:
                reasons[position] = f"duplicate of episode {first[key.fingerprint]}"
            else:
                first[key.fingerprint] = key.episode_id
        kept = [i for i, k in enumerate(self._keys) if k.gated and i not in reasons]
        evals = eval_clusters((self._keys[i].cluster for i in kept), seed=seed, fraction=self.config.eval_fraction)
        train = [i for i in kept if self._keys[i].cluster not in evals]
        agents = Counter(self._keys[i].agent for i in train)
        share = effective_share(agents, self.config.max_agent_share)
        if share > self.config.max_agent_share:
            self.summary.warnings.append(
                f"only {len(agents)} agent version(s) reached train: the {self.config.max_agent_share:.0%} share cap "
                f"cannot hold for so few, so it binds at {share:.0%} (equal shares)"
            )
        cut = cap_agents([(i, self._keys[i].episode_id, self._keys[i].agent) for i in train], seed=seed,
                         max_share=self.config.max_agent_share)  # fmt: skip
        reasons.update(cut)
        return evals, reasons

    def finish(self) -> ExportSummary:
        self._spool.close()
        evals, reasons = self._plan()
        funnel = self.summary.funnel
        train_clusters: set[str] = set()
        train_problems: set[str] = set()
        eval_seen: set[str] = set()
        threshold = self.config.gates.min_coefficient
        with self._spool_path.open(encoding="utf-8") as spool:
            for position, line in enumerate(spool):
                key = self._keys[position]
                trajectory = Trajectory.model_validate_json(line)
                if key.cluster in evals:
                    if key.gated and position not in reasons:
                        funnel.eval += 1
                        eval_seen.add(key.cluster)
                        self._emit("eval", trajectory)
                    continue  # an eval cluster's rows never teach, not even as KTO negatives
                if not key.gated:
                    funnel.kto_rows += self._kto(trajectory, threshold)
                    continue
                if position in reasons:
                    gate = "duplicate" if reasons[position].startswith("duplicate") else "agent_share"
                    trajectory.metadata.gates[gate] = Verdict(passed=False, reason=reasons[position])
                    funnel.duplicates += gate == "duplicate"
                    funnel.capped += gate == "agent_share"
                    funnel.rejected += 1
                    self.summary.gate_failures[gate] = self.summary.gate_failures.get(gate, 0) + 1
                    self._emit("rejected", trajectory)
                    continue
                funnel.train += 1
                train_clusters.add(key.cluster)
                train_problems.add(trajectory.metadata.problem_id)
                agent = f"{trajectory.metadata.agent.name}@{trajectory.metadata.agent.sha256[:12]}"
                self.summary.agents[agent] = self.summary.agents.get(agent, 0) + 1
                self._emit("train", trajectory)
                funnel.kto_rows += self._kto(trajectory, threshold)
        self._spool_path.unlink()
        for handle in self._files.values():
            handle.close()
        self._write_problems(train_problems)
        self._drop_empty_files()
        overlap = train_clusters & eval_seen
        if overlap:  # cannot happen by construction; checked because a leak would void every eval figure
            raise ExportError(f"leak: cluster(s) {sorted(overlap)[:5]} in both train and eval")
        return self.summary

    def _write_problems(self, train_problems: set[str]) -> None:
        """The problems of the train split (never eval's, never held-out), one row each, for rft and grpo."""
        rows = [self._problem_rows[pid] for pid in sorted(train_problems) if pid in self._problem_rows]
        self.summary.train_problems = len(rows)
        if rows:
            with (self.config.out / PROBLEMS_FILE).open("w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

    def _drop_empty_files(self) -> None:
        """An empty JSONL split loads as an error (``datasets`` raises StopIteration), so it is not
        written; the card and the command say which files are empty and why."""
        funnel = self.summary.funnel
        for name in FILES:
            path = self.config.out / f"{name}.jsonl"
            if path.stat().st_size == 0:
                path.unlink()
                self.summary.empty.append(name)
        if funnel.train == 0:
            self.summary.warnings.append(f"train is empty: {self._why_no_train()}")
        elif unjudged := self.summary.gate_failures.get(UNJUDGED, 0):
            self.summary.warnings.append(f"{unjudged} agentic trajectories were rejected as unjudged: {JUDGE_THEM}")
        if funnel.eval == 0 and funnel.train > 0:
            self.summary.warnings.append(
                "eval is empty: the gated trajectories come from fewer than two leak clusters (or --eval-fraction 0)"
            )

    def _why_no_train(self) -> str:
        funnel, failures = self.summary.funnel, self.summary.gate_failures
        if funnel.episodes == 0:
            return "no episode was read"
        if funnel.agentic == 0:
            return f"none of {funnel.episodes} episode(s) is agentic (see subtask.jsonl and the card's stage table)"
        if funnel.gated == 0:
            worst = max(failures.items(), key=lambda kv: kv[1])[0] if failures else "a gate"
            if worst == UNJUDGED:
                return (
                    f"none of {funnel.agentic} agentic trajectories passed the gates: {failures[UNJUDGED]} are "
                    f"unjudged (no judge verdict, so no coefficient to gate on); {JUDGE_THEM}"
                )
            return f"none of {funnel.agentic} agentic trajectories passed the gates (most failed {worst!r})"
        if funnel.capped or funnel.duplicates:
            return f"the {funnel.gated} gated trajectories were duplicates ({funnel.duplicates}) or capped ({funnel.capped})"
        return f"the {funnel.gated} gated trajectories all fell in eval clusters"

    def _kto(self, trajectory: Trajectory, threshold: float) -> int:
        meta = trajectory.metadata
        label = bool(meta.success) and meta.judge is not None and meta.judge.coefficient >= threshold
        if meta.judge is None and threshold == 0:
            label = bool(meta.success)
        rows = 0
        for row in _kto_rows(trajectory, label):
            self._write("kto", row)
            rows += 1
        return rows


def run_export(
    items: Iterable[Item | Unreadable], config: ExportConfig, *, on_verdict: VerdictSink | None = None
) -> ExportSummary:
    """Run the whole export: filter, gate, split, write the files, the extras and the dataset card."""
    unknown = sorted(set(config.formats) - set(FORMATS))
    if unknown:
        raise ExportError(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    export = CorpusExport(config, on_verdict=on_verdict)
    for item in items:
        export.add(item)
    summary = export.finish()
    summary.extras = write_extras(config.out, config.formats)
    write_card(config.out, summary)
    return summary

"""The race's knobs: one group of settings, every field with its default and meaning.

The ``race`` group of the settings (``[race]`` in TOML, ``ARENA_RACE__*`` in
the environment); ``--race-config`` names a TOML file read by
``load_race_settings`` instead (its ``[race]`` table, or its top level).
Defaults are for a production validator (a 24 h cycle); a local race shortens
the cycle to seconds and the draw to a handful of problems.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arena.config_file import load_config_file
from arena.duration import Duration
from arena.runner.settings import RunnerSettings, SamplingPin, Upstream
from arena.shop.settings import CatalogSettings
from judge.settings import JudgeSettings

POLICY_MODEL = "heuristic-policy"  # the built-in offline policy (arena.policy.server)


class RaceSettings(BaseModel):
    """Everything a cycle needs to know besides the store, the chain and the catalog."""

    model_config = ConfigDict(extra="forbid")

    # --- the cycle ---------------------------------------------------------------------------------
    cycle_length: Duration = Field(
        timedelta(hours=24),
        description="Time between the starts of two cycles (`run_forever` waits this long after a cycle began). "
        "Seconds or an ISO 8601 duration; a local run uses seconds.",
    )
    suite_dir: Path | None = Field(
        None,
        description="The suite directory this validator races (its ledger records each cycle's reveal and "
        "retirement); imported into the store at start.",
    )
    # --- qualifying ----------------------------------------------------------------------------------
    qualifying_size: int = Field(
        30, ge=1, description="Public-suite problems a new submission runs (the first N in problem id order)."
    )
    qualifying_attempts: int = Field(1, ge=1, description="Attempts per qualifying problem.")
    qualification_fraction: float = Field(
        0.95,
        ge=0.0,
        le=1.0,
        description="A new submission races when its qualifying score is at least this fraction of the leader's "
        "(the best qualifying score among this cycle's entrants and the champion).",
    )
    # --- the race ----------------------------------------------------------------------------------
    draw_size: int = Field(20, ge=1, description="Problems drawn from the race bank per cycle (one per leak cluster).")
    attempts: int = Field(2, ge=1, description="Attempts K per race problem and racer.")
    # --- promotion ---------------------------------------------------------------------------------
    promotion_margin: float = Field(
        0.05, ge=0.0, description="Race-score lead a challenger needs over the champion on the champion's first day."
    )
    margin_decay_per_day: float = Field(
        0.005, ge=0.0, description="How much the needed lead shrinks per whole day of the champion's reign."
    )
    margin_floor: float = Field(0.0, ge=0.0, description="The needed lead never drops below this.")
    confidence: float = Field(
        0.95,
        gt=0.5,
        lt=1.0,
        description="Confidence of the race's paired decisions (one-sided paired bootstrap over problems, seeded "
        "by the cycle's draw): a challenger is promoted, a first champion crowned, an entrant dropped in "
        "qualifying only when the evidence clears its bar at this confidence.",
    )
    # --- weights -----------------------------------------------------------------------------------
    champion_share: float = Field(0.8, ge=0.0, le=1.0, description="Weight share of the champion's hotkey.")
    taper: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="The other finishers share the rest, each getting `taper` times the share of the one ranked "
        "above it.",
    )
    burn_share: float = Field(0.0, ge=0.0, le=1.0, description="Weight share set on the burn uid.")
    burn_uid: int = Field(
        0,
        ge=0,
        description="The uid that gets `burn_share` and every share nobody earned (the subnet owner's; on the "
        "local chain the first hotkey registered, which the demo makes an owner hotkey).",
    )
    weights_interval: timedelta = Field(
        timedelta(hours=1),
        description="How often `run_forever` re-sends the last weight vector a good cycle decided, between cycles "
        "and while cycles halt, so the validator keeps its standing on chain. Seconds or ISO 8601.",
    )
    # --- embargo (the API serves a source once it ends; see arena.race.embargo) ---------------------
    embargo_cycles_after_champion: int = Field(
        2, ge=0, description="A former champion's source stays private until this many cycles after its dethroning."
    )
    embargo_days_after_submission: float = Field(
        7.0, ge=0.0, description="Any other submission's source stays private this many days after submission."
    )
    # --- judging -----------------------------------------------------------------------------------
    judge_kind: Literal["rules", "openai"] = Field(
        "rules", description="The race's judge: the offline rules judge, or the LLM judge of the [judge] settings."
    )
    judge_timeout_s: float = Field(
        600.0,
        ge=0.0,
        description="How long a stage waits for pending judgments before excluding those episodes from the score.",
    )
    judge_attempts: int = Field(
        5, ge=1, description="Tries of one judge job before it waits for the stage to re-queue."
    )
    # --- validator faults (arena.race.halt) ---------------------------------------------------------
    fault_halt_fraction: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="A stage halts the cycle when validator-side failures hit at least this fraction of its "
        "submissions (and at least two), or hit the canary: the validator cannot measure, so it decides nothing.",
    )
    # --- episodes and workers ----------------------------------------------------------------------
    episode_attempts: int = Field(
        3, ge=1, description="Validator-side failures (not agent failures) before an episode is given up as failed."
    )
    episodes_timeout_s: float = Field(
        6 * 3600.0,
        gt=0.0,
        description="How long a stage waits for its episodes, from the first one scheduled. Past it, every episode "
        "still unfinished is given up as failed (charged to its submission when others finished; the validator's "
        "when none did), so no episode can hold a cycle open. Size it to the stage: episodes x wall_s / workers.",
    )
    store_refusals: int = Field(
        3,
        ge=1,
        description="Times the store may refuse a finished episode's result (not for an outage: those are waited "
        "out) before it is given up as failed. A refusal of the record's own content (a data error) is final "
        "at once and charged to the submission; any other is the validator's.",
    )
    lease_s: float = Field(
        120.0,
        gt=0.0,
        description="An episode's claim lasts this long and is renewed every third of it while the episode runs; "
        "a worker that vanished without a trace (no heartbeat row either) has its episode retried once it lapses.",
    )
    workers: int = Field(
        2,
        ge=0,
        description="Episodes this validator process runs at once (in-process workers). With PostgreSQL, 0 leaves "
        "all episodes to `arena worker` processes; SQLite needs at least 1.",
    )
    stalled_worker_s: float = Field(
        30.0,
        gt=0.0,
        description="A worker without a heartbeat this long is dead: the dispatcher releases its episode leases at "
        "once, queues its jobs afresh and deletes its worker row.",
    )
    job_poll_s: float | None = Field(
        None,
        gt=0.0,
        description="How often an idle worker looks for jobs besides the queue's notifications "
        "(default: twice poll_s, at most 5 s).",
    )
    housekeeping_s: float = Field(
        60.0,
        gt=0.0,
        description="How often a worker sweeps away episode folders of dead runners and stores held results "
        "(also once at start).",
    )
    held_results_dir: Path | None = Field(
        None,
        description="Where a worker keeps finished episode results the store cannot take yet, until it can "
        "(default ~/.local/state/trajectory-arena/held-results).",
    )
    poll_s: float = Field(1.0, gt=0.0, description="How often a waiting stage looks at the store.")
    # --- the model the agents use ------------------------------------------------------------------
    model: str = Field(POLICY_MODEL, description="The model name agents are told to use (the proxy's allowlist).")
    upstreams: list[Upstream] = Field(
        default_factory=list,
        description="OpenAI-compatible servers for `model` (vLLM); empty: the built-in offline policy in-process.",
    )
    policy_seed: int = Field(0, description="Seed of the built-in offline policy.")
    pin_temperature: float | None = Field(
        0.0, description="Temperature forced on every inference call (reproducible races); None leaves the agent's."
    )
    pin_seed: int | None = Field(
        0, description="Sampling seed forced on every inference call; None leaves the agent's."
    )
    sandbox: bool = Field(True, description="Run agents in bubblewrap (False only for development).")
    # --- chain -------------------------------------------------------------------------------------
    netuid: int = Field(15, ge=1, description="The subnet's id.")
    validator_hotkey: str = Field(
        "local-validator",
        description="The hotkey weights are set for on the local chain (a real chain uses the wallet's hotkey).",
    )

    @model_validator(mode="after")
    def _shares_fit(self) -> RaceSettings:
        if self.champion_share + self.burn_share > 1.0 + 1e-9:
            raise ValueError(
                f"champion_share ({self.champion_share}) + burn_share ({self.burn_share}) must not exceed 1"
            )
        return self

    @property
    def pin(self) -> SamplingPin | None:
        if self.pin_temperature is None and self.pin_seed is None:
            return None
        return SamplingPin(temperature=self.pin_temperature, seed=self.pin_seed)


def load_race_settings(path: str | Path) -> RaceSettings:
    """RaceSettings from a TOML file: its ``[race]`` table, or its top level when it has none."""
    return load_config_file(path, RaceSettings, "toml", "race settings", table="race")


class ValidatorSettings(Protocol):
    """The settings groups a validator reads. ``ArenaSettings`` has them; the race takes them typed this way
    because it never imports the root settings, which assemble the groups of every floor above it too."""

    @property
    def race(self) -> RaceSettings: ...
    @property
    def judge(self) -> JudgeSettings: ...
    @property
    def runner(self) -> RunnerSettings: ...
    @property
    def catalog(self) -> CatalogSettings: ...

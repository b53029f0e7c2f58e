"""The race's pure rules: weights, ranking and promotion, the stage score with its exclusion rule,
the embargo, and the race settings (defaults, validation, files with errors that name them)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from arena.config_file import ConfigError
from arena.race.embargo import EmbargoRule, ReignFacts, day_rule_end, embargo_decision
from arena.race.promotion import Contender, Verdict, decide_promotion, rank_contenders, required_margin
from arena.race.settings import RaceSettings, load_race_settings
from arena.race.stage_scores import EXCLUDED_JUDGMENT_TIMEOUT, EXCLUDED_UNFINISHED, score_outcomes
from arena.race.weights import Finisher, compute_weights
from arena.store.judgments import EpisodeOutcome
from arena.store.models_race import EpisodeStatus, JudgmentStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


# --- weights --------------------------------------------------------------------------------------


def finishers(*hotkeys: str, champion: int = 0, scores: list[float] | None = None) -> list[Finisher]:
    scores = scores or [0.5] * len(hotkeys)
    return [
        Finisher(submission_id=i + 1, hotkey=h, rank=i + 1, race_score=scores[i], is_champion=i == champion)
        for i, h in enumerate(hotkeys)
    ]


def test_weights_give_the_champion_its_share_and_taper_the_rest():
    vector = compute_weights(
        finishers("a", "b", "c", "d"), {"a": 3, "b": 1, "c": 7, "d": 2}, champion_share=0.7, taper=0.5, burn_share=0.1
    )
    weights = dict(zip(vector.uids, vector.weights, strict=True))
    assert vector.uids == sorted(vector.uids)
    assert weights == pytest.approx({3: 0.7, 1: 0.2 * 4 / 7, 7: 0.2 * 2 / 7, 2: 0.2 / 7, 0: 0.1})
    assert math.fsum(vector.weights) == pytest.approx(1.0)


def test_weights_drop_unregistered_hotkeys_and_renormalise():
    vector = compute_weights(finishers("a", "gone", "c"), {"a": 4, "c": 5}, champion_share=0.8, taper=0.5, burn_share=0)
    assert vector.dropped == ["gone"]
    assert dict(zip(vector.uids, vector.weights, strict=True)) == pytest.approx({4: 0.8, 5: 0.2})


def test_weights_with_a_lone_champion_or_nobody_go_to_the_burn_uid():
    alone = compute_weights(finishers("a"), {"a": 4}, champion_share=0.8, taper=0.5, burn_share=0.25)
    assert dict(zip(alone.uids, alone.weights, strict=True)) == pytest.approx({4: 0.75, 0: 0.25})
    for burn_share in (0.0, 0.1):  # nobody earned anything: all of it to the burn uid, whatever its share
        nobody = compute_weights([], {}, champion_share=0.8, taper=0.5, burn_share=burn_share, burn_uid=9)
        assert (nobody.uids, nobody.weights) == ([9], [1.0])


def test_weights_go_only_to_positive_race_scores_and_the_rest_to_the_burn_uid():
    uid_of = {"a": 1, "b": 2, "c": 3}
    zeros = compute_weights(finishers("a", "b", "c", scores=[0.0, 0.0, 0.0]), uid_of, champion_share=0.8,
                            taper=0.5, burn_share=0.0, burn_uid=0)  # fmt: skip
    assert (zeros.uids, zeros.weights) == ([0], [1.0])  # an all-zero race pays nobody
    # A champion that scored 0 earns nothing; its share is burned, not handed to the runners-up.
    mixed = compute_weights(finishers("a", "b", "c", scores=[0.0, 0.4, 0.2]), uid_of, champion_share=0.8,
                            taper=0.5, burn_share=0.0)  # fmt: skip
    assert dict(zip(mixed.uids, mixed.weights, strict=True)) == pytest.approx({0: 0.8, 2: 0.2 * 2 / 3, 3: 0.2 / 3})
    dust = compute_weights(finishers("a", "b", scores=[0.5, 1e-12]), uid_of, champion_share=0.8, taper=0.5,
                           burn_share=0.0)  # fmt: skip
    assert dict(zip(dust.uids, dust.weights, strict=True)) == pytest.approx({1: 1.0})


def test_weights_are_the_same_whatever_the_input_order():
    uid_of = {"a": 1, "b": 2, "c": 3}
    one = compute_weights(finishers("a", "b", "c"), uid_of, champion_share=0.6, taper=0.3, burn_share=0.05)
    two = compute_weights(list(reversed(finishers("a", "b", "c"))), uid_of, champion_share=0.6, taper=0.3,
                          burn_share=0.05)  # fmt: skip
    assert one == two


# --- ranking and promotion ------------------------------------------------------------------------


def contender(submission_id: int, score: float, block: int | None, minutes: int = 0, values=None) -> Contender:
    return Contender(
        submission_id=submission_id,
        race_score=score,
        commitment_block=block,
        submitted_at=T0 + timedelta(minutes=minutes),
        values=values or {},
    )


def solved(count: int, of: int) -> dict[str, float]:
    """Per-problem values of an agent that solves the first ``count`` of ``of`` problems."""
    return {f"p{i:03d}": 1.0 if i < count else 0.0 for i in range(of)}


def test_ranking_breaks_ties_by_the_earlier_commitment():
    ranked = rank_contenders(
        [contender(1, 0.5, 30), contender(2, 0.5, 10), contender(3, 0.7, None), contender(4, 0.5, None)]
    )
    assert [c.submission_id for c in ranked] == [3, 2, 1, 4]


def test_the_margin_decays_by_day_to_its_floor():
    assert required_margin(0, 0.05, 0.01, 0.0) == 0.05
    assert required_margin(3, 0.05, 0.01, 0.0) == pytest.approx(0.02)
    assert required_margin(30, 0.05, 0.01, 0.005) == 0.005


def promote(champion: dict[str, float], challenger: dict[str, float], *, days: int = 0, seed: str = "0xabc"):
    mean = lambda v: sum(v.values()) / len(v)  # noqa: E731
    ranked = rank_contenders([contender(1, mean(champion), 1, values=champion),
                              contender(2, mean(challenger), 2, values=challenger)])  # fmt: skip
    return decide_promotion(ranked, 1, reign_days=days, promotion_margin=0.05, decay_per_day=0.01, floor=0.0, seed=seed)


def test_a_challenger_is_promoted_only_when_its_paired_lead_clears_the_margin_with_confidence():
    # 40 problems: the challenger solves every problem the champion does and 12 more.
    clear = promote(solved(10, 40), solved(22, 40))
    assert clear.promoted and clear.verdict is Verdict.promoted and clear.champion_id == 2
    assert clear.comparison.lower > clear.margin and clear.comparison.b_better == 0
    # A lead of 2 problems in 40 (0.05) cannot clear a 0.05 margin: the champion stays.
    small = promote(solved(10, 40), solved(12, 40))
    assert not small.promoted and small.champion_id == 1
    # A lead above the margin that the draw cannot confirm (6 problems) is undecided, never a promotion.
    noisy = promote(solved(2, 6), solved(4, 6))
    assert noisy.verdict is Verdict.undecided and noisy.champion_id == 1 and "undecided" in noisy.reason
    assert noisy.comparison.mean_difference > noisy.margin and noisy.comparison.lower <= noisy.margin
    assert promote(solved(20, 40), solved(5, 40)).verdict is Verdict.kept


def test_the_margin_that_shrinks_with_the_reign_is_the_bar_for_the_lower_bound():
    champion, challenger = solved(10, 60), solved(17, 60)  # + 7/60 = 0.117, paired with no losses
    day0 = promote(champion, challenger)
    later = promote(champion, challenger, days=5)  # margin 0.0
    assert later.margin == 0.0 and later.promoted
    assert day0.comparison.lower == later.comparison.lower  # the same evidence, a lower bar


def test_an_all_zero_race_crowns_nobody_and_a_first_champion_must_be_confidently_above_zero():
    zeros = rank_contenders([contender(5, 0.0, 1, values=solved(0, 6)), contender(6, 0.0, 2, values=solved(0, 6))])
    nobody = decide_promotion(zeros, None, reign_days=0, promotion_margin=0.05, decay_per_day=0.0, floor=0.0,
                              seed="0x1")  # fmt: skip
    assert nobody.champion_id is None and not nobody.promoted and nobody.verdict is Verdict.nobody
    lucky = rank_contenders([contender(5, 1 / 20, 1, values=solved(1, 20))])  # one success in 20: could be luck
    undecided = decide_promotion(lucky, None, reign_days=0, promotion_margin=0.05, decay_per_day=0.0, floor=0.0,
                                 seed="0x1")  # fmt: skip
    assert undecided.champion_id is None and undecided.verdict is Verdict.undecided and undecided.interval.lower <= 0
    good = rank_contenders([contender(5, 0.2, 3, values=solved(4, 20)), contender(6, 0.4, 9, values=solved(8, 20))])
    crowned = decide_promotion(good, None, reign_days=0, promotion_margin=0.05, decay_per_day=0.0, floor=0.0,
                               seed="0x1")  # fmt: skip
    assert (crowned.champion_id, crowned.promoted, crowned.verdict) == (6, True, Verdict.crowned)
    assert crowned.interval.lower > 0


def test_a_tie_between_positive_scores_goes_to_the_earlier_commitment():
    tied = rank_contenders([contender(7, 0.5, 9, values=solved(10, 20)), contender(8, 0.5, 3, values=solved(10, 20))])
    decision = decide_promotion(tied, None, reign_days=0, promotion_margin=0.05, decay_per_day=0.0, floor=0.0,
                                seed="0x1")  # fmt: skip
    assert decision.champion_id == 8


def test_two_validators_decide_identically_and_the_seed_is_the_draw():
    champion, challenger = solved(10, 30), {**solved(14, 30), "p000": 0.0}
    one, two = promote(champion, challenger, seed="0xfeed"), promote(dict(champion), dict(challenger), seed="0xfeed")
    assert one == two
    assert one.comparison.seed.startswith("0xfeed")


# --- the stage score ------------------------------------------------------------------------------


def outcome(episode_id, submission_id, status, success, judgment=None, coefficient=None) -> EpisodeOutcome:
    return EpisodeOutcome(
        episode_id=episode_id, submission_id=submission_id, problem_id=f"p{episode_id}", attempt=0,
        status=status, success=success, judgment=judgment, coefficient=coefficient,
    )  # fmt: skip


def test_score_is_success_times_coefficient_with_explicit_exclusions():
    done, failed, running = EpisodeStatus.done, EpisodeStatus.failed, EpisodeStatus.running
    judged, pending = JudgmentStatus.done, JudgmentStatus.pending
    outcomes = [
        outcome(1, 7, done, True, judged, 1.0),
        outcome(2, 7, done, True, judged, 0.5625),
        outcome(3, 7, done, False, pending),  # unsuccessful: counts 0 whatever the judge says
        outcome(4, 7, done, True, pending),  # successful, never judged: excluded by rule
        outcome(5, 7, failed, None),  # the validator gave up: counts 0
        outcome(6, 7, running, None),  # never finished: excluded
    ]
    scores, exclusions = score_outcomes(outcomes, [7, 8])
    mine = scores[7]
    assert mine.counted == 4 and mine.excluded == 2 and mine.failed == 1
    assert mine.score == pytest.approx((1.0 + 0.5625) / 4)
    assert mine.success_rate == pytest.approx(2 / 4)
    assert mine.mean_coefficient == pytest.approx((1.0 + 0.5625) / 2)
    assert [(e.episode_id, e.rule) for e in exclusions] == [(4, EXCLUDED_JUDGMENT_TIMEOUT), (6, EXCLUDED_UNFINISHED)]
    assert scores[8].counted == 0 and scores[8].score == 0.0  # raced nothing: 0, not an error


# --- embargo --------------------------------------------------------------------------------------


def test_embargo_by_days_for_those_who_never_reigned():
    rule = EmbargoRule(cycles_after_champion=2, days_after_submission=7)
    early = embargo_decision(9, T0, ReignFacts(), rule, T0 + timedelta(days=6))
    late = embargo_decision(9, T0, ReignFacts(), rule, T0 + timedelta(days=7))
    assert early.embargoed and early.until == T0 + timedelta(days=7) and not late.embargoed
    longer = T0 + timedelta(days=10)
    assert day_rule_end(T0, rule, longer) == longer and day_rule_end(T0, rule, T0) == T0 + timedelta(days=7)


def test_embargo_of_a_champion_runs_in_cycles_after_its_dethroning():
    rule = EmbargoRule(cycles_after_champion=2, days_after_submission=7)
    far = T0 + timedelta(days=365)
    reigning = embargo_decision(3, T0, ReignFacts(last_reign_cycle=4), rule, far)
    assert reigning.embargoed and reigning.until is None  # the day rule does not apply to a champion
    waiting = embargo_decision(3, T0, ReignFacts(last_reign_cycle=4, dethroned_cycle=5), rule, far)
    assert waiting.embargoed and waiting.until_cycle == 7
    ended_at = T0 + timedelta(days=20)
    over = embargo_decision(3, T0, ReignFacts(last_reign_cycle=4, dethroned_cycle=5, until_cycle_finished_at=ended_at),
                            rule, far)  # fmt: skip
    assert not over.embargoed and over.until == ended_at


# --- settings -------------------------------------------------------------------------------------


def test_race_settings_defaults_and_validation():
    race = RaceSettings()
    assert race.cycle_length == timedelta(hours=24) and race.qualification_fraction == 0.95
    assert race.pin is not None and (race.pin.temperature, race.pin.seed) == (0.0, 0)
    assert RaceSettings(pin_temperature=None, pin_seed=None).pin is None
    with pytest.raises(ValueError, match="champion_share"):
        RaceSettings(champion_share=0.9, burn_share=0.2)


def test_race_settings_files_are_read_and_bad_ones_named(tmp_path):
    good = tmp_path / "race.toml"
    good.write_text('[race]\ncycle_length = 90\ndraw_size = 4\nsuite_dir = "suites/v1"\n')
    race = load_race_settings(good)
    assert race.cycle_length == timedelta(seconds=90) and race.draw_size == 4 and str(race.suite_dir) == "suites/v1"
    bad = tmp_path / "bad.toml"
    bad.write_text("[race]\ndraw_size = 0\nsurprise = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_race_settings(bad)
    assert str(bad) in str(caught.value) and "draw_size" in str(caught.value) and "surprise" in str(caught.value)
    broken = tmp_path / "broken.toml"
    broken.write_text("[race\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_race_settings(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_race_settings(tmp_path / "missing.toml")


# --- the command's refusals -----------------------------------------------------------------------


def test_validator_command_names_what_is_missing(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from arena.commands.validator import app

    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    no_suite = CliRunner().invoke(app, ["run", "--once", "--local", "--database-url", url])
    assert no_suite.exit_code == 2 and "race.suite_dir is not set" in no_suite.stderr
    not_a_suite = CliRunner().invoke(app, ["run", "--once", "--local", "--database-url", url, "--suite", str(tmp_path)])
    assert not_a_suite.exit_code == 2 and "not a suite directory" in not_a_suite.stderr
    assert not (tmp_path / "arena.db").exists()  # a misconfiguration leaves no database behind
    bad = tmp_path / "race.toml"
    bad.write_text("[race]\nattempts = -1\n")
    bad_config = CliRunner().invoke(app, ["run", "--once", "--local", "--race-config", str(bad)])
    assert bad_config.exit_code == 2 and str(bad) in bad_config.stderr and "attempts" in bad_config.stderr


# --- validator faults and halts -------------------------------------------------------------------


def test_a_failure_the_canary_shared_is_excluded_and_one_the_submission_caused_counts_zero():
    from arena.race.stage_scores import EXCLUDED_VALIDATOR_FAULT, problem_values

    failed, done, judged = EpisodeStatus.failed, EpisodeStatus.done, JudgmentStatus.done
    outcomes = [
        outcome(1, 7, done, True, judged, 1.0),
        outcome(2, 7, failed, None).model_copy(update={"fault_kind": "sandbox", "fault_charged": False}),
        outcome(3, 7, failed, None).model_copy(update={"fault_kind": "runner", "fault_charged": True}),
    ]
    scores, exclusions = score_outcomes(outcomes, [7])
    assert [(e.episode_id, e.rule) for e in exclusions] == [(2, EXCLUDED_VALIDATOR_FAULT)]
    assert scores[7].counted == 2 and scores[7].score == pytest.approx(0.5) and scores[7].failed == 1
    assert problem_values(outcomes, 7) == {"p1": 1.0, "p3": 0.0}


def test_faults_halt_a_stage_when_the_canary_shares_them_or_they_hit_several_submissions():
    from arena.race.halt import FaultedEpisode, assess_episodes, threshold

    def fault(episode_id, submission_id, charged, kind="sandbox"):
        return FaultedEpisode(episode_id=episode_id, submission_id=submission_id, fault_kind=kind, charged=charged,
                              error="bwrap: setting up uid map: Permission denied")  # fmt: skip

    assert threshold(1, 0.5) == 2 and threshold(3, 0.5) == 2 and threshold(10, 0.5) == 5
    assert assess_episodes("race", [], [1, 2, 3], 0.5) is None
    # One submission's own failure, the canary clean: charged, nothing halts.
    assert assess_episodes("race", [fault(1, 1, True), fault(2, 1, True)], [1, 2, 3], 0.5) is None
    shared = assess_episodes("qualifying", [fault(1, 1, False)], [1], 0.5)
    assert shared is not None and shared.canary_failed and shared.kind == "sandbox" and "bubblewrap" in shared.fix
    spread = assess_episodes("race", [fault(1, 1, True, "upstream"), fault(2, 2, True, "upstream")], [1, 2, 3], 0.5)
    assert spread is not None and spread.submissions == [1, 2] and spread.kind == "upstream"
    assert assess_episodes("race", [fault(1, 1, True), fault(2, 2, True)], list(range(1, 11)), 0.5) is None


def test_a_judge_down_for_everyone_halts_but_one_unjudgeable_episode_is_excluded():
    from arena.race.halt import UnjudgedEpisode, assess_judgments
    from judge.verdict import JUDGE_OUTAGE

    own = [UnjudgedEpisode(episode_id=1, submission_id=1, reason="the judge's reply was not JSON")]
    assert assess_judgments("judging: race", own, [1, 2, 3], 0.5) is None
    down = [UnjudgedEpisode(episode_id=1, submission_id=1, reason=f"{JUDGE_OUTAGE}: connection refused")]
    halt = assess_judgments("judging: race", down, [1, 2, 3], 0.5)
    assert halt is not None and halt.kind == "judge" and halt.canary_failed


def test_the_last_good_weights_are_re_sent_every_interval_while_waiting(tmp_path):
    import threading

    from arena.race.validator_service import Validator

    class Instant(threading.Event):
        def wait(self, timeout=None):  # no sleeping: the test counts re-sends, not seconds
            return False

    sent: list[str] = []
    validator = Validator.__new__(Validator)
    validator.race = RaceSettings(weights_interval=timedelta(minutes=10))
    validator.resend_weights = lambda: sent.append("resent")
    assert validator.wait_resending(Instant(), 35 * 60) == 3 and len(sent) == 3


def test_the_evidence_rule_picks_the_right_agent_in_simulated_races_where_the_old_margin_rule_guesses():
    import random

    from benchmarks.race_power import one_race

    rng = random.Random(3)
    races = 25
    better = [one_race(0.30, 60, 2, rng, seed=f"0x{r:04x}") for r in range(races)]
    equal = [one_race(0.0, 20, 2, rng, seed=f"0x{r:04x}") for r in range(races)]
    assert sum(new for _, new in better) >= 0.9 * races  # a clearly better challenger wins
    assert sum(new for _, new in equal) <= 0.1 * races  # an equal one almost never takes the title
    assert sum(old for old, _ in equal) > sum(new for _, new in equal)  # where the fixed margin crowned luck

"""The race's pure rules: weights, ranking and promotion, the stage score with its exclusion rule,
the embargo, and the race settings (defaults, validation, files with errors that name them)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from arena.race.embargo import EmbargoRule, ReignFacts, day_rule_end, embargo_decision
from arena.race.promotion import Contender, decide_promotion, rank_contenders, required_margin
from arena.race.scoring import EXCLUDED_JUDGMENT_TIMEOUT, EXCLUDED_UNFINISHED, EpisodeOutcome, score_outcomes
from arena.race.settings import RaceSettings, RaceSettingsError, load_race_settings, race_settings
from arena.race.weights import Finisher, compute_weights
from arena.store.models_race import EpisodeStatus, JudgmentStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


# --- weights --------------------------------------------------------------------------------------


def finishers(*hotkeys: str, champion: int = 0) -> list[Finisher]:
    return [
        Finisher(submission_id=i + 1, hotkey=h, rank=i + 1, is_champion=i == champion) for i, h in enumerate(hotkeys)
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
    vector = compute_weights(finishers("a", "gone", "c"), {"a": 0, "c": 5}, champion_share=0.8, taper=0.5, burn_share=0)
    assert vector.dropped == ["gone"]
    assert dict(zip(vector.uids, vector.weights, strict=True)) == pytest.approx({0: 0.8, 5: 0.2})


def test_weights_with_a_lone_champion_or_nobody():
    alone = compute_weights(finishers("a"), {"a": 4}, champion_share=0.8, taper=0.5, burn_share=0.25)
    assert dict(zip(alone.uids, alone.weights, strict=True)) == pytest.approx({4: 0.75, 0: 0.25})
    nobody = compute_weights([], {}, champion_share=0.8, taper=0.5, burn_share=0.0)
    assert (nobody.uids, nobody.weights) == ([], [])
    burn_only = compute_weights([], {}, champion_share=0.8, taper=0.5, burn_share=0.1)
    assert (burn_only.uids, burn_only.weights) == ([0], [1.0])


def test_weights_are_the_same_whatever_the_input_order():
    uid_of = {"a": 1, "b": 2, "c": 3}
    one = compute_weights(finishers("a", "b", "c"), uid_of, champion_share=0.6, taper=0.3, burn_share=0.05)
    two = compute_weights(list(reversed(finishers("a", "b", "c"))), uid_of, champion_share=0.6, taper=0.3,
                          burn_share=0.05)  # fmt: skip
    assert one == two


# --- ranking and promotion ------------------------------------------------------------------------


def contender(submission_id: int, score: float, block: int | None, minutes: int = 0) -> Contender:
    return Contender(
        submission_id=submission_id,
        race_score=score,
        commitment_block=block,
        submitted_at=T0 + timedelta(minutes=minutes),
    )


def test_ranking_breaks_ties_by_the_earlier_commitment():
    ranked = rank_contenders(
        [contender(1, 0.5, 30), contender(2, 0.5, 10), contender(3, 0.7, None), contender(4, 0.5, None)]
    )
    assert [c.submission_id for c in ranked] == [3, 2, 1, 4]


def test_the_margin_decays_by_day_to_its_floor():
    assert required_margin(0, 0.05, 0.01, 0.0) == 0.05
    assert required_margin(3, 0.05, 0.01, 0.0) == pytest.approx(0.02)
    assert required_margin(30, 0.05, 0.01, 0.005) == 0.005


def promote(champion_score: float, challenger_score: float, *, days: int = 0, champion_block=1, challenger_block=2):
    ranked = rank_contenders(
        [contender(1, champion_score, champion_block), contender(2, challenger_score, challenger_block)]
    )
    return decide_promotion(ranked, 1, reign_days=days, promotion_margin=0.05, decay_per_day=0.01, floor=0.0)


def test_a_challenger_needs_the_margin_which_shrinks_with_the_reign():
    assert promote(0.60, 0.64).champion_id == 1  # within the day-0 margin of 0.05
    assert promote(0.60, 0.66).champion_id == 2 and promote(0.60, 0.66).promoted
    assert promote(0.60, 0.64, days=2).champion_id == 2  # the margin is now 0.03
    assert promote(0.60, 0.50).champion_id == 1


def test_an_exact_tie_with_the_margin_goes_to_the_earlier_commitment():
    assert promote(0.60, 0.65, challenger_block=2, champion_block=1).champion_id == 1
    won = promote(0.60, 0.65, challenger_block=0, champion_block=1)
    assert won.champion_id == 2 and "earlier commitment" in won.reason


def test_without_a_champion_the_best_racer_is_crowned():
    ranked = rank_contenders([contender(5, 0.2, 3), contender(6, 0.4, 9)])
    decision = decide_promotion(ranked, None, reign_days=0, promotion_margin=0.05, decay_per_day=0.0, floor=0.0)
    assert (decision.champion_id, decision.promoted) == (6, True)


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
    assert race_settings(object()) == RaceSettings()


def test_race_settings_files_are_read_and_bad_ones_named(tmp_path):
    good = tmp_path / "race.toml"
    good.write_text('[race]\ncycle_length = 90\ndraw_size = 4\nsuite_dir = "suites/v1"\n')
    race = load_race_settings(good)
    assert race.cycle_length == timedelta(seconds=90) and race.draw_size == 4 and str(race.suite_dir) == "suites/v1"
    bad = tmp_path / "bad.toml"
    bad.write_text("[race]\ndraw_size = 0\nsurprise = 1\n")
    with pytest.raises(RaceSettingsError) as caught:
        load_race_settings(bad)
    assert str(bad) in str(caught.value) and "draw_size" in str(caught.value) and "surprise" in str(caught.value)
    broken = tmp_path / "broken.toml"
    broken.write_text("[race\n")
    with pytest.raises(RaceSettingsError, match="not valid TOML"):
        load_race_settings(broken)
    with pytest.raises(RaceSettingsError, match="cannot read"):
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

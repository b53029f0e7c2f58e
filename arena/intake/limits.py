"""Every knob of submission intake, and the one time rule its checks share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field

from arena.duration import Duration

MINHASH_PERMUTATIONS = 256
COPY_BUDGET_WINDOW = timedelta(hours=24)
# bittensor.http_auth's DEFAULT_MAX_AGE and DEFAULT_ALLOWED_SKEW (tests/arena/intake/test_intake.py checks they still are):
# importing bittensor costs every `arena` command a second, and these settings are read by all of them.
AUTH_MAX_AGE_S = 10.0
AUTH_ALLOWED_SKEW_S = 2.0


class IntakeLimits(BaseModel):
    """Every intake knob, with the defaults the issue asks for."""

    max_bytes: int = Field(256 * 1024, ge=1, description="Largest accepted agent file.")
    minhash_threshold: float = Field(
        0.70, gt=0.0, le=1.0, description="Estimated Jaccard similarity at or above which a submission is a near copy."
    )
    minhash_permutations: int = Field(
        MINHASH_PERMUTATIONS, ge=16, description="MinHash size (estimate error ~ 1/sqrt(permutations))."
    )
    rate_limit: Duration = Field(
        timedelta(hours=12), description="Minimum time between accepted submissions of a hotkey."
    )
    copy_refusals_per_day: int = Field(
        3,
        ge=1,
        description="Submissions a hotkey may have refused as copies of another hotkey's per 24 h; then it gets "
        "429 copy_budget_exhausted until the oldest ages out (the copy check must be no free oracle).",
    )
    auth_max_age_s: float = Field(AUTH_MAX_AGE_S, gt=0, description="btauth nonce freshness window.")
    auth_allowed_skew_s: float = Field(AUTH_ALLOWED_SKEW_S, ge=0, description="Tolerated client clock drift.")
    near_copy_of_own: bool = Field(
        False,
        description="Also run the MinHash check against the submitter's own earlier submissions "
        "(off: a miner improving its own agent is not copying; exact and AST copies are always checked).",
    )


def aware(moment: datetime) -> datetime:
    """``moment`` as an aware datetime: the store's SQLite hands back naive UTC times, clocks aware ones,
    and intake compares the two (rate limit, copy disputes)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

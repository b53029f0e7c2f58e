"""The store's tables, and the triggers that keep history append-only.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

Written out in full (not importing arena.store.models) so this revision keeps
meaning what it meant when the models change; a test compares the migrated
database with the models.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None


def json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def choice(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=24)


CYCLE_STAGES = ("intake", "qualifying", "race", "judging", "scoring", "promotion", "weights", "done")

# (table, operation, WHEN condition or None): rows a researcher must be able to trust later.
PROTECTED = [
    ("ledger_events", "UPDATE", None),
    ("ledger_events", "DELETE", None),
    ("weights_sent", "UPDATE", None),
    ("weights_sent", "DELETE", None),
    ("judgments", "UPDATE", "OLD.status <> 'pending'"),  # a verdict is final; re-judging adds a version
    ("judgments", "DELETE", None),
    ("episodes", "UPDATE", "OLD.status = 'done'"),  # a finished episode's record and score are final
    ("episodes", "DELETE", None),
]


def upgrade() -> None:
    op.create_table(
        "miners",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("uid", sa.Integer(), nullable=True),
        sa.Column("first_seen", ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_miners")),
        sa.UniqueConstraint("hotkey", name=op.f("uq_miners_hotkey")),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("agent_name", sa.String(length=200), nullable=False),
        sa.Column("code", sa.LargeBinary(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("ast_hash", sa.String(length=64), nullable=False),
        sa.Column("minhash", sa.LargeBinary(), nullable=True),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("submitted_at", ts(), nullable=False),
        sa.Column("commitment_block", sa.Integer(), nullable=True),
        sa.Column(
            "status",
            choice(
                "submission_status", "accepted", "rejected", "qualifying", "qualified", "racing", "champion", "retired"
            ),
            nullable=False,
        ),
        sa.Column("rejection_reason", sa.Text(), nullable=True),
        sa.Column("embargo_until", ts(), nullable=True),
        sa.ForeignKeyConstraint(["hotkey"], ["miners.hotkey"], name=op.f("fk_submissions_hotkey_miners")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
    )
    for column in ("ast_hash", "hotkey", "sha256", "status", "submitted_at"):
        op.create_index(op.f(f"ix_submissions_{column}"), "submissions", [column])
    op.create_table(
        "nonces",
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column("seen_at", ts(), nullable=False),
        sa.PrimaryKeyConstraint("hotkey", "nonce", name=op.f("pk_nonces")),
    )
    op.create_index(op.f("ix_nonces_seen_at"), "nonces", ["seen_at"])

    op.create_table(
        "suites",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("manifest", json(), nullable=False),
        sa.Column("imported_at", ts(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suites")),
        sa.UniqueConstraint("content_hash", name=op.f("uq_suites_content_hash")),
    )
    op.create_table(
        "problems",
        sa.Column("suite_id", sa.String(length=200), nullable=False),
        sa.Column("problem_id", sa.String(length=200), nullable=False),
        sa.Column("cluster_id", sa.String(length=200), nullable=False),
        sa.Column("partition", choice("partition", "public", "race_bank", "train_pool", "heldout"), nullable=False),
        sa.Column("intent", choice("intent", "product", "shop", "voucher", "knowledge"), nullable=False),
        sa.Column("difficulty", choice("difficulty", "easy", "medium", "hard"), nullable=False),
        sa.Column("row", json(), nullable=False),
        sa.ForeignKeyConstraint(["suite_id"], ["suites.id"], name=op.f("fk_problems_suite_id_suites")),
        sa.PrimaryKeyConstraint("suite_id", "problem_id", name=op.f("pk_problems")),
    )
    op.create_index(op.f("ix_problems_cluster_id"), "problems", ["cluster_id"])
    op.create_table(
        "ledger_events",
        sa.Column("suite_id", sa.String(length=200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
        sa.Column("cycle", sa.Integer(), nullable=False),
        sa.Column("event", choice("ledger_event_kind", "revealed", "retired"), nullable=False),
        sa.Column("cluster_ids", json(), nullable=False),
        sa.Column("draw_seed", sa.String(length=200), nullable=True),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["suite_id"], ["suites.id"], name=op.f("fk_ledger_events_suite_id_suites")),
        sa.PrimaryKeyConstraint("suite_id", "seq", name=op.f("pk_ledger_events")),
        sa.UniqueConstraint("hash", name=op.f("uq_ledger_events_hash")),
    )

    op.create_table(
        "cycles",
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("suite_id", sa.String(length=200), nullable=False),
        sa.Column("stage", choice("cycle_stage", *CYCLE_STAGES), nullable=False),
        sa.Column("started_at", ts(), nullable=False),
        sa.Column("intake_closed_at", ts(), nullable=True),
        sa.Column("draw_block", sa.Integer(), nullable=True),
        sa.Column("draw_block_hash", sa.String(length=66), nullable=True),
        sa.Column("finished_at", ts(), nullable=True),
        sa.Column("params", json(), nullable=False),
        sa.ForeignKeyConstraint(["suite_id"], ["suites.id"], name=op.f("fk_cycles_suite_id_suites")),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_cycles")),
    )
    op.create_table(
        "cycle_stages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cycle", sa.Integer(), nullable=False),
        sa.Column("stage", choice("cycle_stage", *CYCLE_STAGES), nullable=False),
        sa.Column("started_at", ts(), nullable=False),
        sa.Column("finished_at", ts(), nullable=True),
        sa.Column("detail", json(), nullable=False),
        sa.ForeignKeyConstraint(["cycle"], ["cycles.number"], name=op.f("fk_cycle_stages_cycle_cycles")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cycle_stages")),
        sa.UniqueConstraint("cycle", "stage", name=op.f("uq_cycle_stages_cycle_stage")),
    )
    op.create_table(
        "episodes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cycle", sa.Integer(), nullable=False),
        sa.Column("stage", choice("episode_stage", "qualifying", "race"), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("suite_id", sa.String(length=200), nullable=False),
        sa.Column("problem_id", sa.String(length=200), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status", choice("episode_status", "pending", "running", "done", "failed"), nullable=False),
        sa.Column("worker_id", sa.String(length=200), nullable=True),
        sa.Column("leased_until", ts(), nullable=True),
        sa.Column("claims", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("record", json(), nullable=True),
        sa.Column("outcome", json(), nullable=True),
        sa.Column("success", sa.Boolean(), nullable=True),
        sa.Column("rule", sa.Float(), nullable=True),
        sa.Column("created_at", ts(), nullable=False),
        sa.Column("started_at", ts(), nullable=True),
        sa.Column("finished_at", ts(), nullable=True),
        sa.ForeignKeyConstraint(["cycle"], ["cycles.number"], name=op.f("fk_episodes_cycle_cycles")),
        sa.ForeignKeyConstraint(
            ["submission_id"], ["submissions.id"], name=op.f("fk_episodes_submission_id_submissions")
        ),
        sa.ForeignKeyConstraint(
            ["suite_id", "problem_id"],
            ["problems.suite_id", "problems.problem_id"],
            name=op.f("fk_episodes_suite_id_problem_id_problems"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_episodes")),
        sa.UniqueConstraint(
            "cycle",
            "stage",
            "submission_id",
            "problem_id",
            "attempt",
            name=op.f("uq_episodes_cycle_stage_submission_id_problem_id_attempt"),
        ),
    )
    op.create_index("ix_episodes_claim", "episodes", ["status", "cycle", "stage"])
    op.create_index(op.f("ix_episodes_submission_id"), "episodes", ["submission_id"])
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(length=200), nullable=False),
        sa.Column("rubric_version", sa.String(length=100), nullable=False),
        sa.Column("status", choice("judgment_status", "pending", "done", "failed"), nullable=False),
        sa.Column("level", sa.Float(), nullable=True),
        sa.Column("coefficient", sa.Float(), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("detail", json(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", ts(), nullable=False),
        sa.Column("judged_at", ts(), nullable=True),
        sa.ForeignKeyConstraint(["episode_id"], ["episodes.id"], name=op.f("fk_judgments_episode_id_episodes")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judgments")),
        sa.UniqueConstraint("episode_id", "version", name=op.f("uq_judgments_episode_id_version")),
    )
    op.create_index(op.f("ix_judgments_episode_id"), "judgments", ["episode_id"])
    op.create_table(
        "standings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cycle", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("qualifying_score", sa.Float(), nullable=True),
        sa.Column("race_score", sa.Float(), nullable=True),
        sa.Column("success_rate", sa.Float(), nullable=True),
        sa.Column("mean_coefficient", sa.Float(), nullable=True),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("is_champion", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["cycle"], ["cycles.number"], name=op.f("fk_standings_cycle_cycles")),
        sa.ForeignKeyConstraint(
            ["submission_id"], ["submissions.id"], name=op.f("fk_standings_submission_id_submissions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_standings")),
        sa.UniqueConstraint("cycle", "submission_id", name=op.f("uq_standings_cycle_submission_id")),
    )
    op.create_index(op.f("ix_standings_cycle"), "standings", ["cycle"])
    op.create_index(op.f("ix_standings_submission_id"), "standings", ["submission_id"])
    op.create_table(
        "weights_sent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cycle", sa.Integer(), nullable=False),
        sa.Column("uids", json(), nullable=False),
        sa.Column("weights", json(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=True),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("sent_at", ts(), nullable=False),
        sa.ForeignKeyConstraint(["cycle"], ["cycles.number"], name=op.f("fk_weights_sent_cycle_cycles")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_weights_sent")),
    )
    op.create_index(op.f("ix_weights_sent_cycle"), "weights_sent", ["cycle"])

    op.create_table(
        "chain_blocks",
        sa.Column("netuid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.String(length=66), nullable=False),
        sa.Column("created_at", ts(), nullable=False),
        sa.PrimaryKeyConstraint("netuid", "number", name=op.f("pk_chain_blocks")),
    )
    op.create_table(
        "chain_neurons",
        sa.Column("netuid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("uid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("validator_permit", sa.Boolean(), nullable=False),
        sa.Column("registered_block", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("netuid", "uid", name=op.f("pk_chain_neurons")),
        sa.UniqueConstraint("netuid", "hotkey", name=op.f("uq_chain_neurons_netuid_hotkey")),
    )
    op.create_table(
        "chain_commitments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("netuid", sa.Integer(), nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chain_commitments")),
    )
    op.create_index("ix_chain_commitments_hotkey", "chain_commitments", ["netuid", "hotkey"])
    op.create_table(
        "chain_endpoints",
        sa.Column("netuid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("netuid", "hotkey", name=op.f("pk_chain_endpoints")),
    )
    op.create_table(
        "chain_weights",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("netuid", sa.Integer(), nullable=False),
        sa.Column("validator_hotkey", sa.String(length=64), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False),
        sa.Column("uids", json(), nullable=False),
        sa.Column("weights", json(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chain_weights")),
    )
    op.create_index("ix_chain_weights_validator", "chain_weights", ["netuid", "validator_hotkey"])
    _create_guards()


def _create_guards() -> None:
    """Triggers that refuse to rewrite history, so no code path (or hand-typed SQL) can."""
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        # SQLSTATE 23001 (restrict_violation): drivers raise it as an integrity error, as SQLite's ABORT is.
        op.execute(
            "CREATE FUNCTION arena_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION '%: % refused, its rows are append-only or final', TG_TABLE_NAME, TG_OP "
            "USING ERRCODE = 'restrict_violation'; END $$"
        )
    for table, operation, when in PROTECTED:
        name = f"{table}_refuse_{operation.lower()}"
        if postgres:
            condition = f"WHEN ({when}) " if when else ""
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {operation} ON {table} FOR EACH ROW {condition}"
                f"EXECUTE FUNCTION arena_refuse_change()"
            )
        else:
            condition = f"WHEN {when} " if when else ""
            message = f"{table}: {operation} refused, its rows are append-only or final"
            op.execute(
                f"CREATE TRIGGER {name} BEFORE {operation} ON {table} FOR EACH ROW {condition}"
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            )


def downgrade() -> None:
    # Dropping a table drops its triggers and indexes; children before parents.
    for table in (
        "chain_weights",
        "chain_endpoints",
        "chain_commitments",
        "chain_neurons",
        "chain_blocks",
        "weights_sent",
        "standings",
        "judgments",
        "episodes",
        "cycle_stages",
        "cycles",
        "ledger_events",
        "problems",
        "suites",
        "nonces",
        "submissions",
        "miners",
    ):
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION arena_refuse_change()")

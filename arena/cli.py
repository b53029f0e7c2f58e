"""The `arena` command: every user action is a subcommand.

Machine-readable output (``--json``) goes to stdout alone; logs, progress
bars and tables for people go to stderr or are printed only without --json.
"""

from __future__ import annotations

import typer

from arena.commands import (
    catalog,
    config,
    db,
    demo,
    distill,
    evaluate,
    experiment,
    export,
    judge,
    policy,
    problems,
    run_agent,
    score,
    serve,
    student,
    submit,
    suite,
    validator,
    worker,
)

app = typer.Typer(
    help="A ShoppingBench agent arena that manufactures judged training trajectories.", no_args_is_help=True
)
app.add_typer(config.app, name="config")
app.add_typer(catalog.app, name="catalog")
app.add_typer(problems.app, name="problems")
app.add_typer(suite.app, name="suite")
app.add_typer(judge.app, name="judge")
app.add_typer(db.app, name="db")
app.add_typer(distill.app, name="distill")
app.add_typer(evaluate.app, name="eval")
app.add_typer(validator.app, name="validator")
app.command("worker")(worker.worker)
app.add_typer(policy.app, name="policy")
app.add_typer(student.app, name="student")
app.add_typer(experiment.app, name="experiment")
app.command("score")(score.score)
app.command("demo")(demo.demo)
app.command("run-agent")(run_agent.run_agent)
app.command("submit")(submit.submit)
app.command("serve")(serve.serve)
app.command("export")(export.export)


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # `python -m arena.cli` (accelerate launch uses it)
    main()

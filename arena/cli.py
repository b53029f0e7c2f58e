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
    leaderboard,
    policy,
    problems,
    run_agent,
    score,
    serve,
    student,
    submissions,
    submit,
    subnets,
    suite,
    validator,
    wallet,
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
app.add_typer(wallet.app, name="wallet")
app.add_typer(subnets.app, name="subnets")
app.add_typer(submissions.app, name="submissions")
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
app.command("leaderboard")(leaderboard.leaderboard)


PACKAGE = "trajectory-arena"


def _print_version(asked: bool) -> None:
    """``arena --version``: the installed package's version on stdout, then exit (no command needed)."""
    if not asked:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(PACKAGE)
    except PackageNotFoundError:  # run from a checkout that was never installed
        import sys

        sys.stderr.write(f"error: the {PACKAGE} package is not installed: run `pip install -e .` in the checkout\n")
        raise typer.Exit(2) from None
    typer.echo(f"{PACKAGE} {found}")
    raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(
        False, "--debug", envvar="ARENA_DEBUG", help="Show the full traceback when a command fails."
    ),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the package version and exit."
    ),
) -> None:
    """A ShoppingBench agent arena that manufactures judged training trajectories."""
    global _DEBUG
    _DEBUG = debug


_DEBUG = False


def main() -> None:  # pragma: no cover - console entry
    """The console entry: a failure is one line naming its cause, the traceback only with --debug."""
    import sys

    from arena.errors import one_line_error

    try:
        app()  # usage errors, Ctrl-C and typer.Exit end inside, through SystemExit
    except Exception as exc:  # what escaped a command: typer would print hundreds of traceback lines
        if _DEBUG or "--debug" in sys.argv:
            raise
        line, code = one_line_error(exc)
        sys.stderr.write(line + "\n")
        sys.exit(code)


if __name__ == "__main__":  # `python -m arena.cli` (accelerate launch uses it)
    main()

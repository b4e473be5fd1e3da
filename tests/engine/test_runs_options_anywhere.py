"""`python -m engine.runs` (and the snapshot, plot and report commands) take their options before or after
their positionals, and a misspelt flag or command is answered with the closest one, in one line, exit code 2."""

from __future__ import annotations

import pytest

from engine.runinfo.cli import build_parser
from engine.runinfo.cli import main as runs_main

# each subcommand with its options, as [command, options..., positionals...]: the same line with the options
# moved after (and between) the positionals must parse to the same namespace
SPELLINGS = [
    (["list", "--run-dir", "elsewhere"], ["some/folder"]),
    (["show", "--node", "3", "--run-dir", "elsewhere"], ["RUN"]),
    (["best", "--code-only", "--run-dir", "elsewhere"], ["RUN"]),
    (["compare", "--run-dir", "elsewhere"], ["RUN1", "RUN2", "RUN3"]),
    (["sql", "--csv", "--max-rows", "5", "--run-dir", "elsewhere"], ["RUN", "SELECT 1"]),
    (["sql", "-f", "queries.sql", "--run-dir", "elsewhere"], ["RUN"]),
    (["serve", "--port", "0", "--host", "0.0.0.0", "--run-dir", "elsewhere"], ["RUN1", "RUN2"]),
]


@pytest.mark.parametrize("options, positionals", SPELLINGS, ids=lambda v: " ".join(v))
def test_options_go_before_after_or_between_the_positionals(options, positionals):
    command, flags = options[0], options[1:]
    before = build_parser().parse_args([command, *flags, *positionals])
    after = build_parser().parse_args([command, *positionals, *flags])
    between = build_parser().parse_args([command, positionals[0], *flags, *positionals[1:]])
    assert vars(before) == vars(after) == vars(between)
    assert before.run_dir == "elsewhere"
    assert positionals[0] in str(vars(before))  # the positionals land in their places, not among the extras


def test_sql_with_csv_after_the_run_queries_the_archive(tmp_path, capsys):
    from engine.plots.synthetic import synthetic_archive

    run = tmp_path / "run"
    run.mkdir()
    synthetic_archive(run / "archive.duckdb", n_nodes=6, seed=3, n_dev=2, n_holdout=1)
    assert runs_main(["sql", str(run), "--csv", "SELECT count(*) AS n FROM nodes"]) == 0
    assert capsys.readouterr().out.splitlines() == ["n", "6"]
    assert runs_main(["show", "--node", "2", str(run)]) == 0
    assert "Node #2" in capsys.readouterr().out
    assert runs_main(["compare", str(run), "--run-dir", str(tmp_path), "run"]) == 0
    assert "side by side" in capsys.readouterr().out


def one_line_exit_2(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "argv, said",
    [
        (["shwo", "RUN"], "unknown command 'shwo' (did you mean 'show'?); choose from list, show, best,"),
        (["sql", "RUN", "--cvs"], "unknown flag --cvs (did you mean --csv?)"),
        (["show", "RUN", "--nodes", "3"], "unknown flag --nodes (did you mean --node?)"),
        (["best", "RUN", "--code_only"], "unknown flag --code_only (did you mean --code-only?)"),
        (["serve", "--prot", "0"], "unknown flag --prot (did you mean --port?)"),
        (["list", "--rundir", "x"], "unknown flag --rundir (did you mean --run-dir?)"),
        (["list", "--zzzzzz"], "unknown flag --zzzzzz (see --help)"),
        (["show", "RUN", "--csv"], "--csv is not an option here"),  # sql's, not show's
        (["show", "RUN", "surplus"], "unrecognized arguments: surplus"),
    ],
)
def test_runs_mistakes_get_one_line_and_the_closest_name(argv, said, capsys):
    assert said in one_line_exit_2(runs_main, argv, capsys)


def test_snapshot_plot_and_report_answer_a_misspelt_flag_or_command(capsys):
    from engine.front.snapshot import main as snapshot_main
    from engine.plots.cli import lineage_main, progress_main
    from engine.report import main as report_main

    said = one_line_exit_2(snapshot_main, ["exprot", "a", "b"], capsys)
    assert "unknown command 'exprot' (did you mean 'export'?)" in said
    said = one_line_exit_2(snapshot_main, ["restore", "SNAP", "--rundir", "x"], capsys)
    assert "unknown flag --rundir (did you mean --run-dir?)" in said
    assert "(did you mean --force?)" in one_line_exit_2(lineage_main, ["RUN", "--froce"], capsys)
    assert "(did you mean --formats?)" in one_line_exit_2(progress_main, ["RUN", "--fromats", "png"], capsys)
    assert "(did you mean --out?)" in one_line_exit_2(report_main, ["RUN", "--otu", "r.html"], capsys)


def test_snapshot_restore_and_report_take_options_after_positionals():
    from engine.front.snapshot import build_parser as snapshot_parser

    after = snapshot_parser().parse_args(["restore", "SNAP", "--run-dir", "x"])
    before = snapshot_parser().parse_args(["restore", "--run-dir", "x", "SNAP"])
    assert vars(after) == vars(before) == {"command": "restore", "snapshot": "SNAP", "run_dir": "x"}

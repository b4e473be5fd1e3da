"""Whole arena runs on email_validation (issue 15): the oracle's gate, provenance, a falling evolved score,
tournament replacement, the report. The testers are scripted (their code is the task's seed tester's
replacement, set in-process); the code agents' mutator is the offline one; sandbox auto, 2 workers."""

from __future__ import annotations

import json

import pytest

from archive import Archive
from engine.arena import ledger
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tasks.email_validation.task import DATA, EmailValidationTask
from tests.engine.test_search_e2e import only_run, read

FIRST_ORIGINAL = json.loads((DATA / "original.json").read_text())["batches"][0]["addresses"][0]

SCRIPTED = '''
def propose(n, seed):
    """Five proposals, the same every round: the oracle and the de-duplication decide."""
    return [
        {"address": "a..b@example.com", "valid": False},       # confirmed; the naive regex calls it valid
        {"address": "x@example.local", "valid": True},         # the oracle says invalid: refused
        {"address": %r, "valid": True},                          # already in the original set
        {"address": "plain+tag@example.org", "valid": True},   # confirmed; the regex gets it right
        "not a proposal",
    ][:n]
'''.replace("%r", repr(FIRST_ORIGINAL))

PER_ROUND = '''
def propose(n, seed):
    """New tests every round (the seed differs), each an invalid address the naive regex accepts."""
    stride = 7  # a constant the offline mutator can change, so that testers have children
    return [{"address": "u%d.%d..x@example.com" % (seed * stride, k), "valid": False} for k in range(n)]
'''


def scripted_tester(monkeypatch, source: str) -> None:
    monkeypatch.setattr(EmailValidationTask, "tester_files", lambda self: {"tester.py": source})


def arena(tmp_path, *extra: str) -> int:
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"holdout": 3}))
    argv = [
        "--task",
        "email_validation",
        "--instances",
        str(subset),
        "--workers",
        "2",
        "--run-dir",
        str(tmp_path / "runs"),
        "--quiet",
        *extra,
    ]
    return run_from_args(build_parser().parse_args(argv))


@pytest.mark.slow
def test_a_single_arena_round_gates_tests_by_the_oracle_and_records_their_provenance(tmp_path, monkeypatch):
    scripted_tester(monkeypatch, SCRIPTED)
    assert arena(tmp_path, "--arena", "single", "--arena-round", "1", "--budget", "20") == 0
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT id, parent_id FROM nodes WHERE role = 'tester' ORDER BY id")[0] == (1, None)
    verdicts = read(
        run,
        "SELECT item, accepted, reason, instance_id FROM arena_proposals "
        "WHERE tester_id = 1 AND arena_round = 1 ORDER BY item",
    )
    assert verdicts == [
        (0, True, None, "arena-r1-t1"),
        (1, False, "the oracle says invalid", None),
        (2, False, "already in the test set", None),
        (3, True, None, "arena-r1-t1"),
        (4, False, 'not {"address": str, "valid": bool}', None),
    ]
    (row,) = read(run, "SELECT split, data, origin, tester_id, arena_round FROM instances WHERE id = 'arena-r1-t1'")
    assert row[0] == "dev" and row[2:] == ("arena", 1, 1)
    assert json.loads(row[1]) == {"addresses": ["a..b@example.com", "plain+tag@example.org"], "labels": [False, True]}
    assert read(run, "SELECT count(*) FROM instances WHERE data::VARCHAR LIKE '%example.local%'")[0][0] == 0
    # the code champion fails the confirmed invalid address: its evolved score falls below its original one
    assert read(run, "SELECT score FROM evaluations WHERE node_id = 0 AND instance_id = 'arena-r1-t1'")[0][0] == 0.5
    with Archive.open(run, read_only=True) as archive:
        first = ledger.rounds(archive)[0]
        assert first["champion"] == 0 and first["added"] == ["arena-r1-t1"]
        assert ledger.dev_mean(archive, 0, up_to_round=1) < ledger.dev_mean(archive, 0, up_to_round=0)
        assert first["evolved"] < first["original"]
        tester_eval = read(run, "SELECT score, metrics FROM evaluations WHERE node_id = 1 AND instance_id = 'round-1'")
        assert tester_eval[0][0] == 1.0 and json.loads(tester_eval[0][1])["broken"] == [0]
        # round 2: the champion tester proposes the same tests again: every one is refused as known
        again = read(
            run,
            "SELECT DISTINCT accepted, reason FROM arena_proposals WHERE tester_id = 1 "
            "AND arena_round = 2 AND item IN (0, 3)",
        )
        assert again == [(False, "already in the test set")]
        assert ledger.spent(archive) == 20  # code agents' dev evaluations + testers' runs: the budget, exactly
        scores = {s.node: s for s in ledger.node_scores(archive)}
    assert scores[0].holdout is not None and scores[0].evolved is not None


@pytest.mark.slow
def test_tournament_replaces_the_worst_of_each_population_every_k_rounds(tmp_path, monkeypatch):
    scripted_tester(monkeypatch, PER_ROUND)
    assert (
        arena(
            tmp_path,
            "--arena",
            "tournament",
            "--arena-population",
            "2",
            "--arena-round",
            "2",
            "--arena-proposals",
            "3",
            "--budget",
            "60",
        )
        == 0
    )
    run = only_run(tmp_path / "runs")
    with Archive.open(run, read_only=True) as archive:
        played = ledger.rounds(archive)
        parents = dict(archive.query("SELECT id, parent_id FROM nodes"))
        roles = dict(archive.query("SELECT id, role FROM nodes"))
        refused = archive.query("SELECT count(*) FROM nodes WHERE status = 'invalid'")[0][0]
    assert len(played) >= 4, played
    # replacements happen on every second round only; a round whose children were both refused (a duplicate
    # of a node, a broken program: the mutator's draw) keeps its members, so each missed round left a refusal
    replaced_on = [r["round"] for r in played if r.get("replaced")]
    every_second = [r["round"] for r in played if r["round"] % 2 == 0]
    assert replaced_on and set(replaced_on) <= set(every_second), played
    assert len(every_second) - len(replaced_on) <= refused // 2, (played, refused)
    for before, after in zip(played, played[1:]):
        for role, key in (("agent", "agents"), ("tester", "testers")):
            swap = after.get("replaced", {}).get(role)
            assert len(after[key]) == 2 and all(roles[n] == role for n in after[key])
            if swap:  # the worst is out, a child of the best is in
                assert swap["out"] in before[key] and swap["out"] not in after[key]
                assert swap["in"] in after[key] and parents[swap["in"]] == swap["parent"] in before[key]
            elif before["round"] > 1:
                assert after[key] == before[key]
    # every round's testers add tests the naive champion fails: its evolved score keeps falling
    evolved = [r["evolved"] for r in played if r["champion"] == 0]
    assert evolved == sorted(evolved, reverse=True) and evolved[-1] < played[0]["original"]


@pytest.mark.parametrize("flag", [["--task", "binpack"], ["--arena", "both"], ["--mutator", "self", "--model", "m"]])
def test_arena_misuse_is_one_line(tmp_path, flag, capsys):
    from engine.front.cli import main

    argv = ["--task", "email_validation", "--arena", "single", "--run-dir", str(tmp_path / "runs"), *flag]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "arena" in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


BETTER_REGEX = r'NAIVE = re.compile(r"^(?!\.)(?!.*\.\.)[^@\s]+(?<!\.)@(?!-)[^@\s_]+\.[A-Za-z]{2,}$")'


def arena_model(model, messages, attempt):
    """The meta-agent, scripted: a tester child bends differently, a code child rejects dot mistakes."""
    text = "\n".join(m["content"] for m in messages)
    if "Write test cases for email address validators" in text:
        return (
            "Change: another seed stream.\n\ntester.py\n<<<<<<< SEARCH\n    rng = random.Random(seed)\n=======\n"
            "    rng = random.Random(seed + 17)\n>>>>>>> REPLACE\n"
        )
    return (
        "Change: reject dot mistakes and bad labels.\n\nagent.py\n<<<<<<< SEARCH\n"
        'NAIVE = re.compile(r"^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$")\n=======\n' + BETTER_REGEX + "\n>>>>>>> REPLACE\n"
    )


@pytest.mark.slow
def test_a_mocked_llm_arena_run_and_its_report_show_every_nodes_scores(tmp_path):
    """Both populations mutated by the LLM mutator (litellm's mock_response path); the HTML report then
    shows each code agent's original, evolved and holdout scores and each tester's score."""
    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"holdout": 3}))
    argv = [
        "--task",
        "email_validation",
        "--instances",
        str(subset),
        "--workers",
        "2",
        "--arena",
        "single",
        "--arena-round",
        "1",
        "--budget",
        "24",
        "--model",
        "openai/gpt-4o-mini",
        "--max-failed-expansions",
        "99",
        "--run-dir",
        str(tmp_path / "runs"),
        "--quiet",
    ]
    assert run_from_args(build_parser().parse_args(argv), llm_mock=arena_model) == 0
    run = only_run(tmp_path / "runs")
    made = read(
        run, "SELECT role, count(*) FROM nodes WHERE mutator = 'llm' AND status = 'valid' GROUP BY 1 ORDER BY 1"
    )
    assert made and made[0][0] == "agent" and dict(made).get("tester", 0) >= 1, made
    assert read(run, "SELECT count(*) FROM llm_calls WHERE error IS NULL")[0][0] >= 2
    with Archive.open(run, read_only=True) as archive:
        scores = [s for s in ledger.node_scores(archive) if s.status == "valid"]
        final = archive.query("SELECT node_id FROM events WHERE kind = 'select_final'")[0][0]
    better = next(s for s in scores if s.role == "agent" and s.node != 0)
    seed = next(s for s in scores if s.node == 0)
    assert better.evolved > seed.evolved and final == better.node  # the fix wins on the tests the testers added
    from engine.report.data import report_data
    from engine.report.page import render_page

    with Archive.open(run, read_only=True) as archive:
        page = render_page(report_data(archive))
    for s in scores:
        if s.role == "agent":
            assert (
                f"<tr><td>{s.node}</td><td>valid</td><td>{100 * s.original:.1f}%</td>"
                f"<td>{100 * s.evolved:.1f}%</td><td>{100 * s.holdout:.1f}%</td></tr>"
            ) in page
        else:
            assert f"<tr><td>{s.node}</td><td>valid</td><td>{100 * s.tester:.1f}%</td></tr>" in page
    from engine.runinfo.info import node_info
    from engine.runinfo.tables import _arena_row

    shown = _arena_row(node_info(run, better.node).arena)
    assert shown == (
        "arena scores",
        f"original dev set {100 * better.original:.1f}%, evolved dev set "
        f"{100 * better.evolved:.1f}%, holdout {100 * better.holdout:.1f}%",
    )


def test_a_model_that_never_answers_usably_trips_the_breaker_instead_of_playing_on(tmp_path):
    """Gemma 3 270M did this for real: every answer unreadable; rounds went on at ~5 min each until killed."""
    from engine.errors import UserError

    subset = tmp_path / "subset.json"
    subset.write_text(json.dumps({"holdout": 2}))
    argv = [
        "--task",
        "email_validation",
        "--instances",
        str(subset),
        "--workers",
        "2",
        "--arena",
        "single",
        "--budget",
        "200",
        "--model",
        "openai/gpt-4o-mini",
        "--max-failed-expansions",
        "3",
        "--run-dir",
        str(tmp_path / "runs"),
        "--quiet",
    ]
    with pytest.raises(UserError) as stopped:
        run_from_args(build_parser().parse_args(argv), llm_mock=lambda model, messages, attempt: "I cannot help.")
    said = str(stopped.value)
    assert said.startswith("stopped: 3 expansions in a row made no usable child") and "--resume" in said
    run = only_run(tmp_path / "runs")
    assert read(run, "SELECT count(*) FROM nodes WHERE status = 'failed'")[0][0] == 3
    assert read(run, "SELECT status FROM runs")[0][0] == "interrupted"


def test_without_the_oracles_package_the_arena_stops_in_one_line_before_a_run_is_made(tmp_path, monkeypatch):
    import importlib.util

    from engine.errors import UserError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "email_validator" else real(name, *a)
    )
    with pytest.raises(UserError, match=r"^--arena: the email_validation oracle needs the email-validator package"):
        arena(tmp_path, "--arena", "single", "--budget", "10")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())

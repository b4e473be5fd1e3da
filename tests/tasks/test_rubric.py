"""Rubric task folders: open-ended answers graded by a judge model against weighted fact checks.

The fixture tests/fixtures/tasks/rubric_support follows the four-level loops'
customer-support task: a small shop's policy facts as the questions'
test_cases, checks written by hand in rubric_checks.json, and a seed agent
that answers from a canned FAQ (no model). Every model here answers through
litellm's own `mock_response` path (LLMClient's `mock`), never around it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.loop.evaluation import run_agent
from engine.sandbox.process import ProcessSandbox
from tasks import make_task
from tasks.adapters import detect
from tasks.adapters.rubric import JUDGE_SYSTEM, read_verdicts, rubric_score
from tests.conftest import REPO
from tests.engine.llm.llm_helpers import MODEL, client, new_archive

FIXTURE = REPO / "tests" / "fixtures" / "tasks" / "rubric_support"


def checks_of(messages) -> list[str]:
    """The checks the judge's prompt lists, in order."""
    text = messages[1]["content"]
    listed = text.split("\nChecks (", 1)[1].split("\n\n", 1)[0]
    return [re.sub(r"^\d+\. ", "", line) for line in listed.splitlines()[1:]]


def answer_of(messages) -> str:
    return messages[1]["content"].split("\nAnswer:\n", 1)[1].split("\n\nChecks (", 1)[0]


def keyword_judge(model, messages, attempt):
    """A deterministic judge: a check passes when most of its longer words appear in the answer."""
    answer = answer_of(messages).lower()
    verdicts = []
    for check in checks_of(messages):
        words = [w for w in re.findall(r"[\w$-]+", check.lower()) if len(w) > 4 and w not in ("answer", "says")]
        verdicts.append(bool(words) and sum(w in answer for w in words) * 2 >= len(words))
    return json.dumps({"checks": verdicts})


def judge_task(folder=FIXTURE, mock=keyword_judge, tmp_path=None):
    task = make_task(str(folder))
    archive = new_archive(tmp_path)
    llm = client(archive, mock=mock)
    task.attach_judge(llm, MODEL)
    return task, archive, llm


def judge_rows(archive) -> int:
    return archive.query("SELECT count(*) FROM llm_calls WHERE purpose = 'judge'")[0][0]


def answer_json(qid: str, text: str) -> bytes:
    return json.dumps({"id": qid, "answer": text}).encode()


def one_question_folder(root, weights=(2, 1, 1)):
    shutil.copytree(FIXTURE, root)
    (root / "questions.json").write_text(
        json.dumps(
            {
                "questions": [
                    {
                        "id": "q1",
                        "question": "How long is the refund window?",
                        "split": "dev",
                        "test_cases": ["30 days", "original payment method", "5-7 business days"],
                    }
                ]
            }
        )
    )
    checks = [
        "the answer says 30 days",
        "the answer says refunds go to the original payment method",
        "the answer says refunds take 5-7 business days",
    ]
    (root / "rubric_checks.json").write_text(
        json.dumps({"checks": {"q1": [{"check": c, "weight": w} for c, w in zip(checks, weights)]}})
    )
    return root


# ----- the format --------------------------------------------------------------------------------------


def test_the_fixture_is_detected_as_a_rubric_folder():
    assert detect(FIXTURE) == "rubric"
    task = make_task(str(FIXTURE))
    assert (task.entry_file, task.entry_function, task.entry_args) == ("agent.py", "answer", ("question",))
    assert task.needs_judge is True and task.agent_llm == "optional"
    assert set(task.seed_files()) == {"agent.py"}
    splits = [i.split for i in task.instances()]
    assert splits.count("dev") == 6 and splits.count("holdout") == 4
    assert "Pinecone Outfitters" in task.description


def test_without_an_attached_judge_grading_is_a_clear_error():
    task = make_task(str(FIXTURE))
    dev = task.instances()[0]
    with pytest.raises(RuntimeError, match="attach_judge"):
        asyncio.run(task.judge_grade(dev, answer_json(dev.id, "anything")))


def test_the_agent_never_sees_the_checks_or_the_test_cases(tmp_path):
    task = make_task(str(FIXTURE))
    secrets = [c["check"] for cs in task.checks.values() for c in cs]
    secrets += [
        fact for q in json.loads((FIXTURE / "questions.json").read_text())["questions"] for fact in q["test_cases"]
    ]
    for instance in task.instances():
        files = task.sandbox_files(instance)
        assert "rubric_checks.json" not in files
        shipped = b"\n".join(files.values()).decode()
        assert not any(s in shipped for s in secrets) and "test_cases" not in shipped
        assert json.loads(files["questions.json"]) == {
            "questions": [{"id": instance.id, "question": instance.data["question"]}]
        }
    assert str(FIXTURE.resolve() / "rubric_checks.json") in task.hidden_paths()
    # an agent that reports everything it can see in its folder: the judge reads it, and no secret is in it
    spy = (
        "import json, os\n\ndef answer(question):\n"
        "    seen = {name: open(name).read()[:600] for name in sorted(os.listdir('.'))\n"
        "            if os.path.isfile(name) and name != 'clade_llm.py'}\n"
        "    return json.dumps(seen)\n"
    )
    prompts = []

    def judge(model, messages, attempt):
        prompts.append(answer_of(messages))
        return keyword_judge(model, messages, attempt)

    task, archive, _ = judge_task(mock=judge, tmp_path=tmp_path)
    out = asyncio.run(run_agent(task, ProcessSandbox(), {"agent.py": spy}, task.instances()[0]))
    assert out.status == "ok", out.feedback
    assert '"questions.json"' in prompts[0] and '"benchmark.py"' in prompts[0]
    assert "rubric_checks.json" not in prompts[0]
    assert not any(s in prompts[0] for s in secrets) and "test_cases" not in prompts[0]


# ----- grading -------------------------------------------------------------------------------------------


def test_the_rubric_score_is_the_weighted_share_of_checks_passed(tmp_path):
    assert rubric_score([True, False, True], [2, 1, 1]) == 0.75
    folder = one_question_folder(tmp_path / "one")
    task, _, _ = judge_task(folder, mock=lambda m, msgs, a: '{"checks": [true, false, true]}', tmp_path=tmp_path)
    q1 = task.instances()[0]
    grade = asyncio.run(task.judge_grade(q1, answer_json("q1", "You have 30 days; refunds take 5-7 business days.")))
    assert grade.valid and grade.metrics["metric"] == 0.75 and task.score(q1, grade.metrics, None) == 0.75
    assert grade.metrics["verdicts"] == [True, False, True]
    assert (grade.metrics["checks_passed"], grade.metrics["checks_total"]) == (2, 3)
    assert (grade.metrics["weight_passed"], grade.metrics["weight_total"]) == (3.0, 4.0)
    assert "failed: the answer says refunds go to the original payment method" in grade.feedback
    assert task.raw_value([grade.metrics, {"metric": 0.25}]) == 50.0


def test_the_judge_prompt_holds_the_question_answer_and_checks_only(tmp_path):
    seen = []

    def judge(model, messages, attempt):
        seen.append(messages)
        return '{"checks": [true, true, true]}'

    folder = one_question_folder(tmp_path / "one")
    task, _, _ = judge_task(folder, mock=judge, tmp_path=tmp_path)
    asyncio.run(task.judge_grade(task.instances()[0], answer_json("q1", "Thirty days.")))
    (messages,) = seen
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM}
    assert answer_of(messages) == "Thirty days."
    assert checks_of(messages) == [c["check"] for c in task.checks["q1"]]
    assert "How long is the refund window?" in messages[1]["content"] and "weight" not in messages[1]["content"]


def test_an_identical_judgement_is_served_from_the_archive(tmp_path):
    task, archive, llm = judge_task(tmp_path=tmp_path)
    answers = []
    complete = llm.complete

    async def spy(*args, **kwargs):
        answers.append(await complete(*args, **kwargs))
        return answers[-1]

    llm.complete = spy
    dev = task.instances()[0]
    text = answer_json(dev.id, "Returns within 30 days of delivery, refunded to your original payment method.")
    first = asyncio.run(task.judge_grade(dev, text))
    assert judge_rows(archive) == 1 and answers[-1].cached is False
    again = asyncio.run(task.judge_grade(dev, text))
    assert judge_rows(archive) == 1 and answers[-1].cached is True  # no new call, nothing spent
    assert again == first and first.valid
    asyncio.run(task.judge_grade(dev, answer_json(dev.id, "Something else.")))
    assert judge_rows(archive) == 2
    assert archive.query("SELECT count(*) FROM llm_calls WHERE purpose = 'judge' AND node_id IS NULL")[0][0] == 2


def test_a_malformed_judge_answer_is_asked_again_with_the_error(tmp_path):
    replies = iter(
        ["I think the answer is fine.", '{"checks": [true, "yes", false]}', '{"checks": [true, true, false]}']
    )
    conversations = []

    def judge(model, messages, attempt):
        conversations.append(messages)
        return next(replies)

    folder = one_question_folder(tmp_path / "one")
    task, archive, _ = judge_task(folder, mock=judge, tmp_path=tmp_path)
    grade = asyncio.run(task.judge_grade(task.instances()[0], answer_json("q1", "30 days, original method.")))
    assert grade.valid and grade.metrics["metric"] == 0.75 and grade.metrics["verdicts"] == [True, True, False]
    assert archive.query("SELECT count(*) FROM llm_calls WHERE purpose = 'judge' AND error IS NULL")[0][0] == 3
    assert [len(m) for m in conversations] == [2, 4, 6]
    assert "no JSON object" in conversations[1][-1]["content"]
    assert conversations[1][-2] == {"role": "assistant", "content": "I think the answer is fine."}
    assert "only true or false" in conversations[2][-1]["content"]


def test_a_judge_that_never_answers_readably_makes_the_evaluation_bad_output(tmp_path):
    task, archive, _ = judge_task(mock=lambda m, msgs, a: '{"checks": [true]}', tmp_path=tmp_path)
    out = asyncio.run(run_agent(task, ProcessSandbox(), task.seed_files(), task.instances()[0]))
    assert out.status == "bad_output"
    assert out.feedback.startswith("the judge's answer could not be read after 3 tries: ")
    assert "holds 1 values, not 4" in out.feedback
    assert judge_rows(archive) == 3
    assert read_verdicts('```json\n{"checks": [false]}\n```', 1) == [False]


def test_the_seed_is_graded_end_to_end_and_an_unreadable_answer_is_bad_output(tmp_path):
    task, archive, _ = judge_task(tmp_path=tmp_path)
    by_id = {i.id: i for i in task.instances()}
    out = asyncio.run(run_agent(task, ProcessSandbox(), task.seed_files(), by_id["password_reset"]))
    assert out.status == "ok", out.feedback
    assert 0.0 < out.metrics["metric"] < 1.0 and out.metrics["checks_total"] == 3
    assert out.feedback.endswith("; the answer says the reset link expires after 24 hours")
    assert "failed: " in out.feedback
    hold = asyncio.run(run_agent(task, ProcessSandbox(), task.seed_files(), by_id["refund_sale"]))
    assert hold.status == "ok" and "failed:" not in hold.feedback  # holdout feedback: the score only
    silent = {"agent.py": "import sys\n\ndef answer(question):\n    sys.exit(0)\n"}  # the benchmark prints nothing
    calls = judge_rows(archive)
    bad = asyncio.run(run_agent(task, ProcessSandbox(), silent, by_id["shipping_time"]))
    assert bad.status == "bad_output" and "printed no line 'answers: {...}'" in bad.feedback
    assert judge_rows(archive) == calls  # nothing to judge: no call
    broken = {"agent.py": "def answer(question):\n    raise ValueError('no idea')\n"}
    bad = asyncio.run(run_agent(task, ProcessSandbox(), broken, by_id["shipping_time"]))
    assert bad.status == "bad_output" and "benchmark.py exited with 1" in bad.feedback


def test_a_folder_whose_checks_miss_a_question_is_one_line(tmp_path):
    folder = one_question_folder(tmp_path / "one")
    (folder / "rubric_checks.json").write_text('{"checks": {}}')
    with pytest.raises(ValueError, match="question 'q1' has no checks") as err:
        make_task(str(folder))
    assert "\n" not in str(err.value)


# ----- python -m engine.rubric generate ------------------------------------------------------------------


def rubric_writer(model, messages, attempt):
    facts = [line[2:] for line in messages[1]["content"].split("Reference facts:\n", 1)[1].splitlines()]
    return json.dumps(
        {
            "checks": [
                {"check": f"the answer says {f[0].lower() + f[1:]}", "weight": 2 if k == 0 else 1}
                for k, f in enumerate(facts)
            ]
        }
    )


def test_generate_writes_checks_from_the_test_cases_and_refuses_to_overwrite(tmp_path, capsys):
    from engine.rubric import generate, main

    folder = tmp_path / "support"
    shutil.copytree(FIXTURE, folder)
    (folder / "rubric_checks.json").unlink()
    path = generate(folder, MODEL, llm_mock=rubric_writer)
    written = json.loads(path.read_text())["checks"]
    questions = json.loads((folder / "questions.json").read_text())["questions"]
    assert set(written) == {q["id"] for q in questions}
    assert written["refund_window"][0] == {
        "check": "the answer says returns are accepted within 30 days of delivery",
        "weight": 2,
    }
    assert len(written["refund_window"]) == 4
    assert make_task(str(folder)).checks["shipping_time"][1]["weight"] == 1.0  # the task reads what it wrote
    before = path.read_text()
    with pytest.raises(ValueError, match="exists; not overwritten"):
        generate(folder, MODEL, llm_mock=rubric_writer)
    assert main(["generate", str(folder), "--model", MODEL]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err
    assert path.read_text() == before
    generate(folder, MODEL, llm_mock=lambda m, msgs, a: '{"checks": [{"check": "the answer is polite"}]}', force=True)
    assert json.loads(path.read_text())["checks"]["refund_window"] == [{"check": "the answer is polite", "weight": 1}]


# ----- a whole search ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_whole_search_on_the_fixture_with_a_judge(tmp_path):
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args
    from tests.engine.test_search_e2e import assert_budget_invariants, only_run, read

    args = build_parser().parse_args(
        [
            "--task",
            str(FIXTURE),
            "--judge-model",
            MODEL,
            "--budget",
            "12",
            "--workers",
            "2",
            "--sandbox",
            "process",
            "--run-dir",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=keyword_judge) == 0
    run = only_run(tmp_path)
    assert_budget_invariants(run, 12)
    ok = read(run, "SELECT count(*) FROM evaluations WHERE status = 'ok' AND split = 'dev'")[0][0]
    assert ok >= 6
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'holdout' AND status = 'ok'")[0][0] >= 4
    assert read(run, "SELECT min(score) >= 0 AND max(score) <= 1 FROM evaluations")[0][0]
    judged = read(run, "SELECT count(*) FROM llm_calls WHERE purpose = 'judge' AND error IS NULL")[0][0]
    assert 1 <= judged <= read(run, "SELECT count(*) FROM evaluations WHERE status = 'ok'")[0][0]
    assert read(run, "SELECT count(*) FROM llm_calls WHERE purpose <> 'judge'")[0][0] == 0  # offline mutator


def test_the_judges_spend_reaching_the_runs_budget_stops_the_run_cleanly(tmp_path):
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args
    from tests.engine.test_search_e2e import only_run, read

    args = build_parser().parse_args(
        [
            "--task",
            str(FIXTURE),
            "--judge-model",
            MODEL,
            "--budget",
            "12",
            "--workers",
            "2",
            "--sandbox",
            "process",
            "--run-dir",
            str(tmp_path),
            "--max-tokens",
            "60",
            "--quiet",
        ]
    )
    assert run_from_args(args, llm_mock=keyword_judge) == 0  # the budget reached: a clean stop, not a traceback
    run = only_run(tmp_path)
    ((reason,),) = read(run, "SELECT detail->>'reason' FROM events WHERE kind = 'stop'")
    assert "budget" in reason and read(run, "SELECT status FROM runs")[0][0] == "finished"
    assert read(run, "SELECT count(*) FROM evaluations WHERE split = 'dev'")[0][0] < 12
    # an evaluation whose judgement the budget refused is not stored as the agent's failure
    assert read(run, "SELECT count(*) FROM evaluations WHERE feedback LIKE '%budget%'")[0][0] == 0

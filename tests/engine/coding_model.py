"""A scripted model for the seed coding agent (agents_seed/coding_agent), answered through litellm's mock_response.

It plays the model behind every call of a self-improving run, told apart by the
system prompt of each conversation:
- the coding agent on a repofix instance (its statement names the instance):
  it edits the one file the instance's solution changes (the whole buggy text
  replaced by the fixed text), then finishes; on a `flaky` instance its first
  edit quotes a line the file does not hold, and only after being told so
  does it send the right edit (the seed agent gives up on a failed edit, an
  agent that retries resolves it);
- the coding agent on its own code ("# Improve this coding agent"): it views
  agent.py, then makes `self_edit(source, n)`'s change (n: its self-edits so
  far) and finishes. The default self-edit adds the missing capability (a
  failed edit is reported back to the model instead of ending the run) and,
  once it is there, raises MAX_STEPS (by a different amount each time, so that
  expansions make different children);
- SICA's overseer: it says stop when the last three actions it is shown are
  the same;
- DGM's diagnosis: the retry, or more steps once the retry is among the children already tried.
`silent=True` answers nothing at all (the agent then has no readable action).
"""

from __future__ import annotations

import json
import re
from collections import Counter

from tasks.repofix.task import RepoFixTask

AGENT_SYSTEM = "You are a software engineer fixing a task in a repository"
LIMIT_1 = '''            except EditFailed as exc:                    # known limit 1
                result = ending = f"edit failed: {exc}"'''
RETRY = '''            except EditFailed as exc:                    # retried: the model is told and tries again
                result = f"error: edit failed: {exc}; view the file and copy the search text exactly"'''
SUMMARY = "report a failed edit to the model and let it try again"
MORE_STEPS = "Raise MAX_STEPS"
STEPS = re.compile(r"^MAX_STEPS = (\d+)", re.MULTILINE)


def action(**fields) -> str:
    return "Next step.\n```json\n" + json.dumps(fields) + "\n```\n"


def add_retry_then_more_steps(source: str, n: int, statement: str) -> tuple[str, str]:
    """(search, replace) of the n-th self-edit this model makes, from agent.py's current source (and the
    statement, which lists what was already tried from this version)."""
    tried = statement.partition("## Already tried from this version")[2].partition("\n## ")[0]
    if LIMIT_1 in source and SUMMARY not in tried and MORE_STEPS not in statement:
        return LIMIT_1, RETRY
    steps = STEPS.search(source)
    return steps.group(0), f"MAX_STEPS = {int(steps.group(1)) + 1 + n}"


def unnumbered(view: str) -> str:
    """The file's text from the agent's `view` observation (line numbers stripped)."""
    return "\n".join(line[7:] for line in view.splitlines()) + "\n"


class CodingModel:
    def __init__(
        self, flaky=(), self_edit=add_retry_then_more_steps, silent: bool = False, task=None, loop_on=()
    ) -> None:
        task = task or RepoFixTask()
        instances = [*task.all_instances.values(), task.smoke_instance()]
        self.by_statement = {inst.data["statement"].strip(): inst for inst in instances}
        self.flaky = set(flaky)
        self.loop_on = set(loop_on)  # instances on which the model views the same file forever
        self.self_edit = self_edit
        self.silent = silent
        self.calls = Counter()  # kind of call -> how many
        self.made_retry = False

    def __call__(self, model, messages, attempt):
        system = messages[0]["content"]
        if system.startswith("You oversee"):
            self.calls["overseer"] += 1
            shown = re.findall(
                r"the model answered\n(.*?)(?:\n--- call|\nShould the agent)", messages[1]["content"], re.DOTALL
            )
            looping = len(shown) >= 3 and len(set(shown[-3:])) == 1
            return json.dumps(
                {"stop": looping, "reason": "the same action three times in a row" if looping else "making progress"}
            )
        if system.startswith("You review"):  # the reviewer sees what was tried; the implementer gets its plan
            self.calls["diagnose"] += 1
            review = messages[1]["content"]
            tried = review.partition("## Already tried from this version")[2].partition("\n## ")[0]
            if SUMMARY in tried:
                return f"1. It stops too early. 2. {MORE_STEPS} by a few. 3. Run the tests."
            return "1. A failed edit ends the run. 2. Report the failure to the model and go on. 3. Run the tests."
        assert system.startswith(AGENT_SYSTEM), system[:80]
        if self.silent:
            self.calls["silent"] += 1
            return ""
        statement = messages[1]["content"].split("# Task\n\n", 1)[1].split("\n\n# Files\n\n", 1)[0].strip()
        last = messages[-1]["content"] if messages[-1]["role"] == "user" and len(messages) > 2 else ""
        if statement.startswith("# Improve this coding agent"):
            self.calls["self"] += 1
            return self._improve(statement, last)
        self.calls["fix"] += 1
        return self._fix(self.by_statement[statement], last)

    def _fix(self, instance, last: str) -> str:
        ((path, fixed),) = instance.data["solution"].items()
        if instance.id in self.loop_on:
            return action(tool="view", path=path)
        buggy = instance.data["repo"][path]
        if last.startswith("edited"):
            return action(tool="finish", summary=f"fixed {path}")
        if not last and instance.id in self.flaky:  # the first edit misquotes the file
            return action(tool="edit", path=path, search=buggy + "# a line that is not there\n", replace=fixed)
        return action(tool="edit", path=path, search=buggy, replace=fixed)

    def _improve(self, statement: str, last: str) -> str:
        if not last:
            return action(tool="view", path="agent.py")
        if last.startswith("edited"):
            return action(tool="finish", summary=SUMMARY if self.made_retry else "allow more steps")
        self.calls["self_edit"] += 1
        search, replace = self.self_edit(unnumbered(last), self.calls["self_edit"], statement)
        self.made_retry = replace == RETRY
        return action(tool="edit", path="agent.py", search=search, replace=replace)

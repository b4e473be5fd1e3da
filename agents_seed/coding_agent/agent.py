"""Seed coding agent: a small tool-using loop that edits a repository until the model says it is done.

In the spirit of mini-swe-agent, standard library only. The model is reached
only through `clade_llm` (the engine copies it beside this file). Each answer
must hold one ```json block with one action; the agent runs it and sends the
observation back as the next user message. Tools: view, edit, create, shell,
test, finish (see SYSTEM). Every path must stay inside the workspace.

`solve(problem)` takes a repository task ("statement", "workspace",
"test_command", optional "trajectory_file") and returns a one-line summary,
or a HumanEval problem ("task_id", "prompt", "entry_point") and returns the
completed source of solution.py.

Known limits (this agent is the seed of self-improvement; these are left on purpose):
1. A failed edit (the search text is not found, or is found more than once)
   ends the run at once: no retry, no feedback to the model.
2. It never runs the tests before finishing: it stops as soon as the model
   says finish.
3. An answer that holds no readable action ends the run.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import clade_llm

MAX_STEPS = 20                # model calls per run
MAX_TOKENS = 40_000           # prompt + completion tokens per run, from the answers' usage
MAX_ANSWER_TOKENS = 2048      # per model call
VIEW_LINES = 400              # lines shown by `view`
OUTPUT_CHARS = 3000           # tail of a command's output shown to the model
TRACE_CHARS = 500             # action and result are cut to this in the trajectory
COMMAND_TIMEOUT = 60          # seconds per shell or test command
LISTED_FILES = 300            # files named in the first message
TOOLS = {"view": ("path",), "edit": ("path", "search", "replace"), "create": ("path", "content"),
         "shell": ("command",), "test": (), "finish": ("summary",)}

SYSTEM = """You are a software engineer fixing a task in a repository. You act through tools.
Each answer: first think briefly, then give exactly ONE action as a JSON object in a ```json block:

```json
{"tool": "view", "path": "pkg/mod.py"}
```

Tools (paths are relative to the repository root and must stay inside it):
- {"tool": "view", "path": P}: the file with line numbers (first 400 lines).
- {"tool": "edit", "path": P, "search": OLD, "replace": NEW}: replace OLD, which must occur exactly once in
  the file, by NEW. Copy OLD exactly (spaces included), without line numbers.
- {"tool": "create", "path": P, "content": TEXT}: write a whole file (new or overwritten).
- {"tool": "shell", "command": CMD}: run a shell command in the repository root (60 s limit).
- {"tool": "test"}: run the task's test command.
- {"tool": "finish", "summary": ONE_LINE}: stop; say what you changed.
The result of each action comes back in the next message. Keep changes minimal."""


class ToolError(Exception):
    """An action that failed in a way the model is told about (the run goes on)."""


class EditFailed(Exception):
    """The search text of an edit was not found exactly once: known limit 1, the run ends."""


def within_budget(steps: int, tokens: int) -> bool:
    """The budget check, before every model call: steps taken and tokens spent are both under their caps."""
    return steps < MAX_STEPS and tokens < MAX_TOKENS


def parse_action(answer: str) -> dict | None:
    """The first ```json block's object, if it names a known tool with string arguments; else None."""
    start = answer.find("```json")
    if start < 0:
        return None
    text = answer[start + len("```json"):].lstrip()
    try:
        action, _ = json.JSONDecoder().raw_decode(text)   # stops after the object: "```" inside strings is fine
    except ValueError:
        return None
    if not isinstance(action, dict) or action.get("tool") not in TOOLS:
        return None
    if not all(isinstance(action.get(key), str) for key in TOOLS[action["tool"]]):
        return None
    return action


def inside(workspace: Path, path: str) -> Path:
    """`path` resolved under the workspace; refuses anything that resolves outside it (.., absolute, symlinks)."""
    target = (workspace / path).resolve()
    if not target.is_relative_to(workspace):
        raise ToolError(f"path {path!r} is outside the workspace; use a path relative to its root")
    return target


def read_text(file: Path, path: str) -> str:
    if not file.is_file():
        raise ToolError(f"no file {path!r}")
    try:
        with open(file, encoding="utf-8", newline="") as handle:   # newline="": keep CRLF files as they are
            return handle.read()
    except UnicodeDecodeError:
        raise ToolError(f"{path!r} is not UTF-8 text") from None


def write_text(file: Path, text: str) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def run_command(command: str, workspace: Path) -> str:
    """Exit code and the tail of stdout+stderr, so long logs do not eat the token budget."""
    try:
        done = subprocess.run(command, shell=True, cwd=workspace, timeout=COMMAND_TIMEOUT,
                              capture_output=True, text=True, errors="replace")
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or "") + (exc.stderr or "")
        output = output.decode(errors="replace") if isinstance(output, bytes) else output
        return f"timed out after {COMMAND_TIMEOUT} s\n{output[-OUTPUT_CHARS:]}"
    output = done.stdout + done.stderr
    return f"exit code {done.returncode}\n{output[-OUTPUT_CHARS:]}"


def run_tool(action: dict, workspace: Path, test_command: str) -> str:
    """The observation of one action (finish is handled by the loop). Raises ToolError or EditFailed."""
    tool = action["tool"]
    if tool == "view":
        lines = read_text(inside(workspace, action["path"]), action["path"]).splitlines()
        shown = "\n".join(f"{number:5d}  {line}" for number, line in enumerate(lines[:VIEW_LINES], 1))
        more = f"\n... ({len(lines) - VIEW_LINES} more lines)" if len(lines) > VIEW_LINES else ""
        return shown + more if lines else "(empty file)"
    if tool == "edit":
        file = inside(workspace, action["path"])
        if not file.is_file():
            raise EditFailed(f"no file {action['path']!r}")
        text = read_text(file, action["path"])
        count = text.count(action["search"]) if action["search"] else 0
        if count == 0:
            raise EditFailed(f"search text not found in {action['path']!r}")
        if count > 1:
            raise EditFailed(f"search text found {count} times in {action['path']!r} (needs exactly 1)")
        write_text(file, text.replace(action["search"], action["replace"], 1))
        return f"edited {action['path']}"
    if tool == "create":
        write_text(inside(workspace, action["path"]), action["content"])
        return f"wrote {action['path']} ({len(action['content'])} characters)"
    if tool == "shell":
        return run_command(action["command"], workspace)
    if tool == "test":
        no_tests = "there is no test command for this task"
        return run_command(test_command, workspace) if test_command.strip() else no_tests
    raise ToolError(f"unknown tool {tool!r}")


def list_files(workspace: Path) -> list[str]:
    """Relative paths of the workspace's files, skipping __pycache__ and hidden directories."""
    found = []
    for root, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        found += [str((Path(root) / name).relative_to(workspace)) for name in sorted(files)]
    return found


def first_message(statement: str, workspace: Path, test_command: str) -> str:
    files = list_files(workspace)
    listing = "\n".join(files[:LISTED_FILES])
    if len(files) > LISTED_FILES:
        listing += f"\n... and {len(files) - LISTED_FILES} more files"
    tests = f"`{test_command}`" if test_command.strip() else "(none)"
    return f"# Task\n\n{statement}\n\n# Files\n\n{listing or '(no files)'}\n\n# Test command\n\n{tests}"


def record(trajectory: Path | None, step: dict) -> None:
    """Append one step to the trajectory file (one JSON object per line) and print a short line."""
    first_line = (step["result"].splitlines() or [""])[0]
    print(f"step {step['step']}: {step['tool']} -> {first_line[:100]}", flush=True)
    if trajectory is not None:
        trajectory.parent.mkdir(parents=True, exist_ok=True)
        with open(trajectory, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(step) + "\n")


def run_agent(statement: str, workspace: Path, test_command: str = "", trajectory: Path | None = None) -> str:
    """The loop: ask, act, observe, until finish, a run-ending failure or the budget. Returns a summary."""
    workspace = workspace.resolve()
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": first_message(statement, workspace, test_command)}]
    steps = tokens = 0
    while True:
        if not within_budget(steps, tokens):
            return f"budget spent: {steps} steps, {tokens} tokens"
        started = time.monotonic()
        try:
            response = clade_llm.complete(messages, temperature=0.0, max_tokens=MAX_ANSWER_TOKENS)
        except clade_llm.LLMError as exc:
            return f"model error: {exc}"
        try:
            usage = response.get("usage") or {}
            tokens_in, tokens_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            answer = response["choices"][0]["message"].get("content") or ""
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            return f"model error: malformed response {str(response)[:200]}"
        steps, tokens = steps + 1, tokens + tokens_in + tokens_out
        messages.append({"role": "assistant", "content": answer})
        action = parse_action(answer)
        ending = None
        if action is None:                               # known limit 3
            tool, shown = "none", answer
            result = ending = "no readable action: the answer holds no ```json block with a known tool"
        elif action["tool"] == "finish":                 # known limit 2: no test run before stopping
            tool, shown = "finish", json.dumps(action)
            result = ending = " ".join(action["summary"].split()) or "finished"
        else:
            tool, shown = action["tool"], json.dumps(action)
            try:
                result = run_tool(action, workspace, test_command)
            except ToolError as exc:
                result = f"error: {exc}"
            except EditFailed as exc:                    # known limit 1
                result = ending = f"edit failed: {exc}"
        record(trajectory, {"step": steps - 1, "tool": tool, "action": shown[:TRACE_CHARS],
                            "tokens_in": tokens_in, "tokens_out": tokens_out,
                            "time_s": round(time.monotonic() - started, 3), "result": result[:TRACE_CHARS]})
        if ending is not None:
            return ending
        messages.append({"role": "user", "content": result})


def solve(problem: dict) -> str:
    """A repository task: edit the workspace in place, return a summary. A HumanEval problem: return solution.py."""
    trajectory = Path(problem["trajectory_file"]) if problem.get("trajectory_file") else None
    if "workspace" in problem:
        summary = run_agent(problem["statement"], Path(problem["workspace"]), problem.get("test_command") or "",
                            trajectory)
        return " ".join(summary.split())                 # one line, whatever the ending
    workspace = Path(tempfile.mkdtemp(prefix="coding_agent_", dir=os.getcwd()))
    try:
        solution = workspace / "solution.py"
        solution.write_text(problem["prompt"], encoding="utf-8")
        statement = (f"Complete the function `{problem['entry_point']}` in solution.py (keep its signature); "
                     "the file must hold the whole function.")
        run_agent(statement, workspace, "", trajectory)
        return solution.read_text(encoding="utf-8") if solution.is_file() else ""
    finally:
        shutil.rmtree(workspace, ignore_errors=True)

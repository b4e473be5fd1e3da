"""The LLM mutator: a model reads the parent and its feedback and answers with edits.

The prompt (engine/mutators/prompt.py) holds the task's description, the
parent's code, its failed or weakest dev instances (never holdout), the
lineage from the root with the scores along it, and one or two inspirations
from the archive. The answer is SEARCH/REPLACE blocks or a whole file. A
block that does not apply, or an answer that cannot be parsed, goes back to
the model with the reason and the closest lines, up to `max_attempts` calls;
nothing is dropped silently. With `diagnose`, a first call reads the
failures and returns a structured plan that the second call implements
(DGM, Zhang et al. 2025; HGM). Every call goes through `engine.llm`, so it is
booked in `llm_calls` and counted against the budgets.

`answer_format="auto"` (the run's default) asks each model for SEARCH/REPLACE
blocks until SWITCH_AFTER of its answers in a row could not be read as
blocks at all (a weak model that ignores the format: edits that do not apply
are a different matter and do not count); from then on that model is asked
for whole files. The switch is an `answer_format` event, said once, and a
resumed run reads it back from the events.

With `--embedding-model` (`state.embedding_novelty`, engine.mutators.novelty.ArchiveEmbeddings), a
child that passes these checks is embedded and compared with the nodes stored when the expansion
began; a near-duplicate goes back to the model (one user message naming the node), at most
NEAR_DUPLICATE_ASKS times within `max_attempts`; a last near-duplicate is returned with its reason
(`near_duplicate`) for store_child to store it invalid.

With `--meta-recommendations N` (engine/mutators/scratchpad.py) the prompt carries the recommendations in
force, rewritten every N expansions; with `--evolve-prompts` (engine/mutators/prompt_population.py) its
instruction part is the prompt UCB chose from a population that grows every M expansions. The child
records both (`recommendations_version`, `prompt_id`), and so does its `expand` event, for a replay to
ask with the same ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from archive.reads_prompts import PromptRecord
from engine.errors import StopRun
from engine.mutators.answers import AnswerFormatError, extract_description, parse_answer, parse_diagnosis
from engine.mutators.base import (
    AsyncMutator,
    ExpansionFailed,
    MutationContext,
    MutationError,
    Proposal,
)
from engine.mutators.edits import EditableRegion, apply_blocks, apply_rewrite, find_editable
from engine.mutators.periodic import Answered
from engine.mutators.prompt import (
    Inspiration,
    InstanceFeedback,
    LineageStep,
    PromptContext,
    build_diagnosis_prompt,
    build_mutation_prompt,
    build_retry_message,
    note_markdown,
)
from engine.mutators.prompt_population import PromptPopulation
from engine.mutators.scratchpad import NONE, Scratch, Scratchpad

FEEDBACK_ITEMS = 6
INSPIRATIONS = 2
ARCHIVE_SHOWN = 12  # agents shown when the policy has the meta-agent see the archive (ADAS)
CREDIT_AFTER = 4  # a child's mean over this many dev evaluations credits its model (bandit)
SWITCH_AFTER = 3  # malformed diff answers in a row after which --answer-format auto asks that model for whole files
NEAR_DUPLICATE_ASKS = 2  # with --embedding-model: a near-duplicate child is sent back this many times at most


def lineage_notes(state, parent: int) -> list[tuple[int, str]]:
    """(node, note) of the nodes on the path root -> parent that have an improvement note, root first."""
    path, node = [], parent
    while node >= 0:
        path.append(node)
        node = int(state.tree.parent[node])
    return sorted(state.archive.node_notes(path).items())


def _sent_back_as_near_duplicate(reason: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"Your edits were applied, but the child is a {reason}: it "
        "would only measure that agent again. Make a substantive change to the code as it "
        "now stands (its behaviour, not its names, comments or layout).",
    }


@dataclass(frozen=True)
class _Recorded:
    """An answer this run already paid for, found by its expansion key."""

    text: str
    call_id: int


@dataclass(frozen=True)
class PromptSettings:
    """--meta-recommendations N (0: off) with its K, and --evolve-prompts' interval (0: off)."""

    recommendations_every: int = 0
    recommendations_max: int = 5
    evolve_prompts_every: int = 0


@dataclass(frozen=True)
class AskSettings:
    """How a child is asked for: the answer format (--answer-format), a diagnosis call first (--meta-steps
    diagnose), the calls one child may take, the temperature (None: the provider's)."""

    answer_format: str = "diff"
    diagnose: bool = False
    max_attempts: int = 3
    temperature: float | None = None


@dataclass(frozen=True)
class _Expansion:
    """One expansion's fixed choices, the same on every call of its conversation."""

    parent: int
    key: str
    model: str
    answer_format: str
    novelty_below: int | None
    scratch: Scratch
    prompt: PromptRecord | None  # --evolve-prompts: the system prompt this expansion uses


class LLMMutator(AsyncMutator):
    name = "llm"

    def __init__(
        self,
        client,
        chooser,
        state,
        *,
        asking: AskSettings = AskSettings(),
        say=None,
        prompts: PromptSettings = PromptSettings(),
    ) -> None:
        """`say(line)` tells the user of a switch of answer format (None: silent)."""
        self.client = client
        self.chooser = chooser
        self.state = state
        self.answer_format = asking.answer_format
        self.diagnose = asking.diagnose
        self.max_attempts = asking.max_attempts
        self.params = {} if asking.temperature is None else {"temperature": asking.temperature}
        first = chooser.models[0]
        self.model: str = first[0] if isinstance(first, tuple) else first  # named on children that failed
        self._launched: dict[int, int] = {}
        self._say = say
        self._malformed: dict[str, int] = {}  # model -> malformed diff answers in a row
        self._rewriting = {
            detail.get("model") for *_, detail in state.archive.events("answer_format")
        }  # switched before a resume
        self.scratchpad = (
            Scratchpad(state, self._ask_for_run, every=prompts.recommendations_every, limit=prompts.recommendations_max)
            if prompts.recommendations_every
            else None
        )
        self.prompts = (
            PromptPopulation(state, self._ask_for_run, every=prompts.evolve_prompts_every)
            if prompts.evolve_prompts_every
            else None
        )

    # ----- which format each model is asked for ----------------------------
    def format_for(self, model: str) -> str:
        if self.answer_format != "auto":
            return self.answer_format
        return "rewrite" if model in self._rewriting else "diff"

    def _read(self, model: str, answer_format: str, well_formed: bool, why: str = "") -> None:
        """Count a diff answer that could (not) be read; switch the model to whole files when due."""
        if self.answer_format != "auto" or answer_format != "diff" or model in self._rewriting:
            return
        self._malformed[model] = 0 if well_formed else self._malformed.get(model, 0) + 1
        if self._malformed[model] < SWITCH_AFTER:
            return
        self._rewriting.add(model)
        self.state.archive.add_event(
            "answer_format",
            None,
            {"model": model, "from": "diff", "to": "rewrite", "malformed_in_row": SWITCH_AFTER, "last": why},
        )
        if self._say is not None:
            self._say(
                f"{model}: {SWITCH_AFTER} answers in a row held no readable SEARCH/REPLACE block (the last: "
                f"{why}); asking it for whole files from now on (--answer-format auto)"
            )

    # ----- what the prompt is made of --------------------------------------
    def _key(self, parent: int) -> str:
        """The expansion's identity: the k-th child asked of this parent, counted over the whole run."""
        if parent not in self._launched:
            asked = self.state.archive.expansions_asked(parent)
            self._launched[parent] = max(asked, int(self.state.tree.n_children[parent]))
        k = self._launched[parent]
        self._launched[parent] = k + 1
        return f"parent {parent} child {k}"

    async def _ask(self, messages: list[dict], *, model: str, purpose: str, parent: int | None, key: str):
        """A recorded answer for this key (paid before a crash) or a new call through the client.

        Looking up by key, not only by the request's hash, lets a resumed run reuse an answer whose
        prompt has since changed a little (more feedback arrived): the edits apply to the same parent.
        The rule is the resume's (`Archive.first_llm_answer_for_key`, in the run's own archive even in a
        replay); a replay's client then applies the replay's own rule to the original's archive."""
        recorded = self.state.archive.first_llm_answer_for_key(key)
        text = recorded.response.get("text") if recorded is not None and isinstance(recorded.response, dict) else None
        if recorded is not None and text is not None:
            return _Recorded(text, recorded.id)
        return await self.client.complete(
            messages, model=model, purpose=purpose, node_id=parent, key=key, **self.params
        )

    async def _ask_for_run(self, messages: list[dict], purpose: str, key: str) -> Answered | None:
        """A periodic call about the run, not one parent (the scratchpad's, a new prompt's), of the first model:
        a recorded answer for its key, else a new call; None in a replay whose original has no answer for it
        (it went on without one). engine/mutators/periodic.py says why the key names the boundary."""
        if self.client.settings.replay_only and self.client.archive.llm_answer_for_key(key) is None:
            return None
        answer = await self._ask(messages, model=self.model, purpose=purpose, parent=None, key=key)
        return Answered(answer.text, answer.call_id)

    def orphans(self) -> list[tuple[int, str]]:
        """Expansions whose model calls returned but whose child was never stored (the run was killed):
        (parent, key), oldest first. A resumed run finishes them from the recorded answers."""
        return self.state.archive.unstored_expansions()

    def _mean(self, node: int) -> float | None:
        n = int(self.state.tree.n_evals[node])
        return self.state.tree.mean(node) if n else None

    def _feedback(self, parent: int) -> list[InstanceFeedback]:
        rows = self.state.archive.worst_evaluations(parent, FEEDBACK_ITEMS)  # with a tester's runs (split arena)
        return [InstanceFeedback(r[0], r[1], r[2], r[3] or "", r[4] or "") for r in rows]

    def _lineage(self, parent: int) -> list[LineageStep]:
        path, node = [], parent
        while node >= 0:
            path.append(node)
            node = int(self.state.tree.parent[node])
        path.reverse()
        described = self.state.archive.node_descriptions(path)
        return [LineageStep(n, described.get(n) or "", self._mean(n), int(self.state.tree.n_evals[n])) for n in path]

    def _notes(self, parent: int) -> list[tuple[int, str]]:
        """The improvement notes of the lineage, root to parent: what earlier reviews planned."""
        return lineage_notes(self.state, parent)

    def _inspirations(self, parent: int, count: int = INSPIRATIONS) -> list[Inspiration]:
        tree = self.state.tree
        nodes = np.flatnonzero(tree.valid[: tree.n] & (tree.n_evals[: tree.n] > 0))
        nodes = nodes[nodes != parent]
        if len(nodes) == 0:
            return []
        means = tree.mean(nodes)
        best = nodes[np.argsort(-means, kind="stable")][:count]
        return [Inspiration(int(n), self._mean(int(n)), self.state.files(int(n))) for n in best]

    def prompt_context(
        self, files: Mapping[str, str], context: MutationContext, parent: int, answer_format: str | None = None
    ) -> PromptContext:
        task = self.state.task
        return PromptContext(
            task_description=task.description,
            entry_file=context.entry_file,
            entry_function=context.entry_function,
            entry_args=tuple(context.entry_args),
            parent_files=files,
            feedback=self._feedback(parent),
            lineage=self._lineage(parent),
            inspirations=self._inspirations(parent, ARCHIVE_SHOWN if context.whole_archive else INSPIRATIONS),
            answer_format=answer_format or self.format_for(self.model),
            archive_mode=context.whole_archive,
            notes=self._notes(parent) if self.diagnose else (),
        )

    # ----- the conversation ------------------------------------------------
    async def propose_async(
        self, parent_files: Mapping[str, str], context: MutationContext, rng: np.random.Generator
    ) -> Proposal:
        """What `context.pinned` gives (a resumed or replayed expansion) replaces the run's own choices: the
        expansion asks what it asked when it was first made."""
        parent, pinned = context.parent, context.pinned
        key = pinned.key or self._key(parent)
        model = pinned.model or self.chooser.pick(rng)
        answer_format = pinned.answer_format or self.format_for(model)
        # the nodes stored when the expansion began: what its novelty check compares with, here and in a replay
        novelty_below = pinned.novelty_below or int(self.state.tree.n)
        scratch: Scratch | None = None
        prompt_id: int | None = None
        try:
            scratch = await self.scratchpad.for_expansion(pinned.recommendations) if self.scratchpad else NONE
            prompt = await self.prompts.for_expansion(pinned.prompt) if self.prompts else None
            prompt_id = None if prompt is None else prompt.id
            expansion = _Expansion(parent, key, model, answer_format, novelty_below, scratch, prompt)
            proposal = await self._converse(parent_files, context, expansion)
            return replace(proposal, recommendations_version=self._version(scratch), prompt_id=prompt_id)
        except StopRun:  # a spent budget (BudgetExceeded), a bad key or model (LLMFatalError): the run stops
            raise
        except Exception as exc:  # a failed child (MutationError, a call failed after its retries)
            # stored with it: a resume does not adopt its answered calls again, the node names its model
            raise ExpansionFailed(
                exc,
                key=key,
                model=model,
                answer_format=answer_format,
                recommendations_version=self._version(scratch),
                prompt_id=prompt_id,
            ) from exc

    async def write_due(self) -> None:
        """The scratchpad's version and the new prompt due now (a replay's copied child would not write them)."""
        if self.scratchpad is not None:
            await self.scratchpad.for_expansion(0)
        if self.prompts is not None:
            await self.prompts.for_expansion(0)

    def _version(self, scratch: Scratch | None) -> int | None:
        """The scratchpad version a child records: None without --meta-recommendations, 0 before the first."""
        return None if self.scratchpad is None or scratch is None else scratch.version

    async def _plan(self, ctx: PromptContext, parent: int, key: str, model: str) -> tuple[PromptContext, str]:
        """With diagnose: a first call reads the failures and plans the change; the prompt carries the plan,
        and the note (the plan, or the answer as written when it is no plan) is stored with the child."""
        if not self.diagnose:
            return ctx, ""
        answer = await self._ask(
            build_diagnosis_prompt(ctx), model=model, purpose="diagnose", parent=parent, key=f"{key} diagnose"
        )
        try:
            diagnosis = parse_diagnosis(answer.text)
            return replace(ctx, diagnosis=diagnosis), note_markdown(diagnosis)
        except AnswerFormatError:
            return ctx, answer.text.strip()[:4000]  # kept as written; implement without a plan rather than lose it

    def _edited(
        self,
        text: str,
        model: str,
        answer_format: str,
        entry_file: str,
        current: dict[str, str],
        parent_files: Mapping[str, str],
        editable: EditableRegion | None,
    ) -> tuple[dict[str, str], str, dict | None]:
        """(the files after the answer's edits, why they are no child yet, the message that sends the model
        back), the last two '' and None when they are a child. Edits that applied stay for the next answer."""
        try:
            parsed = parse_answer(text, answer_format, entry_file)
        except AnswerFormatError as exc:
            self._read(model, answer_format, False, str(exc))
            again = f"Your answer could not be used ({exc}). Answer again, exactly in the format asked for."
            return current, f"malformed answer: {exc}", {"role": "user", "content": again}
        self._read(model, answer_format, True)
        if isinstance(parsed, dict):  # the "rewrite" format: {path: whole new text}
            result = apply_rewrite(current, parsed, editable)
        else:
            result = apply_blocks(current, parsed, editable)
        if result.failures:
            why = f"{len(result.failures)} edit(s) did not apply: {result.failures[0].reason}"
            return result.files, why, build_retry_message(result.failures, answer_format=answer_format)
        if result.files == dict(parent_files):
            unchanged = {"role": "user", "content": "Your edits leave the code unchanged. Propose a change."}
            return result.files, "the answer changed nothing", unchanged
        return result.files, "", None

    async def _converse(self, files: Mapping[str, str], context: MutationContext, asked: _Expansion) -> Proposal:
        parent, key, model, answer_format = asked.parent, asked.key, asked.model, asked.answer_format
        novelty_below = asked.novelty_below
        ctx = replace(
            self.prompt_context(files, context, parent, answer_format),
            recommendations=asked.scratch.items,
            recommendations_version=asked.scratch.version,
            instruction=None if asked.prompt is None else asked.prompt.text,
        )
        ctx, note = await self._plan(ctx, parent, key, model)
        editable = find_editable(files, context.entry_file)
        messages = build_mutation_prompt(ctx)
        current = dict(files)
        last = "no answer"
        novelty = self.state.embedding_novelty  # --embedding-model: ArchiveEmbeddings
        rejected: Proposal | None = None  # the last near-duplicate, stored as such when no better comes
        sent_back = 0
        for attempt in range(self.max_attempts):
            answer = await self._ask(
                messages,
                model=model,
                purpose="mutate" if attempt == 0 else "retry",
                parent=parent,
                key=f"{key} attempt {attempt}",
            )
            messages = messages + [{"role": "assistant", "content": answer.text}]
            current, why, send_back = self._edited(
                answer.text, model, answer_format, context.entry_file, current, files, editable
            )
            if send_back is not None:
                last = why
                messages.append(send_back)
                continue
            proposal = Proposal(
                files=current,
                description=extract_description(answer.text),
                model=model,
                key=key,
                answer_format=answer_format,
                novelty_below=novelty_below if novelty else None,
                note=note,
            )
            if novelty is None:
                return proposal
            reason = await novelty.check(current, node_id=parent, below=novelty_below)
            if reason is None:
                return proposal
            rejected = replace(proposal, near_duplicate=reason)
            if sent_back >= NEAR_DUPLICATE_ASKS or attempt + 1 >= self.max_attempts:
                return rejected
            sent_back += 1
            last = reason
            messages.append(_sent_back_as_near_duplicate(reason))
        if rejected is not None:
            return rejected
        raise MutationError(f"no usable answer from {model} after {self.max_attempts} calls: {last}")

    # ----- learning which model helps --------------------------------------
    def child_measured(self, node: int) -> None:
        """Credit the model that wrote `node` once its first CREDIT_AFTER dev evaluations are in."""
        tree = self.state.tree
        if int(tree.n_evals[node]) != min(CREDIT_AFTER, tree.n_instances) or node == 0:
            return
        made = self.state.archive.node(node)
        if made is None or made.mutator != self.name or made.model is None:
            return
        model, parent = made.model, made.parent_id
        parent_mean = self._mean(int(parent)) or 0.0
        self.chooser.credit(model, (self._mean(node) or 0.0) - parent_mean)

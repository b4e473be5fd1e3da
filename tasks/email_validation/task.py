"""Email validation as a Clade task: the agent is `is_valid(address) -> bool`.

Why this task: a solution that passes the tests a developer writes first can
still be wrong on what the specification really says. The dev set (ORIGINAL)
is small and typical: plain valid addresses and obvious invalid ones. The
holdout (ADVERSARIAL) is large and made by mutation from templates (dot
placement, label rules, length limits, quoting, IP literals, unicode, ...),
so a naive regex scores high on dev and clearly lower on holdout.

Oracle: the `email-validator` package (2.3.0 made the stored labels), with
its default syntax options and no network (`ORACLE_OPTIONS`): SMTPUTF8
(unicode local parts, IDN domains) allowed; quoted local parts, bracketed
IP domain literals, display names and empty local parts rejected; not
strict, so a local part over 64 characters is allowed while the whole
address must be at most 254; the domain must be globally deliverable in
form (a dot, a valid TLD, not a special-use name such as .test or .local).
The labels are stored with the addresses (`scripts/make_email_sets.py`
writes them once), so a run needs no package; the oracle itself runs only
outside any sandbox.

An instance is a batch of 25 addresses, so a score moves in steps of 0.04:
the sandbox gets the addresses only (runner.py + addresses.json), answers
come back as {"answers": [true | false | null, ...]}, and grading here
compares them with the stored labels: score = accuracy on the batch.

The arena (`--arena`, engine/arena): a tester (`tester.py`,
`propose(n, seed)`) proposes {"address", "valid"}; `confirm` asks the
oracle, here in the engine, and keeps a proposal only when the oracle agrees
with its label and the address is in neither set yet (a holdout address
never moves into dev). A tester's confirmed addresses of one round make one
instance, labelled by the oracle.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TypedDict

from engine.errors import UserError
from engine.sandbox.base import SandboxLimits
from tasks.base import ArenaTask, Grade, Instance
from tasks.packaged import choose, read_subset

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
SEED_DIR = HERE.parents[1] / "agents_seed" / "email_validation"


class OracleOptions(TypedDict):
    """validate_email's keyword options that decide validity (each a bool)."""

    check_deliverability: bool
    allow_smtputf8: bool
    allow_quoted_local: bool
    allow_domain_literal: bool
    allow_display_name: bool
    allow_empty_local: bool
    strict: bool
    globally_deliverable: bool
    test_environment: bool


# The oracle's options, spelled out (they are email-validator 2.3.0's defaults) so that a later
# release changing a default cannot silently change what "valid" means here.
ORACLE_OPTIONS: OracleOptions = {
    "check_deliverability": False,  # no DNS, no network
    "allow_smtputf8": True,  # unicode local parts and internationalized domains
    "allow_quoted_local": False,  # "john doe"@example.com is rejected
    "allow_domain_literal": False,  # user@[192.0.2.1] is rejected
    "allow_display_name": False,  # John <john@example.com> is rejected
    "allow_empty_local": False,
    "strict": False,  # local part length (64) not enforced; total length 254 is
    "globally_deliverable": True,  # a dot and a real-looking TLD; special-use names rejected
    "test_environment": False,
}
ORACLE_NOTE = (
    "email-validator {version}, validate_email(address, "
    + ", ".join(f"{k}={v}" for k, v in ORACLE_OPTIONS.items())
    + "); EmailNotValidError = invalid"
)

DESCRIPTION = """\
Email address validation. Write `is_valid(address: str) -> bool`: True when
the string is a syntactically valid email address, False otherwise. Each
instance is a batch of 25 addresses; the score is the fraction answered
right (an exception or a non-bool answer counts as wrong). "Valid" is RFC
5321/5322 addr-spec syntax as the email-validator library checks it, with no
network: a dot-atom local part (letters, digits and !#$%&'*+-/=?^_`{|}~,
dots only between atoms: none first, last or doubled), one @, and a domain
name of dot-separated labels (letters, digits, hyphens not at a label's start
or end, at most 63 characters each, a real-looking alphabetic TLD, no
special-use names such as .test, .local, .localhost, .invalid, .onion, .arpa).
Unicode letters are allowed in the local part and in the domain
(internationalized names), normalized as IDNA does; quoted local parts
("a b"@x.com), bracketed IP addresses (a@[192.0.2.1]), comments, display
names and whitespace are all invalid; the whole address must be at most 254
characters (the local part alone may exceed 64). No network and no DNS: only
the string decides. The dev feedback names a few addresses you got wrong."""


def oracle_is_valid(address: str) -> bool:
    """The ground truth (needs the email-validator package; outside any sandbox only)."""
    from email_validator import EmailNotValidError, validate_email

    try:
        validate_email(address, **ORACLE_OPTIONS)
    except EmailNotValidError:
        return False
    return True


TESTER_DESCRIPTION = """\
Write test cases for email address validators. Write `propose(n: int, seed:
int) -> list` returning n dicts {"address": str, "valid": bool}: addresses
that validators written by others are likely to get wrong, each with its
true validity. A trusted oracle checks every label: a proposal whose label
it disagrees with is dropped, and so is an address already in the test set.
Your score is the share of the current best validators that your confirmed
addresses break (one wrong answer breaks one). Use `seed` for variety: the
same seed must give the same proposals. """ + DESCRIPTION[
    DESCRIPTION.index('"Valid" is RFC') : DESCRIPTION.index("The dev feedback")
].rstrip()
MAX_ADDRESS = 512  # a proposal longer than this is refused before the oracle sees it


def load_batches(path: Path) -> list[dict]:
    """The batches of a data file, each {"id", "addresses", "labels"}, checked for shape."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"the email_validation task's data is missing: {path} ({exc.strerror or exc})") from None
    batches = data["batches"]
    for b in batches:
        if len(b["addresses"]) != len(b["labels"]) or not all(isinstance(v, bool) for v in b["labels"]):
            raise UserError(f"{path}: batch {b['id']} must hold one bool label per address")
    return batches


class EmailValidationTask(ArenaTask):
    name = "email_validation"
    description = DESCRIPTION
    entry_file = "agent.py"
    entry_function = "is_valid"
    entry_args = ("address",)
    answer_file = "answer.json"
    raw_metric = "accuracy %"
    raw_metric_note = "accuracy % = addresses classified as the email-validator oracle does; higher is better"
    limits = SandboxLimits(timeout_s=20.0, cpu_s=20, memory_mb=512, file_size_mb=16, processes=32)

    def __init__(self, instances_path: str | None = None) -> None:
        self.instances_path = instances_path

    @cached_property
    def batches(self) -> dict[str, list[dict]]:
        """{split: batches}: dev is the original (typical) set, holdout the adversarial one."""
        return {"dev": load_batches(DATA / "original.json"), "holdout": load_batches(DATA / "adversarial.json")}

    # ----- the Task protocol ---------------------------------------------------
    def hidden_paths(self) -> tuple[str, ...]:
        """The labelled sets stay out of every sandbox (agents and testers get addresses only)."""
        return (str(DATA),)

    # ----- the arena (engine/arena) ----------------------------------------------
    tester_description = TESTER_DESCRIPTION

    def tester_files(self) -> dict[str, str]:
        return {"tester.py": (SEED_DIR / "tester.py").read_text()}

    def oracle_missing(self) -> str | None:
        """Why the oracle cannot run here (its package is not installed), or None."""
        import importlib.util

        if importlib.util.find_spec("email_validator") is None:
            from engine.install import install_extra

            return f"the email_validation oracle needs the email-validator package: {install_extra('tasks')}"
        return None

    def proposal_key(self, proposal: object) -> str | None:
        """What makes two proposals the same test (the address), or None for a malformed proposal."""
        if isinstance(proposal, dict) and isinstance(proposal.get("address"), str):
            return proposal["address"]
        return None

    def instance_keys(self, instance: Instance) -> list[str]:
        return list(instance.data["addresses"])

    def confirm(self, proposal: object) -> str | None:
        """Why the oracle does not confirm this proposal, or None when it does (outside any sandbox)."""
        if not (
            isinstance(proposal, dict)
            and isinstance(proposal.get("address"), str)
            and isinstance(proposal.get("valid"), bool)
        ):
            return 'not {"address": str, "valid": bool}'
        if len(proposal["address"]) > MAX_ADDRESS:
            return f"longer than {MAX_ADDRESS} characters"
        truth = oracle_is_valid(proposal["address"])
        if truth != proposal["valid"]:
            return f"the oracle says {'valid' if truth else 'invalid'}"
        return None

    def arena_data(self, confirmed: Sequence[dict]) -> dict:
        """One instance's data from a tester's confirmed proposals (labels are the oracle's, as confirmed)."""
        return {"addresses": [p["address"] for p in confirmed], "labels": [p["valid"] for p in confirmed]}

    def seed_files(self) -> dict[str, str]:
        return {self.entry_file: (SEED_DIR / "agent.py").read_text()}

    def reference_agents(self) -> dict[str, dict[str, str]]:
        return {}

    def instances(self) -> list[Instance]:
        by_id = {split: {b["id"]: b for b in batches} for split, batches in self.batches.items()}
        pools = {split: list(ids) for split, ids in by_id.items()}
        chosen = choose(pools, {"dev": None, "holdout": None}, read_subset(self.instances_path, self.name), self.name)
        return [
            Instance(
                i, split, {"addresses": list(by_id[split][i]["addresses"]), "labels": list(by_id[split][i]["labels"])}
            )
            for split, ids in chosen.items()
            for i in ids
        ]

    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        addresses = {"addresses": instance.data["addresses"]}  # never the labels
        return {
            "runner.py": (HERE / "runner.py").read_bytes(),
            "addresses.json": json.dumps(addresses, ensure_ascii=False).encode("utf-8"),
        }

    def command(self) -> Sequence[str]:
        return [self.python or sys.executable, "runner.py"]

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        addresses, labels = instance.data["addresses"], instance.data["labels"]
        try:
            data = json.loads(answer)
        except (ValueError, UnicodeDecodeError):
            return Grade(False, {}, "answer.json is not JSON")
        answers = data.get("answers") if isinstance(data, dict) else None
        if not isinstance(answers, list) or len(answers) != len(labels):
            return Grade(
                False, {}, f'answer.json must be {{"answers": [...]}} with one entry per address ({len(labels)})'
            )
        correct = false_accepts = false_rejects = errors = 0
        wrong: list[str] = []
        for address, label, got in zip(addresses, labels, answers):
            if got is label:
                correct += 1
                continue
            if got is True:
                false_accepts += 1
            elif got is False:
                false_rejects += 1
            else:  # an exception or a non-bool answer: wrong either way
                errors += 1
            if len(wrong) < 3:
                said = "error/non-bool" if not isinstance(got, bool) else str(got)
                wrong.append(f"{address!r} should be {'valid' if label else 'invalid'} (got {said})")
        total = len(labels)
        metrics = {
            "correct": correct,
            "total": total,
            "false_accepts": false_accepts,
            "false_rejects": false_rejects,
            "errors": errors,
            "accuracy": correct / total if total else 0.0,
        }
        feedback = f"{correct}/{total} right"
        if wrong:
            feedback += "; wrong: " + "; ".join(wrong)
        return Grade(True, metrics, feedback)

    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        return float(metrics.get("accuracy", 0.0))

    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        """Accuracy over every address of the instances given (batches pooled), in percent."""
        total = sum(int(m["total"]) for m in metrics if "total" in m)
        return 100.0 * sum(int(m["correct"]) for m in metrics if "total" in m) / total if total else None

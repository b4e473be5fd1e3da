"""What an LLM-driven search on binpack costs in tokens per expansion, measured on recorded requests.

Runs a real binpack search with the LLM mutator (HGM, default prompt, diff
answers), every call going through litellm with an offline answer
(`mock_response`: a SEARCH/REPLACE block that adds a term, as a model
would), then reads the requests recorded in `llm_calls` and counts their
prompt tokens with litellm's own tokenizer for the model named (tiktoken's
cl100k/o200k encodings for OpenAI models). The answers' sizes are the mock's,
so only prompt tokens are a measurement; answer tokens are printed for
reference as what a short diff answer costs.

    python scripts/bench_llm_tokens.py                  # budget 100, openai/gpt-4o-mini's tokenizer
    python scripts/bench_llm_tokens.py --budget 200 --model openai/gpt-5-mini
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PARENT = re.compile(r"# Current code \(the parent\)\n\S+\n```python\n(.*?)\n```", re.S)


def diff_answer(model: str, messages: list[dict], attempt: int) -> str:
    """A plausible model answer: one SEARCH/REPLACE block that adds a best-fit-like term."""
    code = PARENT.search(messages[1]["content"]).group(1)
    line = [x for x in code.splitlines() if x.strip().startswith("return ")][-1]
    weight = (len(messages[1]["content"]) % 17 + 1) / 10
    return (
        f"Change: prefer bins the item fills best (weight {weight}).\n\nagent.py\n<<<<<<< SEARCH\n{line}\n"
        f"=======\n    return ({line.strip()[7:]}) - {weight} * (bins - item)\n>>>>>>> REPLACE\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--model", default="openai/gpt-4o-mini")
    args = parser.parse_args()

    import litellm

    from archive import Archive
    from engine.front.cli import build_parser
    from engine.front.run import run_from_args

    with tempfile.TemporaryDirectory() as tmp:
        cli = build_parser().parse_args(
            ["--model", args.model, "--budget", str(args.budget), "--run-dir", tmp, "--quiet", "--seed", "0"]
        )
        if run_from_args(cli, llm_mock=diff_answer) != 0:
            return 1
        (run,) = list(Path(tmp).iterdir())
        with Archive.open(run, read_only=True) as archive:
            calls = archive.successful_llm_calls()
            expansions = sum(n.mutator == "llm" for n in archive.nodes())
    rows = [(c.purpose, c.request, (c.response or {}).get("text")) for c in calls]
    prompt = [litellm.token_counter(model=args.model, messages=req["messages"]) for _, req, _ in rows]
    answer = [litellm.token_counter(model=args.model, text=text) for _, _, text in rows]
    chars = [sum(len(m["content"]) for m in req["messages"]) for _, req, _ in rows]
    print(f"binpack, HGM, budget {args.budget}: {expansions} expansions, {len(rows)} calls; tokenizer of {args.model}")
    print(
        f"prompt tokens per call: mean {sum(prompt) / len(prompt):.0f}, min {min(prompt)}, max {max(prompt)} "
        f"({sum(chars) / len(chars):.0f} characters on average)"
    )
    print(f"answer tokens per call (the mock's one-block diff): mean {sum(answer) / len(answer):.0f}")
    print(
        f"tokens per expansion: {(sum(prompt) + sum(answer)) / max(expansions, 1):.0f} "
        f"({sum(prompt) / max(expansions, 1):.0f} in, {sum(answer) / max(expansions, 1):.0f} out)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The front half: the command line, building or reopening a run, and what a run prints.

`cli` parses `python -m engine.search`; `run` builds a new run, reopens a stopped
one or replays one, and carries it through the loop (engine/loop) to its
summary (`api.run_search` does the same from Python, with a task and a
mutator of the caller's own); `opening` holds what a new, resumed and restored run share;
`snapshot` the snapshot commands and `--resume-from`; `model_access`,
`backend` and `agent_llm` check and build what the run needs (model keys, the
sandbox, the LLM client and gateway); `progress`, `summary` and `console` what
the user sees. The front may import the loop; nothing below imports the front.
"""

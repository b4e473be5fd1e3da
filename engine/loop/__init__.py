"""The loop half: one run's search, from its state in the archive to its final node.

`state` is the in-memory picture rebuilt from the archive; `scheduler` keeps W
evaluations in flight and asks the policy what to do next, with `breaker`
watching for lasting failures; `expansion` makes and stores a child,
`evaluation` runs and grades one (node, instance) in a sandbox (`RunHandles`:
the live sandbox and gateway, kept out of the state); `finale`
chooses the final node and measures holdout; `replay` (with `replay_plan`)
follows an earlier run's recorded events instead of the policy. The loop
imports neither the front (engine/front) nor the command line.
"""

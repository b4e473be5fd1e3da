"""Circle packing: 26 circles in the unit square, maximize the sum of radii (AlphaEvolve's benchmark)."""

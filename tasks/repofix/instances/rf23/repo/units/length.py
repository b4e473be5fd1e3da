TO_METRES = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mm": 0.01, "mi": 1609.344, "ft": 0.3048}


def convert(value, from_unit, to_unit):
    """Convert a length between units; ValueError for an unknown unit."""
    for unit in (from_unit, to_unit):
        if unit not in TO_METRES:
            raise ValueError(f"unknown unit: {unit}")
    return value * TO_METRES[from_unit] / TO_METRES[to_unit]

def deep_merge(base, override):
    """A new dict: override's values win; nested dicts are merged recursively. Inputs are not changed."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out

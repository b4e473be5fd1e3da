def parse_config(text):
    """Parse 'key = value' lines; '#' starts a comment line; blank lines are skipped."""
    config = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {number}: expected key = value")
        key, value = line.split("=", 1)
        config[key.strip()] = value.strip()
    return config

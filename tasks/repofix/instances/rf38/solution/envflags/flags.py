TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


def parse_bool(text):
    """Read an environment flag: case and surrounding spaces do not matter; ValueError otherwise."""
    value = text.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError(f"not a boolean: {text!r}")

def format_duration(seconds):
    """'1h 02m 03s' style text for a number of seconds (hours only when non-zero)."""
    if seconds < 0:
        raise ValueError("negative duration")
    hours = seconds // 3600
    minutes = seconds // 60 % 60
    secs = seconds % 60
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s"

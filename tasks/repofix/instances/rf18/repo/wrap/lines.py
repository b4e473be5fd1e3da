def wrap(text, width):
    """Greedy word wrap: lines of at most `width` characters (a longer word gets its own line)."""
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if len(candidate) >= width and line:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines

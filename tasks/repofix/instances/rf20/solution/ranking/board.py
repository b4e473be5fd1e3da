def leaderboard(scores, top=None):
    """Names by score, highest first; equal scores in alphabetical order."""
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    names = [name for name, _ in ranked]
    return names if top is None else names[:top]

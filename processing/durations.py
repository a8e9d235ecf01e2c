"""Durations as people read them, for the task center and the operators' pages."""


def duration_words(delta) -> str:
    """ "850 ms", "4.2 s", "3 min 5 s", "2 h 10 min"; "" for no duration."""
    if delta is None:
        return ""
    seconds = delta.total_seconds()
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"

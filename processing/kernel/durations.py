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


def moment_words(moment, now) -> str:
    """When something happened, as a reader of the page says it: "just now", "4 min ago", "2 h ago", or the
    date and time ("6 Dec, 13:29") once it is a day old."""
    if moment is None:
        return ""
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{moment.day} {moment:%b}, {moment:%H:%M}"

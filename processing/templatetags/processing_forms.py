import uuid

from django import template

register = template.Library()


@register.simple_tag
def idempotency_key() -> str:
    """``{% idempotency_key %}``: a fresh key for each rendered submission form.

    A double click or a resubmitted form sends the same key and so gets the
    same job back; the next render of the form asks for a new job.
    """
    return uuid.uuid4().hex


@register.filter
def duration_words(delta) -> str:
    """``{{ row.duration|duration_words }}``: "850 ms", "4.2 s", "3 min 5 s", "2 h 10 min"."""
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

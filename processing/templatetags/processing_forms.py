import uuid

from django import template

from processing.durations import duration_words

register = template.Library()


@register.simple_tag
def idempotency_key() -> str:
    """``{% idempotency_key %}``: a fresh key for each rendered submission form.

    A double click or a resubmitted form sends the same key and so gets the
    same job back; the next render of the form asks for a new job.
    """
    return uuid.uuid4().hex


@register.filter(name="duration_words")
def duration_words_filter(delta) -> str:
    """``{{ row.duration|duration_words }}``: "850 ms", "4.2 s", "3 min 5 s", "2 h 10 min"."""
    return duration_words(delta)

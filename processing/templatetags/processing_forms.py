import uuid

from django import template
from django.utils import timezone

from processing.kernel.durations import duration_words, moment_words

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


@register.filter(name="moment_words")
def moment_words_filter(moment) -> str:
    """``{{ output.built_at|moment_words }}``: "just now", "4 min ago", "2 h ago", "6 Dec, 13:29"."""
    return moment_words(timezone.localtime(moment) if moment else None, timezone.localtime())

from django import template

from workspace.encodings import encoding_label

register = template.Library()


@register.filter(name="encoding_label")
def encoding_label_filter(encoding: str) -> str:
    """``{{ file.encoding|encoding_label }}``: "Windows-1252", "KOI8-R", …"""
    return encoding_label(encoding or "")

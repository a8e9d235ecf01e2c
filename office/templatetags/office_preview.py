from django import template

from office.engine import office_extension

register = template.Library()


@register.filter
def office_previewable(path: str) -> bool:
    """``{% if file.path|office_previewable %}``: does this file get an Office preview?"""
    return office_extension(path or "") is not None

from django import template
from django.template.defaultfilters import date
from django.utils import timezone

register = template.Library()


@register.filter(expects_localtime=True)
def zoned(value, format_name: str = "DATETIME_FORMAT") -> str:
    """`value` in the active zone (the engine converts it first), the zone named:
    "01/12/2026 14:05 (Europe/Paris)"."""
    if not value:
        return ""
    return f"{date(value, format_name)} ({timezone.get_current_timezone_name()})"

from django import template

from backoffice.selectors import queue_entries

register = template.Library()


@register.inclusion_tag("backoffice/_queue.html")
def todo_queue() -> dict:
    """The admin home's "to handle" queue."""
    return {"entries": queue_entries()}

from django import template
from django.utils.translation import gettext

from orders.hooks import PageSection
from orders.models import OrderEvent
from orders.reminders import ENDING_SOON, ending_reminder_text

register = template.Library()


@register.simple_tag(takes_context=True)
def order_page_section(context, section: PageSection):
    """Render a section another app adds to the order page (orders.hooks): its template sees
    the page's variables and its own, as with `{% include %}`."""
    section_template = context.template.engine.get_template(section.template)
    with context.push(**section.context):
        return section_template.render(context)


@register.filter
def event_reason(event: OrderEvent) -> str:
    """The event's reason in the active language. Reasons are stored in English and found in
    the catalog as they are, except a count: the end-of-rental reminder says its hours."""
    if event.data.get("notice") == ENDING_SOON and "hours" in event.data:
        return ending_reminder_text(event.data["hours"])
    return gettext(event.reason) if event.reason else ""

from django import template

from orders.hooks import PageSection

register = template.Library()


@register.simple_tag(takes_context=True)
def order_page_section(context, section: PageSection):
    """Render a section another app adds to the order page (orders.hooks): its template sees
    the page's variables and its own, as with `{% include %}`."""
    section_template = context.template.engine.get_template(section.template)
    with context.push(**section.context):
        return section_template.render(context)

from functools import partial

from django.conf import settings
from django.urls import translate_url
from django_stubs_ext import StrOrPromise


def language_links(full_path: str) -> list[tuple[str, StrOrPromise, str]]:
    """`full_path` (query string included) in each language: (code, name, url)."""
    return [(code, name, translate_url(full_path, code)) for code, name in settings.LANGUAGES]


def site(request):
    """Store name and, for the language switcher, this very page in each language: worked out
    only when a template shows the switcher (the template calls it), not for every fragment
    a poll answers with."""
    return {
        "store_name": settings.STORE_NAME,
        "support_email": settings.SUPPORT_EMAIL,
        "language_links": partial(language_links, request.get_full_path()),
    }

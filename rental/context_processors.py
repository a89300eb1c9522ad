from django.conf import settings
from django.urls import translate_url


def site(request):
    """Store name and, for the language switcher, this very page in each language."""
    return {
        "store_name": settings.STORE_NAME,
        "support_email": settings.SUPPORT_EMAIL,
        "language_links": [
            (code, name, translate_url(request.get_full_path(), code))
            for code, name in settings.LANGUAGES
        ],
    }

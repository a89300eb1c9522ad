"""The store's legal texts: terms of sale (CGV), legal notice, privacy policy.

Each document's text is a template per language (catalog/templates/catalog/legal/); its
version lives here, in one place: change a text, change its version, and orders record the
version their customer accepted. The consent sentence of the order form is written once,
here, and shown word for word in the terms of sale.
"""

from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class LegalDocument:
    name: str  # stable key, also the API's
    slug: str  # the page's address under /<lang>/legal/
    version: str  # the date the text took effect, ISO
    title: Promise

    def template_name(self, language: str) -> str:
        return f"catalog/legal/{self.name}.{language}.html"

    def path(self, language: str) -> str:
        with translation.override(language):
            return reverse("catalog:legal", kwargs={"slug": self.slug})

    def absolute_urls(self) -> dict[str, str]:
        """The page in each language, as a partner or an e-mail links to it."""
        site = settings.SITE_URL.rstrip("/")
        return {code: f"{site}{self.path(code)}" for code, _name in settings.LANGUAGES}


LEGAL_DOCUMENTS: dict[str, LegalDocument] = {
    "cgv": LegalDocument(name="cgv", slug="cgv", version="2026-12-01", title=_("Terms of sale")),
    "legal_notice": LegalDocument(
        name="legal_notice",
        slug="mentions-legales",
        version="2026-12-01",
        title=_("Legal notice"),
    ),
    "privacy": LegalDocument(
        name="privacy", slug="confidentialite", version="2026-12-03", title=_("Privacy policy")
    ),
}
TERMS_OF_SALE = LEGAL_DOCUMENTS["cgv"]

# What the customer ticks to order, and article 7 of the terms of sale, word for word: the
# acceptance of the terms and the express request to start before the withdrawal period
# ends, acknowledging the right is lost once the rental is fully performed (L221-28 1°).
ORDER_CONSENT = _(
    "I accept the terms of sale and I expressly ask for my rental to start as soon as my "
    "payment is confirmed, before the end of the 14-day withdrawal period. I acknowledge "
    "that I lose my right of withdrawal once the rental has been fully performed."
)


def legal_document_by_slug(slug: str) -> LegalDocument | None:
    return next((doc for doc in LEGAL_DOCUMENTS.values() if doc.slug == slug), None)

"""The terms of sale, legal notice and privacy policy: in French and English, each with its
version, the seller named from the settings, and linked from every page's footer."""

import pytest

from catalog.legal import LEGAL_DOCUMENTS

pytestmark = pytest.mark.django_db

TITLES = {
    "fr": {
        "cgv": "Conditions générales de vente",
        "legal_notice": "Mentions légales",
        "privacy": "Politique de confidentialité",
    },
    "en": {"cgv": "Terms of sale", "legal_notice": "Legal notice", "privacy": "Privacy policy"},
}


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("name", list(LEGAL_DOCUMENTS))
def test_each_legal_text_is_served_in_each_language_with_its_version(client, lang, name):
    document = LEGAL_DOCUMENTS[name]
    response = client.get(f"/{lang}/legal/{document.slug}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f"<h1>{TITLES[lang][name]}</h1>" in page
    assert document.version in page
    assert f'<html lang="{lang}">' in page


def test_the_terms_of_sale_name_the_seller_and_the_withdrawal_rules(client, settings):
    settings.BILLING_SELLER = {
        **settings.BILLING_SELLER,
        "siren": "912345678",
        "name": "Calcul Loué SAS",
    }
    settings.STORE_MEDIATOR_NAME = "CM2C"
    french = client.get("/fr/legal/cgv/").content.decode()
    for fact in ("912345678", "Calcul Loué SAS", "CM2C", "L221-28 1°", "L221-25", "14 jours"):
        assert fact in french, fact
    english = client.get("/en/legal/cgv/").content.decode()
    assert "withdrawal" in english and "912345678" in english


def test_every_page_links_to_the_legal_texts_in_its_language(client):
    for lang in ("fr", "en"):
        page = client.get(f"/{lang}/").content.decode()
        for document in LEGAL_DOCUMENTS.values():
            assert f'href="/{lang}/legal/{document.slug}/"' in page


def test_an_unknown_legal_page_is_a_404(client):
    assert client.get("/fr/legal/conditions-secretes/").status_code == 404

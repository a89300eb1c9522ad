"""French first: every string of ours is translated, and no English is left on /fr/ pages."""

import html
import re
from pathlib import Path

import polib
import pytest

from catalog.models import AdviceSection, Alternative, Environment, GpuModel
from catalog.services import catalog_seed

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRECTORIES = {".venv", "node_modules"}
# Placeholders of python-format and python-brace-format strings.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdif]|%[sdif]|\{\w*\}")
ASCII_SPACES = re.compile(r"[ \t\r\n]+")


def french_po_files() -> list[Path]:
    candidates = [
        *ROOT.glob("locale/fr/LC_MESSAGES/*.po"),
        *ROOT.glob("*/locale/fr/LC_MESSAGES/*.po"),
    ]
    return sorted(
        path
        for path in candidates
        if not SKIPPED_DIRECTORIES.intersection(path.relative_to(ROOT).parts)
    )


@pytest.mark.parametrize("path", french_po_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_po_file_has_no_untranslated_or_fuzzy_entry(path):
    catalog = polib.pofile(str(path))
    untranslated = [entry.msgid for entry in catalog.untranslated_entries()]
    fuzzy = [entry.msgid for entry in catalog.fuzzy_entries()]
    assert not untranslated, f"untranslated in {path.relative_to(ROOT)}: {untranslated}"
    assert not fuzzy, f"fuzzy in {path.relative_to(ROOT)}: {fuzzy}"


def test_a_string_has_one_french_translation_across_apps():
    # Django merges the apps' catalogs: two translations of one msgid means one app loses.
    translations: dict[tuple, set[str]] = {}
    for path in french_po_files():
        for entry in polib.pofile(str(path)).translated_entries():
            key = (entry.msgctxt, entry.msgid)
            text = entry.msgstr or repr(sorted(entry.msgstr_plural.items()))
            translations.setdefault(key, set()).add(text)
    clashes = {key: texts for key, texts in translations.items() if len(texts) > 1}
    assert not clashes, f"add a context (pgettext) or agree on one translation: {clashes}"


def test_there_is_a_french_catalog_for_the_catalog_app():
    assert ROOT / "catalog/locale/fr/LC_MESSAGES/django.po" in french_po_files()


def _normalise(text: str) -> str:
    return ASCII_SPACES.sub(" ", text.replace("\u00a0", " ").replace("\u202f", " ")).strip()


def _english_pattern(msgid: str) -> re.Pattern | None:
    """A pattern for the English text of `msgid`, placeholders matching any value."""
    msgid = _normalise(msgid)
    literals = PLACEHOLDER.split(msgid)
    if len("".join(literals).strip()) < 4:
        return None
    # Bounded, so a pattern stays linear on a long page; a value is rarely longer.
    body = r".{1,60}?".join(re.escape(literal) for literal in literals)
    # Word boundaries, so "Catalog" is not found inside "Catalogue".
    start = r"(?<!\w)" if re.match(r"\w", msgid) else ""
    end = r"(?!\w)" if re.search(r"\w$", msgid) else ""
    return re.compile(start + body + end)


def english_patterns() -> dict[str, re.Pattern]:
    patterns = {}
    for path in french_po_files():
        for entry in polib.pofile(str(path)).translated_entries():
            pairs = [(entry.msgid, entry.msgstr)]
            if entry.msgid_plural:
                pairs = [
                    (entry.msgid, entry.msgstr_plural.get(0, "")),
                    (entry.msgid_plural, entry.msgstr_plural.get(1, "")),
                ]
            for msgid, msgstr in pairs:
                if len(msgid) < 4 or _normalise(msgid) == _normalise(msgstr):
                    continue
                pattern = _english_pattern(msgid)
                if pattern is not None:
                    patterns[msgid] = pattern
    return patterns


def visible_text(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL | re.IGNORECASE)
    page = re.sub(r"<!--.*?-->", " ", page, flags=re.DOTALL)
    return _normalise(html.unescape(re.sub(r"<[^>]+>", " ", page)))


FRENCH_PAGES = [
    "/fr/",
    "/fr/gpus/compare/",
    "/fr/advisor/",
    # One recommendation of each kind, so every reason is rendered once.
    "/fr/advisor/?peak_memory_gb=300&gpu_count=1&frequent_exchange=yes&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=135&gpu_count=2&frequent_exchange=yes&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=60&gpu_count=4&frequent_exchange=yes&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=60&gpu_count=1&frequent_exchange=no&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=40&gpu_count=4&frequent_exchange=yes&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=20&gpu_count=2&frequent_exchange=yes&shortening_distorts=yes",
    "/fr/advisor/?peak_memory_gb=20&gpu_count=1&frequent_exchange=no&shortening_distorts=no",
    "/fr/advisor/?peak_memory_gb=-1&gpu_count=x",
    "/fr/accounts/login/",
    "/fr/accounts/signup/",
    "/fr/legal/cgv/",
    "/fr/legal/mentions-legales/",
    "/fr/legal/confidentialite/",
]


@pytest.fixture
def french_pages(client, db):
    catalog_seed()
    slugs = GpuModel.objects.values_list("slug", flat=True)
    urls = [*FRENCH_PAGES, *(f"/fr/gpus/{slug}/" for slug in slugs)]
    pages = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        pages[url] = visible_text(response.content.decode())
    return pages


@pytest.mark.django_db
def test_no_english_string_of_ours_is_left_on_french_pages(french_pages):
    patterns = english_patterns()
    assert patterns, "no translated msgid found: are the .po files there?"
    leftovers = {
        url: sorted(msgid for msgid, pattern in patterns.items() if pattern.search(text))
        for url, text in french_pages.items()
    }
    assert not {url: found for url, found in leftovers.items() if found}


TRANSLATED_FIELDS = {
    GpuModel: ("tagline", "summary"),
    AdviceSection: ("title", "body"),
    Alternative: ("reason",),
    Environment: ("name", "description"),
}


@pytest.mark.django_db
def test_seeded_catalog_texts_exist_in_french_and_english():
    catalog_seed()
    for model, fields in TRANSLATED_FIELDS.items():
        rows = list(model.objects.all())
        assert rows, model.__name__
        for row in rows:
            for field in fields:
                french = getattr(row, f"{field}_fr")
                english = getattr(row, f"{field}_en")
                assert french and french.strip(), (model.__name__, row.pk, field, "fr")
                assert english and english.strip(), (model.__name__, row.pk, field, "en")
                assert french != english, (model.__name__, row.pk, field)


@pytest.mark.django_db
def test_french_seeded_texts_show_on_french_pages_and_english_on_english_pages(client):
    catalog_seed()
    h200 = GpuModel.objects.get(slug="h200")
    french = client.get("/fr/gpus/h200/").content.decode()
    english = client.get("/en/gpus/h200/").content.decode()
    assert html.escape(h200.tagline_fr) in french or h200.tagline_fr in french
    assert h200.tagline_en in english
    assert h200.tagline_en not in french


@pytest.mark.django_db
def test_the_check_does_find_english_on_an_english_page(client):
    # Guards the check above against passing vacuously (e.g. a pattern that never matches).
    catalog_seed()
    text = visible_text(client.get("/en/gpus/compare/").content.decode())
    patterns = english_patterns()
    found = {msgid for msgid, pattern in patterns.items() if pattern.search(text)}
    assert {"Compare the GPUs", "Memory bandwidth", "%(bandwidth)s GB/s"} <= found

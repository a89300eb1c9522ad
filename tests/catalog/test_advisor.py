from decimal import Decimal

import pytest
from django.utils import translation

from catalog.advisor import recommend_gpus

pytestmark = pytest.mark.django_db


def _ask(client, language="en", **answers):
    query = {
        "peak_memory_gb": "20",
        "gpu_count": "1",
        "frequent_exchange": "no",
        "shortening_distorts": "no",
        **answers,
    }
    return client.get(f"/{language}/advisor/", {k: v for k, v in query.items() if v is not None})


@pytest.mark.parametrize(
    ("answers", "expected_slugs", "reason_words"),
    [
        ({"peak_memory_gb": "100"}, ("h200",), "A peak of 100 GB leaves no safe margin"),
        (
            {"peak_memory_gb": "60"},
            ("h100-pcie", "a100-80gb"),
            "do not need to exchange often: the H100 PCIe",
        ),
        (
            {"peak_memory_gb": "60", "gpu_count": "4", "frequent_exchange": "yes"},
            ("h100-sxm",),
            "your 4 GPUs exchange data often: the H100 SXM",
        ),
        ({"peak_memory_gb": "40"}, ("rtx-a6000",), "too much for a 24 GB card"),
        ({"peak_memory_gb": "20"}, ("rtx-4090", "rtx-3090"), "fits a 24 GB card with headroom"),
        (
            {"peak_memory_gb": "20", "shortening_distorts": "yes"},
            ("rtx-a6000",),
            "would distort your protocol",
        ),
    ],
)
def test_advisor_recommends_from_the_measured_peak_and_says_why(
    client, seeded_catalog, answers, expected_slugs, reason_words
):
    response = _ask(client, **answers)
    assert response.status_code == 200
    page = response.content.decode()
    assert response.context["recommendation"].slugs == expected_slugs
    assert reason_words in page
    for slug in expected_slugs:
        assert f'href="/en/gpus/{slug}/configure/?environment=pytorch' in page


def test_advisor_reason_is_in_french_on_the_french_page(client, seeded_catalog):
    page = _ask(client, language="fr", peak_memory_gb="100").content.decode()
    assert "Un pic de 100\u00a0Go ne laisse pas de marge sûre" in page


def test_advisor_prefills_the_configurator_with_the_number_of_gpus(client, seeded_catalog):
    page = _ask(client, peak_memory_gb="60", gpu_count="4", frequent_exchange="yes")
    assert 'href="/en/gpus/h100-sxm/configure/?environment=pytorch&amp;quantity=4&amp;term=7"' in (
        page.content.decode()
    )


def test_a_peak_beyond_one_card_suggests_splitting_across_several_h200(client, seeded_catalog):
    response = _ask(client, peak_memory_gb="300")
    assert response.status_code == 200
    recommendation = response.context["recommendation"]
    assert recommendation.slugs == ("h200",)
    assert not recommendation.fits_one_card
    assert recommendation.quantity == 3
    page = response.content.decode()
    assert "does not fit on any single GPU" in page
    assert "quantity=3" in page


def test_a_withdrawn_recommendation_says_so_instead_of_linking(client, seeded_catalog):
    from catalog.models import GpuModel

    GpuModel.objects.filter(slug="h200").update(is_active=False)
    page = _ask(client, peak_memory_gb="100").content.decode()
    assert "not on sale right now" in page
    assert "/gpus/h200/configure/" not in page


@pytest.mark.parametrize(
    "answers",
    [
        {"peak_memory_gb": "-5"},
        {"peak_memory_gb": "0"},
        {"peak_memory_gb": "lots"},
        {"peak_memory_gb": "1000000000"},
        {"peak_memory_gb": "1e9"},
        {"peak_memory_gb": "NaN"},
        {"peak_memory_gb": "Infinity"},
        {"peak_memory_gb": None},
        {"gpu_count": "0"},
        {"gpu_count": "-1"},
        {"gpu_count": "two"},
        {"gpu_count": "1000000000"},
        {"gpu_count": None},
        {"frequent_exchange": "maybe"},
        {"frequent_exchange": None},
        {"shortening_distorts": None},
    ],
)
def test_bad_answers_show_form_errors_not_a_server_error(client, seeded_catalog, answers):
    response = _ask(client, **answers)
    assert response.status_code == 200
    assert response.context["recommendation"] is None
    assert response.context["form"].errors
    assert 'class="errorlist' in response.content.decode()


def test_a_word_typed_as_a_number_is_shown_back_in_a_valid_text_box(client, seeded_catalog):
    # A number box may only hold a number (vnu rejects value="two" on it): the typed word
    # comes back in a text box, next to its error, and nothing the visitor typed is lost.
    page = _ask(client, gpu_count="two", peak_memory_gb="1e9").content.decode()
    assert 'type="text" name="gpu_count" value="two" inputmode="numeric"' in page
    assert 'type="number" name="peak_memory_gb" value="1e9" step="0.1"' in page


def test_the_empty_advisor_shows_the_form_without_errors(client, seeded_catalog):
    response = client.get("/fr/advisor/")
    assert response.status_code == 200
    assert not response.context["form"].is_bound


def test_a_posted_form_without_csrf_is_refused_cleanly(client, seeded_catalog):
    response = client.post("/en/advisor/", {"peak_memory_gb": "20"})
    assert response.status_code in (200, 403)


class TestRecommendGpus:
    """The pure decision function, without a request or a database."""

    def _recommend(self, peak, gpu_count=1, frequent_exchange=False, shortening_distorts=False):
        return recommend_gpus(
            peak_memory_gb=Decimal(peak),
            gpu_count=gpu_count,
            frequent_exchange=frequent_exchange,
            shortening_distorts=shortening_distorts,
        )

    @pytest.mark.parametrize(
        ("peak", "expected"),
        [
            ("0.5", ("rtx-4090", "rtx-3090")),
            ("21.6", ("rtx-4090", "rtx-3090")),
            ("21.7", ("rtx-a6000",)),
            ("43.2", ("rtx-a6000",)),
            ("43.3", ("h100-pcie", "a100-80gb")),
            ("72", ("h100-pcie", "a100-80gb")),
            ("72.1", ("h200",)),
            ("141", ("h200",)),
        ],
    )
    def test_thresholds_keep_a_tenth_of_the_card_free(self, peak, expected):
        assert self._recommend(peak).slugs == expected

    def test_frequent_exchange_needs_more_than_one_gpu_to_matter(self):
        assert self._recommend("60", gpu_count=1, frequent_exchange=True).slugs == (
            "h100-pcie",
            "a100-80gb",
        )

    def test_shortening_only_matters_near_24_gb(self):
        assert self._recommend("8", shortening_distorts=True).slugs == ("rtx-4090", "rtx-3090")

    def test_a_peak_just_under_141_gb_warns_the_margin_is_thin(self):
        recommendation = self._recommend("135")
        assert recommendation.slugs == ("h200",)
        assert recommendation.notes

    def test_a_huge_peak_counts_the_h200_needed(self):
        recommendation = self._recommend("1000", gpu_count=2)
        assert recommendation.quantity == 8
        assert not recommendation.fits_one_card

    def test_the_reason_is_rendered_in_the_active_language(self):
        recommendation = self._recommend("60.5")
        with translation.override("fr"):
            assert str(recommendation.reason).startswith("Un pic de 60,5\u00a0Go")
        with translation.override("en"):
            assert str(recommendation.reason).startswith("A peak of 60.5 GB")


def test_asking_for_more_gpus_than_are_free_says_how_many_are(client, seeded_catalog):
    page = _ask(client, peak_memory_gb="20", gpu_count="30").content.decode()
    assert "units are free right now" in page
    assert "units are free right now" not in _ask(client, gpu_count="1").content.decode()

"""The advisor that answers from the model, in a real browser with JavaScript off: French
then English, from the form to the prefilled configurator; errors tied to their field."""

import re

import pytest

from tests.browser.conftest import DESKTOP

pytestmark = pytest.mark.browser


@pytest.fixture
def no_script(browser, live_server):
    """A page in a browser with JavaScript turned off: the advisor needs none."""
    context = browser.new_context(
        viewport=DESKTOP, locale="fr-FR", base_url=live_server.url, java_script_enabled=False
    )
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def test_in_french_a_70b_qlora_job_leads_to_one_80_gb_card_in_the_configurator(no_script, catalog):
    page = no_script
    page.goto("/fr/advisor/model/")
    page.get_by_role("combobox", name=re.compile("^Modèle")).select_option("llama-3.1-70b")
    page.get_by_label("QLoRA (LoRA sur des poids NF4 4 bits, double quantification)").check()
    page.get_by_label("Longueur des séquences (tokens)").fill("4096")
    page.get_by_role("button", name="Estimer et recommander").click()

    result = page.locator(".recommendation")
    assert "Notre recommandation" in result.inner_text()
    table = page.get_by_role("table", name="Pic de mémoire de tout le travail, par poste")
    for part in ("Poids", "Gradients", "États de l\u2019optimiseur", "Activations", "Total"):
        assert part in table.inner_text()
    assert "Korthikanti" in table.inner_text()
    link = result.get_by_role("link", name="Configurer 1 GPU pour 7 jours")
    href = link.get_attribute("href")
    assert any(f"/fr/gpus/{slug}/configure/" in href for slug in ("a100-80gb", "h100-pcie"))
    link.click()
    page.wait_for_url("**/configure/**")
    assert page.locator("[name=quantity]").input_value() == "1"
    assert page.locator("[name=term]:checked, select[name=term]").first.input_value() == "7"


def test_in_english_llama_3_1_8b_inference_at_8k_fits_one_rtx_4090(no_script, catalog):
    page = no_script
    page.goto("/en/advisor/model/")
    page.get_by_role("combobox", name=re.compile("^Model")).select_option("llama-3.1-8b")
    page.get_by_label("Inference (serving the model)").check()
    page.get_by_label("Context length (tokens)").fill("8192")
    page.get_by_role("button", name="Estimate and recommend").click()

    result = page.locator(".recommendation")
    assert "1 \u00d7 RTX 4090" in result.inner_text()
    assert "KV cache" in page.get_by_role("table").inner_text()
    href = result.get_by_role("link", name="Configure 1 GPU for 3 days").get_attribute("href")
    assert href == "/en/gpus/rtx-4090/configure/?environment=pytorch&quantity=1&term=3"


def test_a_wrong_value_is_announced_next_to_its_field(no_script, catalog):
    page = no_script
    page.goto("/en/advisor/model/")
    page.get_by_label("Sequence length (tokens)").fill("0")
    page.get_by_role("button", name="Estimate and recommend").click()
    field = page.get_by_label("Sequence length (tokens)")
    assert field.get_attribute("aria-invalid") == "true"
    described_by = field.get_attribute("aria-describedby") or ""
    error_ids = [ident for ident in described_by.split() if "error" in ident]
    assert error_ids, described_by
    assert "greater than or equal to 1" in page.locator(f"#{error_ids[0]}").inner_text()


def test_in_french_a_zero_3_full_fine_tune_on_two_gpus_is_answered_per_gpu(no_script, catalog):
    page = no_script
    page.goto("/fr/advisor/model/")
    page.get_by_role("combobox", name=re.compile("^Modèle")).select_option("llama-3.1-8b")
    page.get_by_label("Fine-tuning complet (tous les poids entraînés)").check()
    page.get_by_role("combobox", name="Pile d\u2019entraînement").select_option("deepspeed_zero3")
    page.get_by_label("Nombre de GPU").fill("2")
    page.get_by_role("button", name="Estimer et recommander").click()

    result = page.locator(".recommendation")
    assert re.search("2 \u00d7 H\\d00", result.inner_text()), result.inner_text()
    assert "marge de 15 %" in result.inner_text()
    table = page.get_by_role("table", name="Pic de mémoire de tout le travail, par poste")
    for part in ("Poids maîtres fp32", "Logits et perte", "Go par GPU", "Par GPU, sur 2 GPU"):
        assert part in table.inner_text()
    assert "DeepSpeed ZeRO niveau 3" in page.locator(".advisor-result").inner_text()
    link = result.get_by_role("link", name=re.compile("^Configurer 2 GPU"))
    assert "quantity=2" in link.get_attribute("href")


def test_in_english_torchtune_lora_of_70b_on_eight_gpus_keeps_the_stack_and_count(
    no_script, catalog
):
    page = no_script
    page.goto("/en/advisor/model/")
    page.get_by_role("combobox", name=re.compile("^Model")).select_option("llama-3.1-70b")
    page.get_by_label("LoRA (low-rank adapters on frozen weights)").check()
    page.get_by_role("combobox", name="Training stack").select_option("torchtune")
    page.get_by_label("Number of GPUs").fill("8")
    page.get_by_role("button", name="Estimate and recommend").click()

    result = page.locator(".recommendation")
    assert "8 \u00d7" in result.inner_text()
    table = page.get_by_role("table")
    assert "Chunked" in table.inner_text() or "CEWithChunkedOutputLoss" in table.inner_text()
    assert "Per GPU, across 8 GPUs" in table.inner_text()
    href = result.get_by_role("link", name=re.compile("^Configure 8 GPUs")).get_attribute("href")
    assert "quantity=8" in href
    # The form shows back what was asked.
    assert page.get_by_role("combobox", name="Training stack").input_value() == "torchtune"
    assert page.get_by_label("Number of GPUs").input_value() == "8"

"""POST /api/v1/advisor/ and GET /api/v1/advisor/models/: open to anyone, throttled like the
quote, errors naming their field."""

import pytest
from rest_framework.test import APIClient

from catalog.llm_models import MODELS
from catalog.services import catalog_seed

pytestmark = pytest.mark.django_db

QLORA_70B = {"model": "llama-3.1-70b", "job": "qlora", "sequence_length": 4096}


@pytest.fixture
def seeded_catalog(db):
    catalog_seed()


@pytest.fixture
def anonymous():
    return APIClient()


def test_an_anonymous_client_gets_the_memory_the_gpus_and_the_term(anonymous, seeded_catalog):
    response = anonymous.post("/api/v1/advisor/", QLORA_70B, format="json")
    assert response.status_code == 200
    body = response.json()
    memory = body["memory_gb"]
    assert set(memory) == {
        "weights",
        "master",
        "gradients",
        "optimizer",
        "activations",
        "logits",
        "kv_cache",
        "gathered",
        "overhead",
        "total",
        "per_gpu",
    }
    parts = sum(memory[key] for key in memory if key not in ("total", "per_gpu"))
    assert parts == pytest.approx(memory["total"], abs=0.3)
    explained = {part["part"]: part for part in body["explanation"]}
    assert "Korthikanti" in explained["activations"]["source"]
    assert explained["weights"]["source_url"] == "https://arxiv.org/abs/2305.14314"  # QLoRA
    recommendation = body["recommendation"]
    assert recommendation["gpu"] in {"a100-80gb", "h100-pcie", "h100-sxm", "h200"}
    assert recommendation["quantity"] == 1
    assert recommendation["term_days"] in (3, 7, 30)
    assert recommendation["fits_one_host"] is True
    assert recommendation["configure_url"] == (
        f"/en/gpus/{recommendation['gpu']}/configure/?environment=pytorch&quantity=1"
        f"&term={recommendation['term_days']}"
    )
    assert body["assumptions"]
    for alternative in body["alternatives"]:
        assert alternative["change"] and alternative["gpu"] and alternative["quantity"] >= 1


def test_a_full_fine_tune_is_sharded_and_shows_the_memory_per_gpu(anonymous, seeded_catalog):
    body = anonymous.post(
        "/api/v1/advisor/", {**QLORA_70B, "job": "full", "precision": "bf16"}, format="json"
    ).json()
    assert body["recommendation"]["gpu"] in {"h200", "h100-sxm"}
    assert body["recommendation"]["quantity"] > 1
    assert body["memory_gb"]["per_gpu"] < body["memory_gb"]["total"]


def test_a_custom_parameter_count_is_answered_with_its_estimate_said(anonymous, seeded_catalog):
    body = anonymous.post(
        "/api/v1/advisor/", {"parameters": 13_000_000_000, "job": "inference"}, format="json"
    ).json()
    assert any("estimated from the parameter count" in note for note in body["assumptions"])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model": "gpt-17"}, "model"),
        ({"sequence_length": 0}, "sequence_length"),
        ({"sequence_length": 10**7}, "sequence_length"),
        ({"lora_rank": 0}, "lora_rank"),
        ({"job": "pretraining"}, "job"),
        ({"precision": "fp8"}, "precision"),
        ({"job": "full", "precision": "nf4"}, "precision"),
        ({"job": "qlora", "precision": "bf16"}, "precision"),
        ({"model": None}, "model"),
        ({"model": "llama-2-7b", "parameters": 7_000_000_000}, "parameters"),
        ({"model": None, "parameters": 12}, "parameters"),
        ({"micro_batch": "many"}, "micro_batch"),
        ({"concurrent_sequences": -1}, "concurrent_sequences"),
        ({"gradient_checkpointing": "perhaps"}, "gradient_checkpointing"),
    ],
)
def test_bad_requests_answer_400_naming_the_field(anonymous, seeded_catalog, changes, field):
    body = {key: value for key, value in {**QLORA_70B, **changes}.items() if value is not None}
    response = anonymous.post("/api/v1/advisor/", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"], error


def test_a_body_that_is_not_an_object_is_a_400(anonymous, seeded_catalog):
    response = anonymous.post("/api/v1/advisor/", "[1, 2]", content_type="application/json")
    assert response.status_code == 400


def test_the_advisor_is_throttled_like_the_quote(anonymous, seeded_catalog, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"api": "3/min"},
    }
    statuses = [
        anonymous.post("/api/v1/advisor/", QLORA_70B, format="json").status_code for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]


def test_the_models_are_listed_with_their_architecture(anonymous):
    response = anonymous.get("/api/v1/advisor/models/")
    assert response.status_code == 200
    models = {model["slug"]: model for model in response.json()}
    assert set(models) == set(MODELS)
    llama = models["llama-3.1-70b"]
    assert llama["name"] == "Llama 3.1 70B"
    assert (llama["layers"], llama["hidden_size"], llama["attention_heads"]) == (80, 8192, 64)
    assert (llama["kv_heads"], llama["vocabulary"]) == (8, 128256)
    for required in ("llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "mistral-7b"):
        assert required in models
    for required in ("mixtral-8x7b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b"):
        assert required in models
    assert {"gemma-2-9b", "gemma-2-27b"} <= set(models)


def test_the_schema_documents_the_advisor_with_examples(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/advisor/"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["examples"]
    assert operation["responses"]["200"]["content"]["application/json"]["examples"]
    assert "400" in operation["responses"]
    assert schema["paths"]["/api/v1/advisor/models/"]["get"]["description"]

"""POST /api/v1/advisor/ and GET /api/v1/advisor/models/: open to anyone, throttled like the
quote, errors naming their field."""

import json

import pytest
from rest_framework.test import APIClient

from catalog.llm_models import MODELS
from catalog.services import catalog_seed

pytestmark = pytest.mark.django_db

QLORA_70B = {"model": "llama-3.1-70b", "job": "qlora", "sequence_length": 4096}
# About 10^15 parameters: 2,048 experts of 3 x 16,384 x 65,536 weights in each of 128 layers.
QUADRILLION_CONFIG = json.dumps(
    {
        "hidden_size": 16384,
        "num_hidden_layers": 128,
        "num_attention_heads": 128,
        "intermediate_size": 65536,
        "num_local_experts": 2048,
        "num_experts_per_tok": 8,
        "vocab_size": 128256,
    }
)


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
        ({"stack": "megatron"}, "stack"),
        ({"optimizer": "sgd"}, "optimizer"),
        ({"model": None, "config_json": "{not json"}, "config_json"),
        ({"model": None, "config_json": "[1, 2]"}, "config_json"),
        ({"model": None, "config_json": QUADRILLION_CONFIG}, "config_json"),
        ({"model": None, "config_json": '{"hidden_size": 4096}'}, "config_json"),
        ({"config_json": '{"hidden_size": 4096}'}, "config_json"),
        ({"gpus": 0}, "gpus"),
        ({"gpus": 65}, "gpus"),
        ({"model": "llama-2-7b", "sequence_length": 8192}, "sequence_length"),
        ({"model": "llama-3.1-8b", "sequence_length": 262_144}, "sequence_length"),
        ({"job": "inference", "model": "gemma-2-9b", "context_length": 16384}, "context_length"),
        ({"lora_targets": []}, "lora_targets"),
        ({"lora_targets": ["lm_head"]}, "lora_targets.0"),
        ({"job": "full", "sharding": "tensor"}, "sharding"),
        ({"job": "inference", "sharding": "zero2"}, "sharding"),
        ({"gradient_checkpointing": False, "offload_checkpoints": True}, "offload_checkpoints"),
    ],
)
def test_bad_requests_answer_400_naming_the_field(anonymous, seeded_catalog, changes, field):
    body = {key: value for key, value in {**QLORA_70B, **changes}.items() if value is not None}
    response = anonymous.post("/api/v1/advisor/", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"], error


def test_a_config_json_claiming_a_quadrillion_parameters_is_refused_with_its_count(
    anonymous, seeded_catalog
):
    body = {"job": "inference", "config_json": QUADRILLION_CONFIG}
    error = anonymous.post("/api/v1/advisor/", body, format="json").json()["error"]
    assert "billion parameters" in error["fields"]["config_json"][0]


def test_a_pasted_config_json_is_read_for_its_architecture(anonymous, seeded_catalog):
    # Llama 3.1 8B's config.json, as the Hub serves it (abridged to what memory reads).
    config = {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
    }
    listed = anonymous.post(
        "/api/v1/advisor/", {"model": "llama-3.1-8b", "job": "inference"}, format="json"
    ).json()
    pasted = anonymous.post(
        "/api/v1/advisor/", {"config_json": json.dumps(config), "job": "inference"}, format="json"
    ).json()
    assert pasted["memory_gb"]["total"] == pytest.approx(listed["memory_gb"]["total"], rel=0.01)


def test_a_model_that_allows_a_million_tokens_is_estimated_beyond_131072(anonymous, seeded_catalog):
    body = {
        "model": "qwen2.5-7b-1m",
        "job": "qlora",
        "stack": "unsloth",
        "sequence_length": 262_144,
    }
    response = anonymous.post("/api/v1/advisor/", body, format="json")
    assert response.status_code == 200
    assert response.json()["recommendation"]["gpu"]


def test_two_gpus_with_a_stack_are_answered_per_gpu_with_the_margin(anonymous, seeded_catalog):
    body = {"model": "llama-3.1-8b", "job": "full", "stack": "deepspeed_zero3", "gpus": 2}
    answer = anonymous.post("/api/v1/advisor/", body, format="json").json()
    recommendation = answer["recommendation"]
    assert recommendation["quantity"] == 2
    assert recommendation["spare_share"] >= recommendation["margin"] == 0.15
    assert answer["memory_gb"]["per_gpu"] < answer["memory_gb"]["total"]
    explained = {part["part"]: part for part in answer["explanation"]}
    # ZeRO-3's mixed precision: an fp32 master copy, divided between the two cards.
    assert explained["master"]["per_gpu_gb"] == pytest.approx(
        explained["master"]["gb"] / 2, abs=0.1
    )


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
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    asked = [example["value"] for example in examples.values()]
    for setting in ("stack", "gpus", "optimizer_in_backward", "lora_targets", "config_json"):
        assert any(setting in value for value in asked), setting
    for setting in ("kv_cache_fp8", "context_length", "concurrent_sequences", "sharding"):
        assert any(setting in value for value in asked), setting
    assert operation["responses"]["200"]["content"]["application/json"]["examples"]
    assert "400" in operation["responses"]
    assert schema["paths"]["/api/v1/advisor/models/"]["get"]["description"]

"""A model described by its own `config.json`, pasted by the customer: the architecture numbers
memory depends on, read from the keys Hugging Face Transformers writes, and refused with the
reason when the text is not such a file or describes an impossible model."""

import json
from collections.abc import Mapping

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog.llm_models import CUSTOM_PARAMETERS_MAX, CUSTOM_PARAMETERS_MIN, Architecture

CONFIG_CHARS_MAX = 100_000
# Far beyond any published model; a larger number is a typing error or an attack.
LIMITS = {
    "hidden_size": 131_072,
    "num_hidden_layers": 1024,
    "num_attention_heads": 1024,
    "num_key_value_heads": 1024,
    "head_dim": 4096,
    "intermediate_size": 1_048_576,
    "vocab_size": 4_194_304,
    "num_local_experts": 4096,
    "num_experts_per_tok": 4096,
    "max_position_embeddings": 16_777_216,
}
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


class ConfigError(ValueError):
    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


def _number(config: Mapping, key: str, default: int | None = None) -> int:
    value = config.get(key, default)
    if value is None:
        raise ConfigError(format_lazy(_("config.json has no “{key}”."), key=key))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            format_lazy(_("“{key}” in config.json must be a positive whole number."), key=key)
        )
    if value > LIMITS[key]:
        raise ConfigError(
            format_lazy(
                _("“{key}” in config.json is {value}: more than {limit}, no model has that."),
                key=key,
                value=value,
                limit=LIMITS[key],
            )
        )
    return value


def _parameters(
    *, layers: int, hidden: int, query: int, key_value: int, mlp: int, experts: int, vocab: int
) -> int:
    """Weights of a decoder as Transformers builds it: q, k, v, o, a gated MLP per expert
    (3·h·I), a router, two norms per layer, the embedding and (untied) output head."""
    attention = hidden * (query + 2 * key_value) + query * hidden
    router = hidden * experts if experts > 1 else 0
    layer = attention + experts * 3 * hidden * mlp + router + 2 * hidden
    return layers * layer + hidden + vocab * hidden


def architecture_from_config(text: str) -> Architecture:
    """The architecture a pasted `config.json` describes (its `text_config` for a model that
    also sees images). ConfigError says what is wrong."""
    if len(text) > CONFIG_CHARS_MAX:
        raise ConfigError(_("This config.json is longer than 100,000 characters."))
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        raise ConfigError(_("This is not JSON: paste the model's config.json as it is.")) from None
    if isinstance(config, dict) and isinstance(config.get("text_config"), dict):
        config = config["text_config"]
    if not isinstance(config, dict):
        raise ConfigError(_("config.json must be a JSON object ({…})."))
    hidden = _number(config, "hidden_size")
    heads = _number(config, "num_attention_heads")
    layers = _number(config, "num_hidden_layers")
    kv_heads = _number(config, "num_key_value_heads", heads)
    head_dim = _number(config, "head_dim", max(1, hidden // heads))
    mlp_key = "moe_intermediate_size" if "moe_intermediate_size" in config else "intermediate_size"
    intermediate = _number({"intermediate_size": config.get(mlp_key)}, "intermediate_size")
    vocabulary = _number(config, "vocab_size")
    expert_key = next((key for key in EXPERT_KEYS if config.get(key)), None)
    experts = (
        _number({"num_local_experts": config[expert_key]}, "num_local_experts")
        if (expert_key)
        else 1
    )
    active = _number(config, "num_experts_per_tok", 1) if experts > 1 else 1
    tied = config.get("tie_word_embeddings") is True
    context = _number(config, "max_position_embeddings", 131_072)
    parameters = _parameters(
        layers=layers,
        hidden=hidden,
        query=heads * head_dim,
        key_value=kv_heads * head_dim,
        mlp=intermediate,
        experts=experts,
        vocab=vocabulary * (1 if tied else 2),
    )
    if not CUSTOM_PARAMETERS_MIN <= parameters <= CUSTOM_PARAMETERS_MAX:
        raise ConfigError(
            format_lazy(
                _(
                    "This config.json describes {billions} billion parameters: the advisor "
                    "takes between 0.01 and 2,000 billion."
                ),
                billions=f"{parameters / 1e9:,.3g}",
            )
        )
    name = config.get("_name_or_path") or config.get("model_type") or "config.json"
    return Architecture(
        slug="config",
        name=str(name)[:80],
        parameters=parameters,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=min(kv_heads, heads),
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocabulary=vocabulary,
        tied_embeddings=tied,
        experts=experts,
        active_experts=min(active, experts),
        context_max=context,
    )

"""The open models the advisor knows by name, with the architecture numbers memory depends on.

Figures are those of each model's `config.json` on the Hugging Face Hub (hidden_size,
num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
vocab_size, tie_word_embeddings, num_local_experts) and of its model card (parameters).
A model given only by its parameter count gets an architecture estimated from it.
"""

from dataclasses import dataclass

# Beyond these the advisor refuses a custom model: nothing on sale could hold it.
CUSTOM_PARAMETERS_MIN = 10_000_000
CUSTOM_PARAMETERS_MAX = 2_000_000_000_000
# Layers of an estimated architecture have about 128 dimensions per layer of depth, as
# Llama 3 8B and Llama 2 13B do (4096/32, 5120/40).
WIDTH_PER_LAYER = 128
HEAD_DIM = 128
ESTIMATED_KV_HEADS = 8
ESTIMATED_VOCABULARY = 128_256  # Llama 3's
SMALL_VOCABULARY = 32_000


@dataclass(frozen=True)
class Architecture:
    slug: str
    name: str
    parameters: int
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    vocabulary: int
    tied_embeddings: bool = False
    # Mixture of experts: every expert's weights sit in memory, each token uses `active`.
    experts: int = 1
    active_experts: int = 1
    estimated: bool = False
    # The longest sequence the model accepts (max_position_embeddings, or what its card
    # documents with RoPE scaling).
    context_max: int = 131_072

    @property
    def embedding_parameters(self) -> int:
        """The input embedding and the output head: kept in 16 bits by 4-/8-bit loaders."""
        return self.vocabulary * self.hidden_size * (1 if self.tied_embeddings else 2)


def _model(slug: str, name: str, parameters: float, *numbers: int, **extra) -> Architecture:
    layers, hidden, heads, kv_heads, head_dim, intermediate, vocabulary = numbers
    return Architecture(
        slug=slug,
        name=name,
        parameters=int(parameters * 1e9),
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocabulary=vocabulary,
        **extra,
    )


# layers, hidden, heads, KV heads, head dim, MLP, vocabulary
LLAMA_2_7B = (32, 4096, 32, 32, 128, 11008, 32000)
LLAMA_2_13B = (40, 5120, 40, 40, 128, 13824, 32000)
LLAMA_2_70B = (80, 8192, 64, 8, 128, 28672, 32000)
QWEN_2_5_7B = (28, 3584, 28, 4, 128, 18944, 152064)
# slug, name, parameters (billions), then the numbers above; Qwen2.5 accepts 131,072 tokens
# with YaRN (its model card), Llama 3.1 as trained.
MODELS: dict[str, Architecture] = {
    model.slug: model
    for model in (
        _model("llama-2-7b", "Llama 2 7B", 6.74, *LLAMA_2_7B, context_max=4096),
        _model("llama-2-13b", "Llama 2 13B", 13.02, *LLAMA_2_13B, context_max=4096),
        _model("llama-2-70b", "Llama 2 70B", 68.98, *LLAMA_2_70B, context_max=4096),
        _model("llama-3.1-8b", "Llama 3.1 8B", 8.03, 32, 4096, 32, 8, 128, 14336, 128256),
        _model("llama-3.1-70b", "Llama 3.1 70B", 70.55, 80, 8192, 64, 8, 128, 28672, 128256),
        _model(
            "mistral-7b", "Mistral 7B", 7.24, 32, 4096, 32, 8, 128, 14336, 32000, context_max=32768
        ),
        _model(
            "mixtral-8x7b",
            "Mixtral 8x7B",
            46.70,
            *(32, 4096, 32, 8, 128, 14336, 32000),
            experts=8,
            active_experts=2,
            context_max=32768,
        ),
        _model("qwen2.5-7b", "Qwen2.5 7B", 7.62, *QWEN_2_5_7B),
        # Qwen2.5-7B-Instruct-1M: the same weights' shape, trained for a million tokens.
        _model(
            "qwen2.5-7b-1m", "Qwen2.5 7B Instruct 1M", 7.62, *QWEN_2_5_7B, context_max=1_010_000
        ),
        _model("qwen2.5-14b", "Qwen2.5 14B", 14.77, 48, 5120, 40, 8, 128, 13824, 152064),
        _model("qwen2.5-32b", "Qwen2.5 32B", 32.76, 64, 5120, 40, 8, 128, 27648, 152064),
        _model("qwen2.5-72b", "Qwen2.5 72B", 72.71, 80, 8192, 64, 8, 128, 29568, 152064),
        _model(
            "gemma-2-9b",
            "Gemma 2 9B",
            9.24,
            *(42, 3584, 16, 8, 256, 14336, 256000),
            tied_embeddings=True,
            context_max=8192,
        ),
        _model(
            "gemma-2-27b",
            "Gemma 2 27B",
            27.23,
            *(46, 4608, 32, 16, 128, 36864, 256000),
            tied_embeddings=True,
            context_max=8192,
        ),
    )
}


def _layer_parameters(hidden: int) -> int:
    """Weights of one block of an estimated model: q and o (2·h²), k and v with 8 KV heads
    of 128 (2·h·1024), a gated MLP of 3.5·h (3·h·3.5·h)."""
    return (
        2 * hidden * hidden
        + 2 * hidden * ESTIMATED_KV_HEADS * HEAD_DIM
        + 3 * hidden * (7 * hidden // 2)
    )


def architecture_estimate(*, parameters: int) -> Architecture:
    """A dense decoder of `parameters` shaped like Llama 3: grouped-query attention with 8 KV
    heads, a gated MLP of 3.5·h, a vocabulary of 128,256 tokens (32,000 under a billion
    parameters, where such a vocabulary would outweigh the layers), about 128 dimensions per
    layer of depth. The width is the multiple of 256 whose shape comes nearest the count;
    the depth then makes up the count."""
    vocabulary = ESTIMATED_VOCABULARY if parameters >= 10**9 else SMALL_VOCABULARY

    def whole(hidden: int) -> int:
        depth = max(1, hidden // WIDTH_PER_LAYER)
        return depth * _layer_parameters(hidden) + 2 * vocabulary * hidden

    hidden = min(range(256, 65_537, 256), key=lambda width: abs(whole(width) - parameters))
    embeddings = 2 * vocabulary * hidden
    layers = max(1, round((parameters - embeddings) / _layer_parameters(hidden)))
    heads = max(1, hidden // HEAD_DIM)
    billions = parameters / 1e9
    label = f"{billions:.3g}B" if billions >= 1 else f"{parameters / 1e6:.3g}M"
    return Architecture(
        slug="custom",
        name=label,
        parameters=parameters,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=min(heads, ESTIMATED_KV_HEADS),
        head_dim=HEAD_DIM,
        intermediate_size=7 * hidden // 2,
        vocabulary=vocabulary,
        estimated=True,
    )

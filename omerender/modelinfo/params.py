"""Parameter counts: OME's formatting (FormatParamCount) and the estimates its loaders share."""
from __future__ import annotations

_UNITS = ((1_000_000_000_000, "T"), (1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K"))


def format_param_count(count: int) -> str:
    """``8030261248`` → ``8.03B``, ``70000000000`` → ``70B``, ``1500000`` → ``1.5M``: OME's rules, float for float."""
    for unit, suffix in _UNITS:
        if count >= unit:
            value = float(count) / float(unit)
            if value == float(int(value)):
                return f"{int(value)}{suffix}"
            if value * 100 == float(int(value * 100)):
                return f"{value:.1f}{suffix}"
            return f"{value:.2f}{suffix}"
    return str(count)


def model_params(hidden: int, layers: int, intermediate: int, vocab: int) -> int:
    """OME's estimateModelParams: embeddings and LM head, attention and MLP per layer."""
    return (hidden * vocab + layers * (3 * hidden * hidden + hidden)
            + layers * (hidden * intermediate * 2 + hidden + intermediate) + layers * 2 * hidden + hidden * vocab)


def text_params(hidden: int, layers: int, intermediate: int) -> int:
    """OME's estimateTextParams (and estimateVisionParams, the same formula)."""
    return hidden * hidden * 4 * layers + hidden * intermediate * 2 * layers


def moe_params(hidden: int, layers: int, intermediate: int, moe_intermediate: int, routed: int, shared: int,
               vocab: int) -> int:
    """OME's estimateMoEParams: attention, shared and routed experts, router and norms per layer."""
    moe_intermediate = moe_intermediate or intermediate
    per_layer = (4 * hidden * hidden + shared * 2 * hidden * intermediate + routed * 2 * hidden * moe_intermediate
                 + hidden * routed + 2 * hidden)
    return hidden * vocab + layers * per_layer


def by_shape(table: dict, key, estimate):
    """A known size for a (hidden_size, layers, ...) shape, else the estimate (called lazily)."""
    return table[key] if key in table else estimate()

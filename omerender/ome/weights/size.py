"""How big the weights claim is: the model's ``omerender.io/weights-size`` annotation (a Kubernetes quantity),
else an estimate from ``spec.modelParameterSize`` and the weights' bytes per parameter, else a default. An
estimate or the default comes with the warning that names the annotation (docs/how-to/model-weights.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from omerender.kube.quantities import parse_quantity
from ..load import Obj
from ..selection.fields import parse_size

SIZE_ANNOTATION = "omerender.io/weights-size"
DEFAULT_GI = 100
HEADROOM = Decimal("1.2")   # tokenizer, configs, and a second copy of a file being replaced
GI = 2 ** 30
MAX_ESTIMATE = 2 ** 50  # 1Pi: beyond it the size text is a typo, and the default is used
BYTES_PER_PARAMETER = (("int4", Decimal("0.5")), ("fp4", Decimal("0.5")), ("awq", Decimal("0.5")),
                       ("gptq", Decimal("0.5")), ("fp8", Decimal(1)), ("int8", Decimal(1)))
DEFAULT_BYTES = Decimal(2)  # bf16 / fp16


@dataclass(frozen=True)
class ClaimSize:
    request: str            # the PersistentVolumeClaim's spec.resources.requests.storage
    warning: str | None     # set for an estimate or the default


def claim_size(model: Obj) -> ClaimSize:
    annotations = model.metadata.get("annotations") or {}
    if SIZE_ANNOTATION in annotations:
        return ClaimSize(_annotated(model, annotations[SIZE_ANNOTATION]), None)
    size_text = model.spec.get("modelParameterSize")
    parameters = parse_size(size_text) if isinstance(size_text, str) and len(size_text) <= 32 else None
    if parameters and parameters * DEFAULT_BYTES * HEADROOM <= MAX_ESTIMATE:
        quantization = str(model.spec.get("quantization") or "").lower()
        per = next((b for word, b in BYTES_PER_PARAMETER if word in quantization), DEFAULT_BYTES)
        gi = max(1, math.ceil(parameters * per * HEADROOM / GI))
        dtype = f"quantization {quantization}" if per != DEFAULT_BYTES else "16-bit weights"
        return ClaimSize(f"{gi}Gi", f"the weights claim is {gi}Gi, estimated from modelParameterSize {size_text} at "
                                    f"{per} bytes a parameter ({dtype}) plus 20%; {_fix(gi)}")
    return ClaimSize(f"{DEFAULT_GI}Gi", f"the weights claim is {DEFAULT_GI}Gi, the default for a model with no size "
                                        f"omerender can read; {_fix(DEFAULT_GI)}")


def _fix(gi: int) -> str:
    """The annotation to set, its example the size this claim gets: a 763Gi model is not told 20Gi."""
    return f"set the annotation {SIZE_ANNOTATION} on the model (e.g. {SIZE_ANNOTATION}: {gi}Gi) to the size of its files"


def _annotated(model: Obj, value) -> str:
    path = f"metadata.annotations.{SIZE_ANNOTATION}"
    if parse_quantity(value, path, model) <= 0:
        raise model.error(f'{path}: Invalid value: "{value}": the weights claim needs a size above 0', path)
    return str(value).strip()

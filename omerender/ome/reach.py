"""What an edit of an input others depend on reaches.

A runtime: the runtimes that inherit from it, the InferenceServices that name them, and the InferenceServices that
auto-select the runtime itself. OME renders an auto-selected runtime from its own spec, so an edit of a parent
never reaches those of its children (inheritance-and-pinning.md §5).

An AcceleratorClass, a model (BaseModel, ClusterBaseModel) or an AutoscalerPolicy: the runtimes that list the class,
and the InferenceServices that use the input, each under the runtime it renders with (:class:`Reach`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError, Report
from omerender.suggest import did_you_mean
from .accelerators.choice import choose_class, first_rule, runtime_pool
from .load import Inputs, Obj
from .pinning.revisions import runtime_ref_of
from .runtimes.inherit import Chains, rt_ref
from .selection.evaluation import evaluate
from .selection.lookup import find_runtime
from .selection.request import request_of
from .selection.resolve import resolve


@dataclass
class Node:
    runtime: Obj
    children: list["Node"] = field(default_factory=list)
    isvcs: list[Obj] = field(default_factory=list)
    auto: list[tuple[Obj, str]] = field(default_factory=list)  # auto-selected: (InferenceService, why it wins)


# KIND -> the parts after it: a cluster-scoped kind takes NAME, a namespaced one NAMESPACE/NAME
KINDS = {"ClusterServingRuntime": 1, "ServingRuntime": 2, "AcceleratorClass": 1, "ClusterBaseModel": 1,
         "BaseModel": 2, "AutoscalerPolicy": 2}
RUNTIME_KINDS = ("ClusterServingRuntime", "ServingRuntime")
FORMS = ("<name>, or KIND/<name> for ClusterServingRuntime, AcceleratorClass or ClusterBaseModel, or "
         "KIND/<namespace>/<name> for ServingRuntime, BaseModel or AutoscalerPolicy")
SHOWN_CHARS = 200  # of the argument, in a message


def ref_of(obj: Obj) -> str:
    """``KIND/<name>`` or ``KIND/<namespace>/<name>``: the form ``tree`` takes and prints."""
    return f"{obj.kind}/{obj.name}" if KINDS.get(obj.kind) == 1 else f"{obj.kind}/{obj.namespace}/{obj.name}"


def find_target(inputs: Inputs, text: str) -> Obj:
    """``<name>`` (the one input of that name: a ClusterServingRuntime before ServingRuntimes of its name, a
    ClusterBaseModel before BaseModels of its name), or ``KIND/<name>`` / ``KIND/<namespace>/<name>`` (:data:`KINDS`)."""
    parts = text.split("/")
    if len(parts) == 1:
        return _by_name(inputs, text)
    if parts[0] not in KINDS or len(parts) != KINDS[parts[0]] + 1 or not all(parts):
        raise OmeError(f'"{_shown(text)}" names no input tree can show: use {FORMS}')
    table = _table(inputs, parts[0])
    found = table.get(parts[1] if len(parts) == 2 else (parts[1], parts[2]))
    if found is None:
        raise OmeError(f'{_shown(text)} not found in the input{_hint(inputs, parts[-1], (table,))}')
    return found


def _table(inputs: Inputs, kind: str) -> dict:
    return {"ClusterServingRuntime": inputs.cluster_runtimes, "ServingRuntime": inputs.runtimes,
            "AcceleratorClass": inputs.classes, "ClusterBaseModel": inputs.cluster_models,
            "BaseModel": inputs.models, "AutoscalerPolicy": inputs.autoscaler_policies}[kind]


def _by_name(inputs: Inputs, name: str) -> Obj:
    found = [obj for obj in (inputs.cluster_runtimes.get(name), inputs.classes.get(name),
                             inputs.cluster_models.get(name)) if obj is not None]
    found += _namespaced(inputs.runtimes, name, "cluster_runtimes" if inputs.cluster_runtimes.get(name) else "")
    found += _namespaced(inputs.models, name, "cluster_models" if inputs.cluster_models.get(name) else "")
    found += _namespaced(inputs.autoscaler_policies, name, "")
    if not found:
        raise OmeError(f'"{_shown(name)}" not found in the input: no runtime, AcceleratorClass, model or '
                       f'AutoscalerPolicy has that name{_hint(inputs, name)}')
    if len(found) > 1:
        refs = sorted(ref_of(obj) for obj in found)
        raise OmeError(f'"{_shown(name)}" is ambiguous: {", ".join(refs)}; name it as KIND/<name> or '
                       "KIND/<namespace>/<name>")
    return found[0]


def _namespaced(table: dict, name: str, shadowed: str) -> list[Obj]:
    """The namespaced objects of ``name``, none when a cluster-scoped one of that name comes first."""
    return [] if shadowed else sorted((obj for (_ns, n), obj in table.items() if n == name), key=ref_of)


def _hint(inputs: Inputs, name: str, tables: tuple[dict, ...] = ()) -> str:
    """The nearest names among ``tables`` (every kind's when none)."""
    tables = tables or tuple(_table(inputs, kind) for kind in KINDS)
    names = lambda: [key if isinstance(key, str) else key[1] for table in tables for key in table]  # noqa: E731
    return did_you_mean(name, names, sum(len(t) for t in tables), inputs) if len(name) <= SHOWN_CHARS else ""


def _shown(text: str) -> str:
    """The argument as a message shows it: control characters escaped, at most :data:`SHOWN_CHARS` characters."""
    text = text if text.isprintable() else "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def build_tree(inputs: Inputs, chains: Chains, target: Obj) -> Node:
    """The runtimes whose chains (as far as they resolve) pass through ``target``, nested by parent."""
    nodes: dict[int, Node] = {id(target): Node(target)}
    runtimes = sorted(list(inputs.cluster_runtimes.values()) + list(inputs.runtimes.values()), key=rt_ref)
    for runtime in runtimes:
        chain = chains.reached(runtime)  # leaf first
        if target not in chain[1:]:
            continue
        below = chain[:chain.index(target)]
        parent = nodes[id(target)]
        for rt in reversed(below):
            if id(rt) not in nodes:
                nodes[id(rt)] = Node(rt)
                parent.children.append(nodes[id(rt)])
            parent = nodes[id(rt)]
    for isvc in sorted(inputs.isvcs, key=lambda o: (o.namespace, o.name)):
        if runtime_ref_of(isvc) is None:
            why = _auto_selected(inputs, isvc, target)
            if why is not None:
                nodes[id(target)].auto.append((isvc, why))
            continue
        named = _named_runtime(inputs, isvc)
        if named is not None and id(named) in nodes:
            nodes[id(named)].isvcs.append(isvc)
    for node in nodes.values():
        node.children.sort(key=lambda n: rt_ref(n.runtime))
    return nodes[id(target)]


def _named_runtime(inputs: Inputs, isvc: Obj) -> Obj | None:
    ref = runtime_ref_of(isvc)
    if ref is None:
        return None
    return find_runtime(inputs, isvc.namespace, ref["name"], ref.get("kind"))


def _auto_selected(inputs: Inputs, isvc: Obj, target: Obj) -> str | None:
    """Why auto-selection picks ``target`` for ``isvc`` (explain's tie-break), None when it picks another or
    none; the same selection as the render's."""
    try:
        resolution = resolve(isvc, inputs, Report())
    except OmeError:
        return None  # render reports it; the tree shows what renders
    if not resolution.auto_selected or resolution.runtime is not target:
        return None
    return evaluate(inputs, isvc.namespace, resolution.model, request_of(isvc)).tie_break


# ---------------------------------------------------------------- an AcceleratorClass, a model, an AutoscalerPolicy

@dataclass
class Use:
    isvc: Obj
    how: str                    # what in it the input reaches


@dataclass
class RuntimeUses:
    runtime: Obj
    why: str | None             # what the runtime itself holds of the input (a class it lists), else None
    uses: list[Use] = field(default_factory=list)


@dataclass
class Reach:
    target: Obj
    runtimes: list[RuntimeUses]


def reach(inputs: Inputs, chains: Chains, target: Obj) -> Reach:
    """The runtimes that hold ``target`` (an AcceleratorClass they list) and the InferenceServices that use it,
    each under the runtime it renders with; an InferenceService the render refuses is left out (render reports
    it)."""
    nodes: dict[int, RuntimeUses] = {}
    if target.kind == "AcceleratorClass":
        for runtime in _runtimes(inputs):
            why = _lists_class(_spec(chains, runtime), target.name)
            if why:
                nodes[id(runtime)] = RuntimeUses(runtime, why)
    for isvc in sorted(inputs.isvcs, key=lambda o: (o.namespace, o.name)):
        try:
            resolution = resolve(isvc, inputs, Report(), merged_spec=chains.merged_view)
            spec = resolution.runtime.spec if resolution.auto_selected else chains.merged_view(resolution.runtime)
        except OmeError:
            continue
        hows = _uses(inputs, isvc, resolution, spec, target)
        if hows:
            node = nodes.setdefault(id(resolution.runtime), RuntimeUses(resolution.runtime, None))
            node.uses += [Use(isvc, how) for how in hows]
    return Reach(target, sorted(nodes.values(), key=lambda n: rt_ref(n.runtime)))


def _runtimes(inputs: Inputs) -> list[Obj]:
    return sorted(list(inputs.cluster_runtimes.values()) + list(inputs.runtimes.values()), key=rt_ref)


def _spec(chains: Chains, runtime: Obj) -> dict:
    try:
        return chains.merged_view(runtime)
    except OmeError:
        return runtime.spec  # a broken chain: render reports it; its own spec still names what it lists


def _lists_class(spec: dict, name: str) -> str | None:
    if name in runtime_pool(spec):
        return "lists it in acceleratorRequirements.acceleratorClasses"
    formats = spec.get("supportedModelFormats")
    for entry in formats if isinstance(formats, list) else ():
        config = entry.get("acceleratorConfig") if isinstance(entry, dict) else None
        if isinstance(config, dict) and name in config:
            return "configures it in supportedModelFormats[].acceleratorConfig"
    return None


def _uses(inputs: Inputs, isvc: Obj, resolution, spec: dict, target: Obj) -> list[str]:
    if target.kind == "AcceleratorClass":
        return _class_uses(inputs, isvc, resolution.runtime, spec, target)
    if target.kind in ("BaseModel", "ClusterBaseModel"):
        if resolution.model is not target:
            return []
        return ["spec.model" + (": auto-selected this runtime, an edit may move it" if resolution.auto_selected
                                else "")]
    return [f"{c} autoscalerPolicyRef" for c in ("engine", "decoder", "router")
            if isvc.namespace == target.namespace and _policy_name(isvc.spec.get(c)) == target.name]


def _policy_name(component) -> str | None:
    ref = component.get("autoscalerPolicyRef") if isinstance(component, dict) else None
    return ref.get("name") if isinstance(ref, dict) else None


def _class_uses(inputs: Inputs, isvc: Obj, runtime: Obj, spec: dict, target: Obj) -> list[str]:
    """Per component: it gets the class, or a policy picks among a pool that holds it (an edit of the class may
    change the pick)."""
    found = []
    for component in ("engine", "decoder"):
        if component not in isvc.spec and f"{component}Config" not in spec:
            continue
        try:
            choice = choose_class(component, isvc, spec, rt_ref(runtime), inputs, Report())
        except OmeError:
            continue
        if choice.cls is target:
            found.append(f"{component} gets it from {choice.where}")
        elif target.name in runtime_pool(spec) and _policy(isvc, component):
            picked = f"picks {choice.cls.name}" if choice.cls is not None else "picks none"
            found.append(f"{component}: its policy {picked} from a pool that holds it")
    return found


def _policy(isvc: Obj, component: str) -> bool:
    """A class policy decides the component's class (the first rule of accelerators.md §2 is a policy)."""
    def mapping(value) -> dict:
        return value if isinstance(value, dict) else {}
    override = mapping(mapping(isvc.spec.get(component)).get("acceleratorOverride"))
    rule = first_rule(component, override, mapping(isvc.spec.get("acceleratorSelector")))
    return rule is not None and rule[0] == "policy"

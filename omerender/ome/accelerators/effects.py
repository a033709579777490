"""What a chosen accelerator class does to a component's runners and pods (spec: accelerators.md §3-§5).

Pure functions on plain dicts (parsed YAML); inputs are never mutated. :mod:`omerender.ome.accelerators.choice`
chooses the class; the render pipeline then calls, per InferenceService:

* :func:`class_config` with the entry chosen by the selection module (§4.1, §4.2), and
  :func:`report_config_without_model` when the InferenceService has no ``spec.model`` (I-A5);
* per runner, in this order (§4.3): :func:`apply_environment_override`, :func:`apply_class_resources`,
  :func:`apply_args_overrides` (:func:`isvc_runner_sets_resources` tells whether class resources apply);
  :func:`suppresses_parallelism` decides ``PARALLELISM_SIZE`` (§5);
* per pod: :func:`pod_node_selector` (§3.2, W-A7) and :func:`class_affinity` (§3.4).
"""
from __future__ import annotations

import re

from omerender.errors import Report
from omerender.yamlio.data import copy_data, list_or_empty, map_or_empty
from ..load import Obj

TP_ALIASES = ("--tp-size", "--tp", "--tensor-parallel-size")
PP_ALIASES = ("--pp-size", "--pp", "--pipeline-parallel-size")


# ---------------------------------------------------------------- acceleratorConfig (§4)

def class_config(entry: dict | None, cls: Obj | None) -> dict | None:
    """``entry.acceleratorConfig[<class name>]`` (exact key), or None without entry, class or key."""
    if entry is None or cls is None:
        return None
    config = map_or_empty(entry.get("acceleratorConfig")).get(cls.name)
    return config if isinstance(config, dict) else None


def report_config_without_model(component: str, runtime_spec: dict, cls: Obj | None, report: Report) -> None:
    """I-A5: call when the InferenceService has no ``spec.model``; emitted if some entry has a key for ``cls``."""
    if cls is None:
        return
    for entry in list_or_empty(runtime_spec.get("supportedModelFormats")):
        if cls.name in map_or_empty(map_or_empty(entry).get("acceleratorConfig")):
            report.info(f"{component}: acceleratorConfig for class {cls.name} not applied: the InferenceService "
                        "has no spec.model", code="accelerator-config-not-applied")
            return


def apply_environment_override(runner: dict, config: dict | None, component: str, class_name: str,
                               report: Report) -> dict:
    """§4.4: set each ``environmentOverride`` variable in ascending name order.

    A variable the runner has (every entry with that name) gets the new ``value``; a ``valueFrom`` it
    had is dropped with W-A5. Any other variable is appended as ``{name, value}``.
    """
    overrides = map_or_empty((config or {}).get("environmentOverride"))
    if not overrides:
        return runner
    result = copy_data(runner)
    env = list_or_empty(result.get("env"))
    container = result.get("name", "")
    for name in sorted(overrides):
        value = overrides[name]
        found = False
        for var in env:
            if isinstance(var, dict) and var.get("name") == name:
                found = True
                if "valueFrom" in var:
                    del var["valueFrom"]
                    report.warn(f"{component} runner {container}: environmentOverride for class {class_name} "
                                f"replaces {name}, which used valueFrom", code="environment-override-valuefrom")
                var["value"] = value
        if not found:
            env.append({"name": name, "value": value})
    result["env"] = env
    return result


def apply_class_resources(runner: dict, cls: Obj | None, isvc_runner_sets_resources: bool) -> dict:
    """§3.3: each class ``resources[]`` entry sets ``requests[name] = limits[name] = quantity`` (default "1").

    Nothing changes without a class, for a class without ``resources``, or when the InferenceService sets
    ``resources`` on this runner (the caller decides: ``spec.<component>.runner`` or the same-role
    ``leader.runner``/``worker.runner``). Other resource names are left alone.
    """
    entries = list_or_empty(cls.spec.get("resources")) if cls is not None else []
    if isvc_runner_sets_resources or not entries:
        return runner
    result = dict(runner)   # only its top level changes: the rest is shared, read-only
    resources = map_or_empty(result.get("resources"))
    limits, requests = dict(map_or_empty(resources.get("limits"))), dict(map_or_empty(resources.get("requests")))
    for entry in entries:
        quantity = map_or_empty(entry).get("quantity")
        quantity = "1" if quantity is None else str(quantity)
        limits[entry["name"]] = quantity
        requests[entry["name"]] = quantity
    result["resources"] = {**resources, "limits": limits, "requests": requests}
    return result


def isvc_runner_sets_resources(isvc_component: dict | None, role: str | None = None) -> bool:
    """§3.3: the InferenceService's ``spec.<component>.runner``, or for ``role`` ``leader``/``worker`` also its
    ``spec.<component>.<role>.runner``, has a non-empty ``limits``, ``requests`` or ``claims``."""
    component = map_or_empty(isvc_component)
    runners = [component.get("runner")]
    if role in ("leader", "worker"):
        runners.append(map_or_empty(component.get(role)).get("runner"))
    return any(map_or_empty(map_or_empty(runner).get("resources")).get(key)
               for runner in runners for key in ("limits", "requests", "claims"))


def suppresses_parallelism(config: dict | None) -> bool:
    """§5: ``tensorParallelismOverride`` has at least one field with a non-null value (``{}`` counts as unset)."""
    override = map_or_empty((config or {}).get("tensorParallelismOverride"))
    return any(value is not None for value in override.values())


# ---------------------------------------------------------------- args rewriting (§4.5, §4.6)

def apply_args_overrides(runner: dict, config: dict | None) -> dict:
    """§4.5 ``runtimeArgsOverride`` on ``args``, then §4.6 ``tensorParallelismOverride`` (TP, then PP)."""
    config = config or {}
    result = dict(runner)   # only its top level changes (args are a new list): the rest is shared, read-only
    override = [str(arg) for arg in list_or_empty(config.get("runtimeArgsOverride"))]
    args = merge_runtime_args(list_or_empty(result.get("args")), override)
    if args or "args" in result:
        result["args"] = args
    parallelism = map_or_empty(config.get("tensorParallelismOverride"))
    for field, aliases in (("tensorParallelSize", TP_ALIASES), ("pipelineParallelSize", PP_ALIASES)):
        size = parallelism.get(field)
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            result = rewrite_parallel_flag(result, aliases, size)
    return result


def _is_multiline(args: list) -> bool:
    return bool(args) and isinstance(args[0], str) and ("\n" in args[0] or "\\" in args[0])


def _tokens(items: list) -> list[str]:
    tokens: list[str] = []
    for item in items:
        text = str(item)
        if "\n" in text or "\\" in text:
            for line in text.split("\n"):
                tokens.append(line.strip().rstrip("\\").strip())
        else:
            tokens.append(text.strip())
    return [token for token in tokens if token]


def _token_key(token: str) -> str:
    if not token.startswith("-"):
        return token
    if "=" in token:
        return token.split("=", 1)[0]
    return token.split()[0]


def _groups(tokens: list[str]) -> list[tuple[str, list[str]]]:
    groups, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        nxt = tokens[index + 1] if index + 1 < len(tokens) else None
        if "=" not in token and nxt is not None and not nxt.startswith("-"):
            groups.append((_token_key(token), [token, nxt]))
            index += 2
        else:
            groups.append((_token_key(token), [token]))
            index += 1
    return groups


def merge_runtime_args(args: list, override: list[str]) -> list:
    """§4.5: merge ``override`` into ``args`` by flag key; returns a new list.

    Empty override: ``args`` unchanged; empty ``args``: the override as written. Otherwise both are
    tokenised and grouped; a group whose key already exists replaces it in place (a repeated key in
    ``args`` keeps its first position and the later content), new keys are appended. Multi-line input
    (``args[0]`` holds a newline or backslash) comes back as one string joined by `` \\<newline>``.
    """
    if not override:
        return list(args)
    if not args:
        return list(override)
    merged: dict[str, list[str]] = {}
    for key, group in _groups(_tokens(args)) + _groups(_tokens(override)):
        merged[key] = group
    flat = [token for group in merged.values() for token in group]
    return [" \\\n".join(flat)] if _is_multiline(args) else flat


def rewrite_parallel_flag(runner: dict, aliases: tuple[str, ...], size: int) -> dict:
    """§4.6: set the first alias found to ``size``: in ``args`` (alias by alias), else in ``command``; never add.

    List form: an element equal to the alias that has a next element gets that element replaced; an
    element ``alias=...`` becomes ``alias=N``; only the first hit changes. Multi-line ``args``: every
    ``alias`` followed by ``=`` or whitespace and digits in ``args[0]`` becomes ``alias=N``. ``command``
    is only scanned in list form.
    """
    value = str(size)
    args = list_or_empty(runner.get("args"))
    for alias in aliases:
        rewritten = _rewrite_multiline(args, alias, value) if _is_multiline(args) else _rewrite_list(args, alias, value)
        if rewritten is not None:
            return {**runner, "args": rewritten}
    command = list_or_empty(runner.get("command"))
    for alias in aliases:
        rewritten = _rewrite_list(command, alias, value)
        if rewritten is not None:
            return {**runner, "command": rewritten}
    return runner


def _rewrite_list(items: list, alias: str, value: str) -> list | None:
    for index, item in enumerate(items):
        if item == alias and index + 1 < len(items):
            return items[:index + 1] + [value] + items[index + 2:]
        if isinstance(item, str) and item.startswith(alias + "="):
            return items[:index] + [f"{alias}={value}"] + items[index + 1:]
    return None


def _rewrite_multiline(args: list, alias: str, value: str) -> list | None:
    pattern = re.compile(re.escape(alias) + r"(?:=|\s+)\d+")
    if not pattern.search(args[0]):
        return None
    return [pattern.sub(lambda _match: f"{alias}={value}", args[0])] + list(args[1:])


# ---------------------------------------------------------------- pods (§3.2, §3.4)

def class_node_selector(cls: Obj | None) -> dict:
    """The class's ``discovery.nodeSelector`` (a copy), ``{}`` without a class or selector."""
    if cls is None:
        return {}
    return dict(map_or_empty(map_or_empty(cls.spec.get("discovery")).get("nodeSelector")))


def pod_node_selector(component: str, role: str | None, merged: dict, model_ready: dict, runtime_wide: dict,
                      cls: Obj | None, isvc_component: dict, report: Report) -> dict:
    """§3.2: an engine/decoder pod's nodeSelector from layers L1-L5, later layers overwriting keys.

    ``merged`` is L1 (the pod's merged selector, leader/worker rules included); ``model_ready`` is L2
    (``{key: "Ready"}`` or ``{}``, added only when the key is absent); ``runtime_wide`` is the runtime's
    top-level ``spec.nodeSelector`` (L3); the class selector is L4; ``isvc_component`` is the
    InferenceService's ``spec.<component>`` as written, whose ``nodeSelector`` is L5. For ``role``
    ``leader`` or ``worker``, W-A7 names each key of ``spec.<component>.<role>.nodeSelector`` that the
    class changes and L5 does not set again. The caller skips this for merged fine-tuned weights.
    """
    isvc_component = map_or_empty(isvc_component)
    selector = dict(merged or {})
    for key, value in (model_ready or {}).items():
        selector.setdefault(key, value)
    selector.update(runtime_wide or {})
    class_selector = class_node_selector(cls)
    selector.update(class_selector)
    isvc_selector = map_or_empty(isvc_component.get("nodeSelector"))
    selector.update(isvc_selector)
    if role in ("leader", "worker"):
        role_selector = map_or_empty(map_or_empty(isvc_component.get(role)).get("nodeSelector"))
        for key, old in role_selector.items():
            if key in class_selector and class_selector[key] != old and key not in isvc_selector:
                report.warn(f"{component} {role} pods: accelerator class {cls.name} sets nodeSelector "
                            f"{key}={class_selector[key]} over {old} from spec.{component}.{role}.nodeSelector",
                            code="accelerator-node-selector-override")
    return selector


def class_affinity(pod_spec: dict, cls: Obj | None, isvc_component: dict) -> dict:
    """§3.4: the pod spec with ``affinity.nodeAffinity`` set to the class's, when the rule allows.

    Only when the class has ``discovery.affinity.nodeAffinity``, the InferenceService's ``spec.<component>``
    (``isvc_component``, as written) has no ``affinity``, and the pod's merged affinity has no
    ``nodeAffinity``. The pod's podAffinity/podAntiAffinity stay; the class's are never used.
    """
    if cls is None:
        return pod_spec
    node_affinity = map_or_empty(map_or_empty(cls.spec.get("discovery")).get("affinity")).get("nodeAffinity")
    current = map_or_empty(pod_spec.get("affinity"))
    if (node_affinity is None or map_or_empty(isvc_component).get("affinity") is not None
            or current.get("nodeAffinity") is not None):
        return pod_spec
    result = copy_data(pod_spec)
    others = {key: value for key, value in map_or_empty(result.get("affinity")).items() if key != "nodeAffinity"}
    result["affinity"] = {"nodeAffinity": copy_data(node_affinity), **others}
    return result

"""The legacy kustomize exec plugin contract (``python -m omerender.gitops kustomize-plugin CONFIG``): the
config file path as argument, resources as a YAML stream on stdin and stdout, adapted to the KRM function.
``omerender build`` installs it for ``kubectl kustomize``, which runs legacy exec plugins only."""
from __future__ import annotations

import stat
import sys
from pathlib import Path

import yaml

from omerender.errors import OmeError
from omerender.yamlio.emit import dump, dump_stream
from omerender.yamlio.reading import read_file
from omerender.yamlio.yamlread import Budget, load_all, load_one, yaml_error_text

PLUGIN_API_VERSION = "omerender.io/v1alpha1"
PLUGIN_KIND = "OMERender"


def install_legacy_plugin(plugin_home: str) -> str:
    """Write the legacy exec plugin for OMERender under ``plugin_home``; return its path.

    It runs this Python's omerender, so the plugin works whatever is on PATH.
    """
    folder = Path(plugin_home) / PLUGIN_API_VERSION / PLUGIN_KIND.lower()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PLUGIN_KIND
    path.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m omerender.gitops kustomize-plugin \"$@\"\n",
                    encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def legacy_plugin(config_text: str, resources_text: str) -> tuple[str, list[str], int]:
    """Run the KRM function for one legacy exec plugin call: (stdout YAML stream, stderr lines, exit code)."""
    from .krm import run_with_lines

    budget = Budget()  # the config and the resources are one input: one set of limits
    try:
        config = load_one(config_text, budget)
        items = [d for d in load_all(resources_text, budget) if d is not None]
    except yaml.YAMLError as err:
        return "", [f"error: YAML from kustomize: {yaml_error_text(err)}"], 1
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                     "functionConfig": config}
    output, code, lines = run_with_lines(dump(resource_list))
    return ("" if code else dump_stream(output.get("items") or [])), lines, code


def plugin_main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "kustomize-plugin":
        sys.stderr.write("usage: python -m omerender.gitops kustomize-plugin CONFIG_FILE < resources.yaml\n")
        return 2
    from .krm import read_input

    try:
        config_text = read_file(argv[1])
        resources_text = read_input(sys.stdin)
    except OmeError as err:
        sys.stderr.write(err.message().line() + "\n")
        return 1
    stream, lines, code = legacy_plugin(config_text, resources_text)
    for line in lines:
        sys.stderr.write(line + "\n")
    sys.stdout.write(stream)
    return code

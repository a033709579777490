"""Write plugins/argocd/plugin.yaml's spec into plugins/argocd/helm-values.yaml's configs.cmp.plugins.omerender.

    python scripts/helm-values-plugin.py

The Helm values carry the plugin's definition for the chart's argocd-cmp-cm ConfigMap; plugin.yaml is its source
(tests/test_install.py fails while the two differ). Only the configs: block is rewritten; the rest keeps its
comments.
"""
from __future__ import annotations

from pathlib import Path

import yaml

ARGOCD = Path(__file__).resolve().parents[1] / "plugins" / "argocd"


class Dumper(yaml.SafeDumper):
    """Multi-line text as a literal block, as plugin.yaml writes the init script."""


Dumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def main() -> None:
    spec = yaml.safe_load((ARGOCD / "plugin.yaml").read_text())["spec"]
    values = ARGOCD / "helm-values.yaml"
    text = values.read_text()
    start, end = text.index("\nconfigs:\n") + 1, text.index("\nrepoServer:\n")
    block = yaml.dump({"configs": {"cmp": {"create": True, "plugins": {"omerender": spec}}}}, Dumper=Dumper,
                      sort_keys=False, width=120, default_flow_style=False)
    comment = ("    # The key is the plugin's name; the chart writes it as omerender.yaml in argocd-cmp-cm with this spec,\n"
               "    # plugins/argocd/plugin.yaml's (written by scripts/helm-values-plugin.py, checked by the tests).\n")
    block = block.replace("    plugins:\n", "    plugins:\n" + comment.replace("    #", "      #"), 1)
    values.write_text(text[:start] + block + text[end:])


if __name__ == "__main__":
    main()

"""YAML out: one stream, keys sorted as kubectl prints them, no anchors."""
from __future__ import annotations

import yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _NoAliasDumper(_Dumper):
    def ignore_aliases(self, data):  # rendered objects share label maps; print each in full
        return True


def dump(obj) -> str:
    return yaml.dump(obj, Dumper=_NoAliasDumper, sort_keys=True, default_flow_style=False,
                     allow_unicode=True, width=1 << 16)


def dump_stream(objects: list) -> str:
    return "".join("---\n" + dump(o) for o in objects) if objects else ""

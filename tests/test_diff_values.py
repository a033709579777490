"""``omerender diff`` shows a changed scalar's values inline: ``old -> new`` in text, ``old`` → ``new`` in
markdown, and every changed field's values in JSON (docs/how-to/review-a-change.md)."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURES, run_cli
from omerender.diff.values import shorten
from test_diff import head_of

BASE = FIXTURES / "diff" / "base"
IMAGE = "registry.example.com/inference/very/long/path/to/the/serving/image"


def test_a_runtime_gpu_change_shows_each_argument_env_value_and_quantity(tmp_path):
    run = run_cli("diff", str(BASE), str(head_of(tmp_path, "gpu-count")))
    assert run.code == 0
    assert """\
  ~ apps/v1 Deployment chat-a-engine
      spec.template.spec.containers[name=ome-container].args[3]: --tp-size=1 -> --tp-size=2
      spec.template.spec.containers[name=ome-container].env[PARALLELISM_SIZE].value: 1 -> 2
      spec.template.spec.containers[name=ome-container].resources.limits["nvidia.com/gpu"]: 1 -> 2
      spec.template.spec.containers[name=ome-container].resources.requests["nvidia.com/gpu"]: 1 -> 2
""" in run.stdout


def _sides(tmp_path: Path, before: dict, after: dict) -> tuple[Path, Path]:
    sides = []
    for name, data in (("base", before), ("head", after)):
        side = tmp_path / name
        side.mkdir()
        (side / "cm.yaml").write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "settings", "namespace": "llm"}, **data}))
        sides.append(side)
    return sides[0], sides[1]


def test_long_values_keep_both_ends_absent_keys_and_maps(tmp_path):
    base, head = _sides(tmp_path, {"data": {"image": f"{IMAGE}:v1.0.0", "gone": "x", "empty": "a"},
                                   "binaryData": {"k": "YQ=="}},
                        {"data": {"image": f"{IMAGE}:v1.0.1", "empty": ""}, "immutable": True})
    run = run_cli("diff", str(base), str(head))
    assert run.code == 0
    assert run.stdout.split("\n\n")[1] == """\
Pass-through objects:
  ~ v1 ConfigMap llm/settings
      binaryData: absent
      data.empty: a -> ""
      data.gone: x -> absent
      data.image: registry.example.com/inferenc…th/to/the/serving/image:v1.0.0 -> \
registry.example.com/inferenc…th/to/the/serving/image:v1.0.1
      immutable: absent -> true
""".replace("binaryData: absent", "binaryData")
    comment = run_cli("diff", str(base), str(head), "--format", "markdown").stdout
    assert ("- changed `v1 ConfigMap llm/settings`: `binaryData`, `data.empty` `a` → `\"\"`, `data.gone` `x` → "
            "`absent`, `data.image` `registry.example.com/inferenc…th/to/the/serving/image:v1.0.0` → "
            "`registry.example.com/inferenc…th/to/the/serving/image:v1.0.1`, `immutable` `absent` → `true`") in comment
    result = json.loads(run_cli("diff", str(base), str(head), "--format", "json").stdout)
    [obj] = result["objects"]
    assert obj["fields"] == ["binaryData", "data.empty", "data.gone", "data.image", "immutable"]
    assert obj["changes"] == [{"field": "binaryData", "base": {"k": "YQ=="}},
                              {"field": "data.empty", "base": "a", "head": ""},
                              {"field": "data.gone", "base": "x"},
                              {"field": "data.image", "base": f"{IMAGE}:v1.0.0", "head": f"{IMAGE}:v1.0.1"},
                              {"field": "immutable", "head": True}]


def test_a_list_of_scalars_that_grew_is_shown_whole_and_shortened(tmp_path):
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "llm"},
              "spec": {"selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "img", "args": ["--a"]}]}}}}
    base, head = tmp_path / "base", tmp_path / "head"
    base.mkdir(), head.mkdir()
    (base / "d.yaml").write_text(json.dumps(deploy))
    deploy["spec"]["template"]["spec"]["containers"][0]["args"] = ["--a", "--port=8080", "--tp-size=8",
                                                                   "--mem-fraction-static=0.9"]
    (head / "d.yaml").write_text(json.dumps(deploy))
    run = run_cli("diff", str(base), str(head))
    assert "      spec.template.spec.containers[name=c].args: [\"--a\"] -> " \
           "[\"--a\", \"--port=8080\", \"--tp-…, \"--mem-fraction-static=0.9\"]\n" in run.stdout


def test_control_characters_in_a_value_are_escaped(tmp_path):
    base, head = _sides(tmp_path, {"data": {"k": "a"}}, {"data": {"k": "line\n\x1b[2J|`x`"}})
    run = run_cli("diff", str(base), str(head))
    assert "      data.k: a -> line\\n\\x1b[2J|`x`\n" in run.stdout
    comment = run_cli("diff", str(base), str(head), "--format", "markdown").stdout
    assert "`data.k` `a` → `` line\\n\\x1b[2J\\|`x` ``" in comment and "\x1b" not in comment


def test_the_shortening_rule():
    assert shorten("x" * 60) == "x" * 60
    assert shorten("a" * 29 + "b" * 2 + "c" * 30) == "a" * 29 + "…" + "c" * 30
    assert len(shorten("y" * 1000)) == 60


def test_lists_kubernetes_merges_by_key_show_their_items_by_key(tmp_path):
    """issue 40: env by the variable's name, containers and volumes by name, ports by containerPort, volumeMounts
    by mountPath; an item one side lacks shows as absent; a key that could read as path syntax is quoted."""
    def pod(env, ports, mounts):
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "llm"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"volumes": [{"name": "dshm", "emptyDir": {}}],
                                               "containers": [{"name": "side", "image": "s"},
                                                              {"name": "main", "image": "img", "env": env,
                                                               "ports": ports, "volumeMounts": mounts}]}}}}
    base = pod([{"name": "A", "value": "1"}, {"name": "PARALLELISM_SIZE", "value": "16"}],
               [{"containerPort": 8080, "name": "http"}], [{"name": "dshm", "mountPath": "/dev/shm"}])
    head = pod([{"name": "PARALLELISM_SIZE", "value": "2"}, {"name": "A", "value": "1"},
                {"name": "x].y\n", "value": "z"}],
               [{"containerPort": 8080, "name": "http1"}], [{"name": "dshm", "mountPath": "/dev/shm", "readOnly": True}])
    (tmp_path / "base").mkdir(), (tmp_path / "head").mkdir()
    (tmp_path / "base" / "d.yaml").write_text(json.dumps(base))
    (tmp_path / "head" / "d.yaml").write_text(json.dumps(head))
    run = run_cli("diff", str(tmp_path / "base"), str(tmp_path / "head"))
    main = "spec.template.spec.containers[name=main]"
    assert f"      {main}.env[PARALLELISM_SIZE].value: 16 -> 2\n" in run.stdout
    assert f'      {main}.env["x].y\\n"]\n' in run.stdout  # a whole item is not shown inline; its key is quoted
    assert f"      {main}.ports[containerPort=8080].name: http -> http1\n" in run.stdout
    assert f"      {main}.volumeMounts[mountPath=/dev/shm].readOnly: absent -> true\n" in run.stdout
    result = json.loads(run_cli("diff", str(tmp_path / "base"), str(tmp_path / "head"), "-o", "json").stdout)
    assert result["objects"][0]["fields"] == [f"{main}.env[PARALLELISM_SIZE].value", f'{main}.env["x].y\\n"]',
                                              f"{main}.ports[containerPort=8080].name",
                                              f"{main}.volumeMounts[mountPath=/dev/shm].readOnly"]

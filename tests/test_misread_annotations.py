"""Annotation values OME reads otherwise than they look (issue 32), beyond the ingress ones (test_fix_messages.py):
the pod webhook's on/off keys, merged weights, the runtime profile marker and the deployment mode, on the
InferenceService, its components and its runtime; and the OMENative topology fields in a runtime's component
configs. Each asserts its exact text, its ``file:line:column`` and what the render does."""
from __future__ import annotations

import shutil

from conftest import FIXTURES, run_cli

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
RUNTIME = "ServingRuntime llama-demo/sglang-llama-3-2-3b"
NOT_TRUE = 'is not "true": OME reads only "true" as true, so'
WRITE = 'write "true" or "false"'
MODES = "is not RawDeployment, OMENative, MultiNode or VirtualDeployment: OME skips a mode it does not know, as if " \
        "the annotation were absent"


def _app(tmp_path, isvc_meta: str = "", engine: str = "", runtime_meta: str = "", engine_config: str = ""):
    """The quickstart with text added under the InferenceService's metadata and spec.engine, and under the
    runtime's metadata and spec.engineConfig."""
    app = tmp_path / "app"
    shutil.copytree(FIXTURES / "quickstart", app)
    isvc, runtime = app / "isvc.yaml", app / "runtime.yaml"
    isvc.write_text(isvc.read_text().replace("  namespace: llama-demo\n", f"  namespace: llama-demo\n{isvc_meta}", 1)
                    .replace("    maxReplicas: 1\n", f"    maxReplicas: 1\n{engine}"))
    runtime.write_text(runtime.read_text()
                       .replace("  namespace: llama-demo\n", f"  namespace: llama-demo\n{runtime_meta}", 1)
                       .replace("  engineConfig:\n", f"  engineConfig:\n{engine_config}"))
    return app, isvc, runtime


def _annotation_lines(run) -> list[str]:
    return [line for line in run.placed_lines if ": annotation " in line]


def test_values_ome_reads_otherwise_get_one_warning_each_at_the_annotation(tmp_path):
    app, isvc, runtime = _app(
        tmp_path,
        isvc_meta="  annotations:\n"
                  '    ome.io/enable-metric-aggregation: "yes"\n'
                  "    ome.io/deploymentMode: virtualdeployment\n"
                  '    ome.io/fine-tuned-serving-with-merged-weights: "TRUE"\n',
        engine="    annotations:\n"
               '      rdma.ome.io/auto-inject: "True"\n'
               "      ome.io/deploymentMode: PDDisaggregated\n"
               '      ome.io/enable-prometheus-scraping: "true "\n',
        runtime_meta="  annotations:\n"
                     '    ome.io/runtime-profile: "yes"\n',
        engine_config="    annotations:\n"
                      '      ome.io/inject-serving-sidecar: "1"\n'
                      '      ome.io/inject-model-init: enabled\n'
                      "      ome.io/deploymentMode: multinode\n")
    run = run_cli("render", str(app))
    assert run.code == 0, run.stderr
    on_runtime = f"warning: {runtime}:{{}}: {RUNTIME}: annotation "
    on_isvc = f"warning: {isvc}:{{}}: {ISVC}: annotation "
    assert _annotation_lines(run) == [
        on_runtime.format("8:5") + f'ome.io/runtime-profile: "yes" {NOT_TRUE} this runtime is no profile to OME, which '
        f"does not require spec.disabled: true of it; {WRITE}",
        on_runtime.format("25:7") + f'ome.io/inject-serving-sidecar: "1" {NOT_TRUE} no serving-sidecar container is '
        f"added; {WRITE}",
        on_runtime.format("26:7") + f'ome.io/inject-model-init: "enabled" {NOT_TRUE} no model-init container is added, '
        f"and the pods mount the base model as usual; {WRITE}",
        on_runtime.format("27:7") + f'ome.io/deploymentMode: "multinode" {MODES}; did you mean "MultiNode"?',
        on_isvc.format("9:5") + f'ome.io/enable-metric-aggregation: "yes" {NOT_TRUE} metric aggregation is off, '
        f"whatever the cluster's metricsAggregator says; {WRITE}",
        on_isvc.format("11:5") + f'ome.io/fine-tuned-serving-with-merged-weights: "TRUE" {NOT_TRUE} the pods mount '
        f"the base model's weights as usual; {WRITE}",
        on_isvc.format("10:5") + f'ome.io/deploymentMode: "virtualdeployment" {MODES}; did you mean '
        f'"VirtualDeployment"?',
        on_isvc.format("19:7") + f'rdma.ome.io/auto-inject: "True" {NOT_TRUE} no RDMA profile is applied; {WRITE}',
        on_isvc.format("21:7") + f'ome.io/enable-prometheus-scraping: "true " {NOT_TRUE} OME sets no '
        f"prometheus.io/port and path for scraping, whatever the cluster's metricsAggregator says; {WRITE}",
        on_isvc.format("20:7") + f'ome.io/deploymentMode: "PDDisaggregated" {MODES}']
    assert run.codes.count("misread-annotation") == 7 and run.codes.count("unknown-deployment-mode") == 3
    # what OME does, the render does: the InferenceService is rendered, as a Deployment, without the RDMA profile,
    # the serving sidecar or model-init, and with the base model mounted
    pod = run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]
    main = pod["spec"]["containers"][0]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["ome-container"]
    assert "initContainers" not in pod["spec"] and "securityContext" not in main
    assert any(e["name"] == "MODEL_PATH" for e in main["env"])
    assert "prometheus.io/port" not in pod["metadata"]["annotations"]


def test_well_formed_values_get_no_warning(tmp_path):
    app, _, _ = _app(
        tmp_path,
        isvc_meta="  annotations:\n"
                  '    ome.io/enable-metric-aggregation: "false"\n'
                  '    ome.io/fine-tuned-serving-with-merged-weights: "false"\n',
        engine="    annotations:\n"
               '      rdma.ome.io/auto-inject: "true"\n'
               "      ome.io/deploymentMode: RawDeployment\n"
               '      ome.io/enable-prometheus-scraping: "true"\n',
        runtime_meta="  annotations:\n"
                     '    ome.io/runtime-profile: "false"\n',
        engine_config="    annotations:\n"
                      '      ome.io/inject-serving-sidecar: "false"\n'
                      '      ome.io/inject-model-init: "false"\n')
    run = run_cli("render", str(app))
    assert run.code == 0, run.stderr
    assert run.codes == ["chart-defaults", "auto-selected-runtime"]
    pod = run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]
    assert pod["spec"]["containers"][0]["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA applied
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9091"


def test_a_hostile_value_stays_on_its_line(tmp_path):
    app, isvc, _ = _app(tmp_path, isvc_meta="  annotations:\n"
                                            '    ome.io/enable-metric-aggregation: "yes\\nerror: forged\\e[31m"\n')
    run = run_cli("render", str(app))
    assert run.code == 0, run.stderr
    assert _annotation_lines(run) == [
        f"warning: {isvc}:9:5: {ISVC}: annotation ome.io/enable-metric-aggregation: "
        f'"yes\\nerror: forged\\x1b[31m" {NOT_TRUE} metric aggregation is off, whatever the cluster\'s '
        f"metricsAggregator says; {WRITE}"]
    assert not any(line.startswith("error") for line in run.lines)


def test_omenative_topology_fields_in_a_runtime_get_one_warning_each_at_the_runtime(tmp_path):
    app, _, runtime = _app(tmp_path, engine_config="    topologyKey: kubernetes.io/hostname\n"
                                                   "    topologySpread: Required\n"
                                                   "    topologySpreadKey: topology.kubernetes.io/zone\n")
    text = runtime.read_text()
    runtime.write_text(text + "  decoderConfig:\n    topologySpread: Preferred\n")
    run = run_cli("render", str(app))
    assert run.code == 0, run.stderr
    where = f"warning: {runtime}:{{}}: {RUNTIME}: spec.{{}} is ignored: "
    placed = "; a render places pods as Kubernetes schedules them"
    lines = text.count("\n")
    assert [line for line in run.placed_lines if "is ignored" in line] == [
        where.format("22:5", "engineConfig.topologyKey") + "OME keeps each OMENative Instance's pods in one topology "
        "domain of this node label" + placed,
        where.format("23:5", "engineConfig.topologySpread") + "OME spreads OMENative Instances across topology "
        "domains, Preferred or Required" + placed,
        where.format("24:5", "engineConfig.topologySpreadKey") + "OME spreads OMENative Instances across the topology "
        "domains of this node label" + placed,
        where.format(f"{lines + 2}:5", "decoderConfig.topologySpread") + "OME spreads OMENative Instances across "
        "topology domains, Preferred or Required" + placed]
    assert run.codes == ["chart-defaults"] + ["inert-field"] * 4 + ["auto-selected-runtime"]
    plain = tmp_path / "plain"
    shutil.copytree(FIXTURES / "quickstart", plain)
    assert run.stdout == run_cli("render", str(plain)).stdout   # the fields change nothing rendered

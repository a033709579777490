"""render.md §15: the worked example renders to exactly the documented objects."""
from conftest import CHART_DEFAULTS_INFO, FIXTURES, ROOT, load_yaml, run_cli, validate_k8s


def test_worked_example_renders_exactly_the_documented_objects():
    run = run_cli("render", str(FIXTURES / "worked-example"))
    assert run.code == 0, run.stderr
    assert run.lines == [CHART_DEFAULTS_INFO]
    expected = load_yaml(ROOT / "tests" / "data" / "worked-example.expected.yaml")
    assert run.objects == expected


def test_worked_example_objects_validate_against_kubernetes_schema():
    run = run_cli("render", str(FIXTURES / "worked-example"))
    assert [o["kind"] for o in run.objects] == [
        "ClusterBaseModel", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
        "ServiceAccount", "Role", "RoleBinding", "Deployment", "Service", "PodDisruptionBudget", "Service"]
    for obj in run.objects:
        validate_k8s(obj)

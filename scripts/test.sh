#!/usr/bin/env bash
# The project's test command (README and .ci/run): installs the real tools the tests run
# (standalone kustomize from Debian; kubectl with its built-in kustomize from the test extra),
# then runs the whole suite. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tools.sh
python -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[test]'
exec python -m pytest -q "$@"

#!/usr/bin/env bash
# The steps of the omerender GitHub Action (action.yml at the repository's root), kept here so that no input
# is ever pasted into a script: the inputs arrive as environment variables.
#   install  a virtual environment in $RUNNER_TEMP with omerender from $GITHUB_ACTION_PATH (the action's own
#            version), its bin directory added to $GITHUB_PATH for the steps after this one
#   run      omerender $OMERENDER_COMMAND --messages github $OMERENDER_ARGS (split on whitespace); render's YAML
#            goes to a file (printed YAML could hold lines GitHub reads as workflow commands), diff's Markdown
#            to a file and, unless OMERENDER_SUMMARY is "false", to $GITHUB_STEP_SUMMARY; the step's exit status
#            is omerender's
set -euo pipefail

install() {
    local venv="$RUNNER_TEMP/omerender-venv"
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "::error title=omerender::omerender needs Python 3.11 or later; set the action's python-version input"; exit 1; }
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"
    "$venv/bin/omerender" --version
    echo "$venv/bin" >> "$GITHUB_PATH"
}

run() {
    local args=() status=0
    read -r -a args <<< "${OMERENDER_ARGS:-}"
    local omerender="$RUNNER_TEMP/omerender-venv/bin/omerender"
    case "${OMERENDER_COMMAND:-}" in
        render)
            local rendered="$RUNNER_TEMP/omerender-rendered.yaml"
            "$omerender" render --messages github "${args[@]}" > "$rendered" || status=$?
            if [ -s "$rendered" ]; then echo "rendered=$rendered" >> "$GITHUB_OUTPUT"; fi ;;
        diff)
            local report="$RUNNER_TEMP/omerender-diff.md"
            "$omerender" diff --messages github --format markdown "${args[@]}" > "$report" || status=$?
            echo "report=$report" >> "$GITHUB_OUTPUT"
            if [ "${OMERENDER_SUMMARY:-true}" != false ] && [ -s "$report" ]; then
                cat "$report" >> "$GITHUB_STEP_SUMMARY"
            fi ;;
        check|validate)
            "$omerender" "$OMERENDER_COMMAND" --messages github "${args[@]}" || status=$? ;;
        *)
            echo "::error title=omerender::the action's command input must be check, render, diff or validate"
            exit 2 ;;
    esac
    return "$status"
}

case "${1:-}" in
    install) install ;;
    run) run ;;
    *) echo "usage: github-action.sh install|run" >&2; exit 2 ;;
esac

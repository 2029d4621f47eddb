#!/usr/bin/env bash
# Step 1 of the GitHub Action: installs faultgate-rs into its own venv under $RUNNER_TEMP and puts
# the venv's bin directory on PATH for the next steps (through $GITHUB_PATH).
set -euo pipefail

venv="${RUNNER_TEMP:?RUNNER_TEMP is not set}/faultgate-venv"
python3 -m venv "$venv"
if [[ -n "${FAULTGATE_WHEEL:-}" ]]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$FAULTGATE_WHEEL"
else
  "$venv/bin/pip" install --quiet --disable-pip-version-check "faultgate-rs==${FAULTGATE_VERSION:?no version given}"
fi
"$venv/bin/faultgate" --version
echo "$venv/bin" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"

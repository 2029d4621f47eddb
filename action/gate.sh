#!/usr/bin/env bash
# Step 2 of the GitHub Action: runs `faultgate check` with the action's inputs, appends the Markdown
# summary to $GITHUB_STEP_SUMMARY, records verdict / exit-code / audit-dir in $GITHUB_OUTPUT, and exits
# with faultgate's exit code. Inputs arrive as environment variables, never spliced into the script,
# so a value cannot run as shell code.
set -uo pipefail

: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
: "${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set}"
out="${RUNNER_TEMP:?RUNNER_TEMP is not set}/faultgate"
rm -rf "$out"
mkdir -p "$out"

# Whitespace-separated lists; glob patterns are left to faultgate, which expands them itself.
read -r -d '' -a traces <<<"${INPUT_TRACES:-}" || true
read -r -d '' -a extra <<<"${INPUT_ARGS:-}" || true
if [[ ${#traces[@]} -eq 0 ]]; then
  echo "::error title=faultgate::the traces input is empty"
  echo "exit-code=2" >>"$GITHUB_OUTPUT"
  exit 2
fi

args=(check "${traces[@]}")
[[ -n "${INPUT_BAND:-}" ]] && args+=(--band "$INPUT_BAND")
[[ -n "${INPUT_POLICY:-}" ]] && args+=(--policy "$INPUT_POLICY")
[[ -n "${INPUT_GOLDEN:-}" ]] && args+=(--golden "$INPUT_GOLDEN")
[[ -n "${INPUT_CHECKS:-}" ]] && args+=(--check "$INPUT_CHECKS")
args+=("${extra[@]}" --markdown "$out/summary.md" --audit "$out/audit")

faultgate "${args[@]}"
code=$?

verdict=""
if [[ -f "$out/audit/verdict.json" ]]; then
  verdict=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["verdict"])' "$out/audit/verdict.json")
fi
if [[ -f "$out/summary.md" ]]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
else
  {
    echo "## faultgate: error"
    echo
    echo "\`faultgate check\` exited $code before writing a summary; see the step log."
  } >>"$GITHUB_STEP_SUMMARY"
fi
{
  echo "verdict=$verdict"
  echo "exit-code=$code"
  if [[ -d "$out/audit" ]]; then echo "audit-dir=$out/audit"; fi
} >>"$GITHUB_OUTPUT"
exit "$code"

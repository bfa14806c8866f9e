"""The pre-flight gate: a small fixed battery, a verdict per bias, exit 1 when a fail threshold is crossed.

    python eval/preflight.py --judge smollm2-135m-instruct
    python eval/preflight.py --judge my-judge --backend openai --base-url http://localhost:8000/v1 --thresholds gate.yaml

The same as ``biasaware preflight``; see biasaware/evaluation/preflight.py.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("preflight"))

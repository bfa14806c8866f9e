"""Bias-sensitivity evaluation: Acc_ori, Acc_inj and BSR per bias, category and overall.

    python eval/bias_sensitivity.py --judge smollm2-135m-instruct --data runs/bench --out runs/eval
    python eval/bias_sensitivity.py --judge minilm-l6 --mode reward --data runs/bench --out runs/eval-rm
    python eval/bias_sensitivity.py --out runs/eval --rescore --policy judgebiasbench

The same as ``biasaware eval bias``; see biasaware/evaluation/evaluate.py (and the modules it names) and biasaware/evaluation/metrics.py.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("eval", "bias"))

"""General judge benchmarks (RewardBench, JudgeBench, RMB, RM-Bench, LLMBar, EvalBiasBench).

    python eval/general_benchmarks.py --judge smollm2-135m-instruct --benchmark ../shared/data/llmbar --out runs/llmbar
    python eval/general_benchmarks.py --judge minilm-l6 --mode reward --benchmark rewardbench --out runs/rb

The same as ``biasaware eval general``; see biasaware/data/upstream.py and biasaware/evaluation/general.py.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("eval", "general"))

"""Scoring-bias probes (Li et al. 2025): rubric order, score ids and reference-answer scores.

    python eval/scoring_bias.py --judge smollm2-135m-instruct --data ../shared/data/biggen/sample_responses.json --limit 20 --out runs/scoring
    python eval/scoring_bias.py --judge gpt-4o --backend openai --data items.jsonl --templates desc,roman,ref-1,ref-5 --out runs/gpt4o-scoring

The same as ``biasaware eval scoring``; see biasaware/evaluation/scoring.py and biasaware/judging/score_prompts.py.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("eval", "scoring"))

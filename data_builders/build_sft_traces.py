"""Build teacher reasoning traces for SFT, in the judge output format (biasaware/judging/judge_format.py).

    python data_builders/build_sft_traces.py --out runs/traces [--n 100] [--teacher rule|llm]
        [--llm-model gpt-4o | --llm-base-url http://localhost:8000/v1 --llm-model NAME] [--config FILE]

The same as ``biasaware build traces``: per bias, --n probes (default 100) built as for the
benchmark; the teacher judges each injected view; a trace is kept when its verdict matches the
label and its format is right. The built-in corpus has a rule teacher (no model); other sources
need a teacher model. See biasaware/data/builders.py and biasaware/data/teachers.py.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("build", "traces"))

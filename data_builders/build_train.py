"""Build bias-augmented training rows {prompt, chosen, rejected, bias_negatives}.

    python data_builders/build_train.py --out runs/train [--source ...] [--negatives 4] [--config FILE]

The same as ``biasaware build train``; see biasaware/data/builders.py for the design.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("build", "train"))

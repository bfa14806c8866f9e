"""Build bias-augmented training rows {prompt, chosen, rejected, bias_negatives}.

    python data_builders/build_train.py --out runs/train [--source ...] [--negatives 4] [--config FILE]

The same as ``biasaware build train``; see biasaware/data/builders.py for the design.
"""

import sys

from biasaware.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "train", *sys.argv[1:]]))

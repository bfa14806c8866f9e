"""Build the bias benchmark: original/injected twins for each of the 12 biases.

    python data_builders/build_bench.py --out runs/bench [--source builtin|helpsteer3|FILE] [--config FILE]

The same as ``biasaware build bench``; see biasaware/data/builders.py for the design.
"""

import sys

from biasaware.cli import script

if __name__ == "__main__":
    sys.exit(script("build", "bench"))

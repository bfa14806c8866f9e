"""``python -m biasaware.cli``: the ``biasaware`` command (``torchrun ... -m biasaware.cli eval bias``)."""

import sys

from biasaware.cli import main

sys.exit(main())

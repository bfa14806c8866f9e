"""``python -m biasaware``: the same command line as ``biasaware``."""

from biasaware.cli import main

raise SystemExit(main())

"""Experiments: the quickstart, the generative study and sweeps, side by side over shared parts
(:mod:`biasaware.experiments.parts`)."""

"""Evaluation: running judges over probes and benchmarks, the metrics, and the reports."""

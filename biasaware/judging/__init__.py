"""Judges: models, LLM clients, prompt templates, output formats and verdict parsers, behind ``load_judge``."""

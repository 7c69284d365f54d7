"""Scoring: answer matchers, embeddings, the checkpoint engine, the run scorer and paper-style reports.

Profiles in ``evaluation.benchmarks`` compute each paper's metrics from plain ``items.Item`` data;
``runner`` loads a run from the store, scores it and writes CheckpointResult rows.
"""

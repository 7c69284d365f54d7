"""Tools runtime, harness, scoring, judges, statistics and per-benchmark profiles. No Textual here."""

"""LLM judges: versioned prompt templates (files), an OpenAI-compatible endpoint, output parsers,
a record/replay cache keyed by prompt hash, and Verdict rows (many judges per target)."""

"""Harness tests use the scripted OpenAI-compatible server shipped in tests/support."""

from tests.support.scripted_openai import scripted_openai  # noqa: F401  (registers the fixture)

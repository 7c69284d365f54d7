"""The tool sets of chainmark's own benchmarks, one module each; building one is cheap (schemas only,
no heavy imports). Each benchmark's plugin names its module's ``build`` (``store.builtin_plugins``),
and the registry builds it on first use; the set modules depend only on ``evaluation.tools.toolset``."""

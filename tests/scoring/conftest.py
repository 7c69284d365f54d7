from tests.support.scripted_openai import scripted_openai  # noqa: F401  (fixture)

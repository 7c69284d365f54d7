"""One error type for refused review actions, so the CLI prints them as a clean line."""


class ReviewError(ValueError):
    """A review request the rules refuse; the message names the offending value and what to do."""

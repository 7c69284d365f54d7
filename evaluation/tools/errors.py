"""How a tool says "that input is wrong": an error below both the results and the image helpers."""


class ToolError(Exception):
    """A tool-level failure with a message meant for the caller (and the model): bad input, no backend."""

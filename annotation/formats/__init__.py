"""Import/export of the seed benchmarks' own formats, one module per benchmark.

``annotation.formats.api`` holds the operations (import/export a dataset or a run); ``registry``
maps a format name to its module; ``FormatError`` is what a malformed file raises.
"""

from annotation.formats.errors import FormatError
from annotation.formats.registry import FORMAT_NAMES, get_format

__all__ = ["FORMAT_NAMES", "FormatError", "get_format"]

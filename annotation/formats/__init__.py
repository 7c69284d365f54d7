"""Import/export of the benchmarks' own formats, one module per benchmark (named by its plugin).

``annotation.formats.api`` holds the operations (import/export a dataset or a run); ``registry``
maps a format name to its module; ``FormatError`` is what a malformed file raises.
"""

from annotation.formats.errors import FormatError
from annotation.formats.registry import format_names, get_format

__all__ = ["FormatError", "format_names", "get_format"]

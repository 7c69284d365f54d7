"""The prompt-template syntax judges and authored rubrics share, in a module light enough for ``--help``.

Why apart from ``store.rubrics``: the judge templates are read by command modules at import time (their
``--help`` lists the judges), and ``store.rubrics`` brings the database layer with it.
"""

from __future__ import annotations

import re

# A line that is only ``{{images}}``: where a template's images go.
IMAGES_LINE = re.compile(r"^\s*\{\{\s*images\s*\}\}\s*$")

"""The one error an importer raises: it names the file, the record and the field, so a person can fix it."""

from __future__ import annotations


class FormatError(ValueError):
    """Input that does not match the benchmark's format; the import's transaction is rolled back when this is raised."""

    def __init__(self, file: object, record: object = None, field: str | None = None, message: str = "invalid"):
        self.file = str(file)
        self.record = None if record is None else str(record)
        self.field = field
        self.message = message
        where = [self.file]
        if self.record is not None:
            where.append(f"record {self.record}")
        if field:
            where.append(f"field {field}")
        super().__init__(f"{': '.join(where)}: {message}")

"""``store.storable``: escaping what a database cannot store, and telling a refused store from a bad row."""

from __future__ import annotations

import errno

import sqlalchemy.exc as sa_exc

from store.storable import storable, write_failure


def test_storable_escapes_surrogates_everywhere_and_nul_only_when_asked() -> None:
    value = {"a\ud800": ["x\udfff", {"k": "n\x00"}], "n": float("nan"), "s": {2, 1}, 3: (1, b"z")}
    out, notes = storable(value, nul=True)
    assert out == {"a\\ud800": ["x\\udfff", {"k": "n\\u0000"}], "n": "nan", "s": [1, 2], "3": [1, "b'z'"]}
    assert notes == [
        "NUL escaped",
        "bytes stored as text",
        "int key stored as text",
        "lone surrogate escaped",
        "non-finite number stored as text",
        "set stored as a list",
    ]
    assert storable("n\x00", nul=False) == ("n\x00", [])
    assert storable({"plain": [1, 2.5, None, True]}) == ({"plain": [1, 2.5, None, True]}, [])


class _Orig(Exception):
    def __init__(self, sqlstate: str | None):
        super().__init__("x")
        self.sqlstate = sqlstate


def test_write_failure_tells_a_refusing_store_from_a_bad_row() -> None:
    assert write_failure(OSError(errno.ENOSPC, "No space left on device"))
    assert write_failure(OSError(errno.EROFS, "Read-only file system"))
    assert not write_failure(OSError(errno.ENOENT, "No such file"))  # a tool's missing file is not the store's
    assert write_failure(sa_exc.OperationalError("UPDATE", {}, _Orig(None)))  # sqlite: full, locked, read-only
    assert write_failure(sa_exc.OperationalError("UPDATE", {}, _Orig("53100")))  # PostgreSQL disk full
    assert not write_failure(sa_exc.OperationalError("UPDATE", {}, _Orig("40P01")))  # deadlock: retry the row
    assert write_failure(sa_exc.InternalError("UPDATE", {}, _Orig("25006")))  # read-only transaction
    assert not write_failure(sa_exc.DataError("INSERT", {}, _Orig("22021")))  # a bad value: that row's problem
    assert not write_failure(TypeError("Object of type set is not JSON serializable"))

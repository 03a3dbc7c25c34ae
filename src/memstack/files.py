"""Reading a file a person names: a request, a data set, an agent definition.

One reader, so every command says the same about a file it cannot use (missing, a directory, not readable, not
UTF-8 text) in one line that names the file and what to do, instead of a traceback: a data set saved in another
encoding read as a 33-line ``UnicodeDecodeError`` from three commands. ``-`` reads standard input.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memstack.errors import InputError, MemstackError

__all__ = ["read_text"]


def read_text(path: str | Path, what: str, *, hint: str = "", error: type[MemstackError] = InputError) -> str:
    """The whole text of ``path`` (``-``: standard input), decoded as UTF-8 (a byte-order mark is dropped).

    ``what`` names the file in messages ("request file"), ``hint`` says how it is passed ("pass it with --data");
    failures raise ``error`` (``InputError`` by default)."""
    tail = f"; {hint}" if hint else ""
    if str(path) == "-":
        where, data = "standard input", sys.stdin.buffer.read()
    else:
        where = str(path)
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise error(f"cannot read {what} {where}: there is no such file{tail}") from None
        except IsADirectoryError:
            raise error(f"cannot read {what} {where}: it is a directory, not a file{tail}") from None
        except OSError as exc:
            raise error(f"cannot read {what} {where}: {exc.strerror or exc}{tail}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{what} {where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, column {column}): "
            "save it as UTF-8"
        ) from None

"""Reading memstack's own export document (:mod:`memstack.users`) for an import, and refusing what cannot be
trusted before anything is written.

A document is read whole (it is one JSON object), so its size is bounded first: ``max_bytes`` (default
:data:`MAX_IMPORT_BYTES`, 256 MiB) and a larger one is refused with the way out (import over the CLI, which reads
the file, or raise the bound); the HTTP route is bounded by the server's body limit before this is reached. Then:

- the format and version: version 2 (this memstack's) and version 1 are read; another is refused, naming the
  versions this memstack reads;
- the shape: every section a list of objects, each memory with its ``id``, ``stored``, ``history`` and ``hides``,
  each session with its ``id`` and lists; a section missing means the document was cut or edited;
- the integrity check (version 2): the ``sha256`` recomputed from the records as parsed (:class:`memstack.users.
  Digest`) must equal the one written at the export. JSON cut short fails to parse; a record, the tenant or the user
  id changed after the export fails the check. Version 1 had no digest: it is read without one (``verified``
  false), its messages' store-internal ``seq`` dropped and a job's missing ``key`` taken from its id.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memstack.errors import ImportRefused, InputError
from memstack.types import RecordKind, UserRecord, check_id
from memstack.users import EXPORT_FORMAT, EXPORT_VERSION, READABLE_VERSIONS, SECTIONS, Digest, dumps

__all__ = ["MAX_IMPORT_BYTES", "UserDocument", "read_document"]

#: The largest document an import reads (it is parsed whole).
MAX_IMPORT_BYTES = 256 * 1024 * 1024

_KINDS: dict[str, RecordKind] = {section: kind for kind, section in SECTIONS.items()}
#: Per section, the fields every record must have and the type of each.
_REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "memories": {"id": str, "stored": bool, "history": list, "hides": list},
    "sessions": {"id": str, "turns": list, "messages": list, "artifacts": list, "snapshots": list},
    "contexts": {"context_id": str},
    "jobs": {"id": str, "kind": str},
    "dropped_captures": {"count": int},
}


@dataclass(frozen=True, slots=True)
class UserDocument:
    """One user's export document, checked: whose it is, its version, its records by section (in the shape of
    :data:`~memstack.users.EXPORT_VERSION`) and whether its ``sha256`` was checked (false for version 1)."""

    tenant: str
    user_id: str
    version: int
    sections: Mapping[str, list[dict[str, Any]]]
    verified: bool

    def records(self) -> Iterator[UserRecord]:
        """Every record, section by section, as :meth:`memstack.store.base.UserData.export` yields them."""
        for section, items in self.sections.items():
            for item in items:
                yield UserRecord(_KINDS[section], item)

    @property
    def empty(self) -> bool:
        return not any(self.sections.values())


def _refuse(message: str) -> ImportRefused:
    return ImportRefused(f"{message}; nothing was imported")


def _parse(source: str | bytes, max_bytes: int) -> Any:
    size = len(source.encode() if isinstance(source, str) else source)
    if size > max_bytes:
        raise _refuse(
            f"the document is {size} bytes, more than the {max_bytes} an import reads at once: import it with "
            "`memstack users import FILE` on the server's machine, or raise max_bytes"
        )
    try:
        return json.loads(source)
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise _refuse(
            f"the document is not one complete JSON object{where}: it was cut short or is not an export; "
            "export the user again (`memstack users export USER`)"
        ) from None


def _check_record(section: str, index: int, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _refuse(f"{section}[{index}] is not a JSON object")
    for name, kind in _REQUIRED[section].items():
        value = item.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _refuse(f"{section}[{index}] has no valid {name!r}: the document was edited or is not an export")
    return item


def _upgrade_v1(sections: dict[str, list[dict[str, Any]]]) -> None:
    """Version 1 → version 2 in place: messages lose ``seq``, jobs gain ``key`` (their id)."""
    for session in sections["sessions"]:
        for message in session["messages"]:
            if isinstance(message, dict):
                message.pop("seq", None)
    for job in sections["jobs"]:
        job.setdefault("key", job["id"])


def read_document(source: str | bytes | Mapping[str, Any], *, max_bytes: int = MAX_IMPORT_BYTES) -> UserDocument:
    """``source`` (JSON text, or already parsed) as a checked :class:`UserDocument`; ``ImportRefused`` saying what
    is wrong and what to do when it cannot be imported as it is."""
    data = source if isinstance(source, Mapping) else _parse(source, max_bytes)
    if not isinstance(data, Mapping) or data.get("format") != EXPORT_FORMAT:
        raise _refuse(f"this is not a memstack user export (format {EXPORT_FORMAT!r}); export the user with memstack")
    version = data.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise _refuse(
            f"the document is version {version!r} of {EXPORT_FORMAT}, and this memstack reads versions {readable}: "
            "import it with a memstack that reads its version, or export it again with this one"
        )
    tenant, user_id = data.get("tenant"), data.get("user_id")
    try:
        check_id(tenant, "tenant")
        check_id(user_id, "user_id")
    except InputError as exc:
        raise _refuse(f"the document's owner is unusable: {exc}") from None
    assert isinstance(tenant, str) and isinstance(user_id, str)
    sections: dict[str, list[dict[str, Any]]] = {}
    for section in SECTIONS.values():
        items = data.get(section)
        if not isinstance(items, list):
            raise _refuse(f"the document has no {section!r} list: it was cut short or edited; export it again")
        sections[section] = [_check_record(section, i, item) for i, item in enumerate(items)]
    verified = False
    if version >= 2:
        written = data.get("sha256")
        if not isinstance(written, str):
            raise _refuse("the document has no 'sha256' (it comes last): it was cut short; export it again")
        digest = Digest(tenant, user_id)
        for section, items in sections.items():
            for item in items:
                digest.add(section, dumps(item))
        if digest.hexdigest() != written:
            raise _refuse(
                "the document's records do not match its 'sha256': it was changed after the export (or damaged); "
                "export it again, or import the original file"
            )
        verified = True
    else:
        _upgrade_v1(sections)
    assert EXPORT_VERSION == 2  # the shape ``sections`` is in; a new version adds its upgrade above
    return UserDocument(tenant, user_id, int(version), sections, verified)

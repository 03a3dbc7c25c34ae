"""What an import reads, before the engine writes it: memstack's own export document (:mod:`.document`: its
version, its shape and its ``sha256`` checked), and what users bring from elsewhere: mem0's memories
(:mod:`.mem0`, made into the records of an export document) and plain JSONL messages (:mod:`.messages`, read a
line at a time and handed to the engine's ``ingest``). Nothing here touches a store: the engine imports what these
return (``AsyncMemstack.import_user``, ``users.import_mem0``, ``users.import_messages``)."""

from __future__ import annotations

from memstack.imports.document import MAX_IMPORT_BYTES, UserDocument, read_document

__all__ = ["MAX_IMPORT_BYTES", "UserDocument", "read_document"]

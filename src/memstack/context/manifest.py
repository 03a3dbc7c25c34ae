"""The manifest of one assembly: :class:`~memstack.types.Manifest` (defined with the other domain types so stores
can keep it without depending on this package)."""

from __future__ import annotations

from memstack.types import Manifest, ManifestEntry

__all__ = ["Manifest", "ManifestEntry"]

"""Drop-in replacements for other memory libraries' APIs, written on memstack's public API (``mem0``)."""

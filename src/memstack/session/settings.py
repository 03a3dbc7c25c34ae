"""Every number of session memory in one frozen value (seed 04, DESIGN §4)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from memstack.errors import ConfigError

__all__ = ["SessionSettings"]


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """Session-memory settings; the defaults follow seed 04.

    Window: ``window`` raw messages are kept verbatim; a long reply stays ``long_extra_turns`` turns longer.
    Routing: both messages under ``short_words`` words → summary only; either at ``long_words`` or more → long;
    an exchange whose code lines make up ``code_ratio`` of its lines (or that has ``code_min_lines`` code lines)
    is code-heavy. ``diff_on_cue`` also extracts a diff from short exchanges whose user message states a rule, a
    correction or a first-person fact ("never…", "actually…", "my name is…"): "Never use semicolons." must not be
    lost to routing.
    Summarizer: ``timeout_s`` per call, ``malformed_retries`` retries of a malformed answer with the same payload;
    summaries are capped at ``user_summary_words`` / ``assistant_summary_words``.
    Diff: update targets matched fuzzily at ``update_similarity``, removals at ``remove_similarity``; an entry
    whose content words are less than ``support_reject`` covered by the exchange is rejected, less than
    ``support_flag`` covered is applied with a warning; at most ``max_facts_per_turn`` entries per turn.
    Consolidation: every ``consolidate_every`` turns or when base truth exceeds ``max_facts`` facts;
    near-duplicates merge at ``merge_similarity`` (content words) or ``merge_cosine`` (embeddings).
    Service (:class:`~memstack.session.service.SessionService`): a turn left with a raw-text fallback is summarized
    again in the background after ``retry_after_s`` (doubling each time), at most ``max_retries`` times; a malformed
    answer is retried so too when ``retry_malformed`` (the seed keeps the fallback; a skipped diff loses the turn's
    facts, so by default it gets the same bounded second chance as a timeout). Base truth is snapshotted every
    ``snapshot_every`` turns and around each consolidation. A turn waits at most ``lock_timeout_s`` for the
    previous turn of its session (``StoreBusy`` after). When a user starts a session, the cross-session lines of up
    to ``refresh_lines`` of their other sessions are brought up to date; at most ``temporary_sessions`` temporary
    (never stored) sessions are kept in memory, the least recently used dropped first.
    """

    window: int = 6
    long_extra_turns: int = 2
    short_words: int = 40
    long_words: int = 200
    code_ratio: float = 0.3
    code_min_lines: int = 8
    diff_on_cue: bool = True
    timeout_s: float = 8.0
    malformed_retries: int = 1
    user_summary_words: int = 25
    assistant_summary_words: int = 30
    update_similarity: float = 0.5
    remove_similarity: float = 0.7
    support_reject: float = 0.34
    support_flag: float = 0.6
    max_facts_per_turn: int = 8
    consolidate_every: int = 16
    max_facts: int = 60
    merge_similarity: float = 0.85
    merge_cosine: float = 0.9
    cross_session_words: int = 30
    retry_after_s: float = 30.0
    max_retries: int = 2
    retry_malformed: bool = True
    snapshot_every: int = 10
    lock_timeout_s: float = 600.0
    refresh_lines: int = 3
    temporary_sessions: int = 1000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"session setting {f.name}={value!r} must be a number ≥ 0")
        if self.window < 2:
            raise ConfigError(f"window={self.window} keeps no full exchange; use at least 2 messages (default 6)")
        if not self.short_words <= self.long_words:
            raise ConfigError(
                f"short_words={self.short_words} must not exceed long_words={self.long_words} (defaults 40 and 200)"
            )
        if self.timeout_s <= 0:
            raise ConfigError(f"timeout_s={self.timeout_s} must be positive (default 8 seconds)")
        if self.consolidate_every < 1:
            raise ConfigError(f"consolidate_every={self.consolidate_every} must be ≥ 1 turn (seed 04: 15-20)")
        if self.snapshot_every < 1 or self.temporary_sessions < 1:
            raise ConfigError("snapshot_every and temporary_sessions must be ≥ 1 (defaults 10 and 1000)")
        if self.user_summary_words < 1 or self.assistant_summary_words < 1:
            raise ConfigError("summary word caps must be ≥ 1 (defaults 25 and 30)")
        fractions = ("code_ratio", "update_similarity", "remove_similarity", "support_reject", "support_flag")
        for name in (*fractions, "merge_similarity", "merge_cosine"):
            if getattr(self, name) > 1:
                raise ConfigError(f"{name}={getattr(self, name)} is a fraction; use a value between 0 and 1")
        if self.support_reject > self.support_flag:
            raise ConfigError("support_reject must not exceed support_flag (rejecting is the stricter threshold)")

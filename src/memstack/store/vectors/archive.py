"""Recall over a user's archive, served by PostgreSQL: the messages that can score, found with indexes, ranked by
the one formula (:func:`memstack.retrieval.archive.rank_candidates`).

Migration ``0013_archive_search`` gives each ``archive_vectors`` row what the ranking needs, maintained by
:func:`relink` whenever messages are written:

- ``session_seq``, ``turn`` (the message's place in its conversation) and ``prev_seq``: the message before it in
  its session among those with a vector, so that a message's turn key (its terms and the previous message's)
  and its neighbours are one index lookup away; ``at`` (its exchange's time); ``term_ids`` (the stems of
  ``"Speaker: text"``, :mod:`memstack.text`, as 64-bit ids: :func:`~memstack.store._fulltext.term_ids`) and
  ``n_terms``, ``key_len`` (its turn key's length);
- ``archive_stats``: per user the messages with a vector, their terms, their keys' terms and their sessions (BM25's
  N and average lengths), so no query counts the whole archive;
- indexes: GIN on ``term_ids``, ``(session_seq, turn, side)`` with ``n_terms``, ``prev_seq``, and HNSW over every
  embedding (``vector_cosine_ops``).

A search returns the candidates with their numbers (term counts, lengths, links, dot product, time) and the user's
statistics; Python ranks them; a last statement reads the texts of the best and of the message before each. The
candidates:

- of an archive of at most ``scan_max`` messages (every LoCoMo conversation, a year of a daily chat): all of them,
  straight from the user's btree, in the statement that reads the statistics (a speaker's name or a common word
  would bring most of them in anyway);
- of a larger one, in a second statement: the messages holding a query term (GIN), the messages right after them
  (their key holds the term), the neighbours of both (neighbour smoothing), the ``nearest`` by vector and, when the
  query names a time, the ``nearest`` within it (widened by three decay constants of the time preference).

The ``nearest``: an archive of at most ``exact_max`` messages is scanned exactly (every dot product: a few
milliseconds for thousands); a larger one goes through the HNSW index over every archived message with the user
filter and iterative scans (``hnsw.iterative_scan``, set per connection), and, in the same statement, exactly again
if that scan came back with fewer than ``nearest`` rows (a filter too selective for the graph): never fewer
candidates than asked. That rule is the memories' too, written once (:func:`~memstack.store.vectors.pgvector.nearest`);
the memories' index differs in scope: a partial HNSW index per large user (:mod:`memstack.store.vectors.hnsw`),
while the archive's vectors are written in the background, so one shared graph costs no request anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memstack.retrieval.archive import ArchiveQuery, ArchiveStats, Candidates, message_text, rank_candidates
from memstack.store._checks import unit_vector
from memstack.store._fulltext import term_ids
from memstack.store.vectors._pg import Conn, Pool
from memstack.store.vectors.hnsw import AnnSettings
from memstack.store.vectors.pgvector import nearest
from memstack.text import tokenize
from memstack.types import MESSAGE_ROLES, ArchivedMessage, ArchiveMatch, UserRef

__all__ = ["ArchiveSearch", "insert_messages", "message_terms", "migrate_archive_search", "relink", "session_totals"]

#: Rows converted per batch by the migration.
_BATCH = 1000

#: How far around an asked-for time the nearest messages are looked for, in decay constants of the time preference.
_TIME_MARGIN_TAUS = 3.0


def message_terms(text: str, speaker: str | None) -> list[str]:
    """The stored terms of an archived message: those of what recall indexes and embeds, ``"Speaker: text"``."""
    return tokenize(message_text(text, speaker))


async def migrate_archive_search(conn: Conn, dim: int) -> None:
    """Migration ``0013_archive_search``."""
    await conn.execute(
        b"ALTER TABLE archive_vectors ADD COLUMN session_seq bigint, ADD COLUMN turn integer, "
        b"ADD COLUMN at timestamptz, ADD COLUMN term_ids bigint[] NOT NULL DEFAULT '{}', "
        b"ADD COLUMN n_terms integer NOT NULL DEFAULT 0, "
        b"ADD COLUMN prev_seq bigint, ADD COLUMN key_len integer NOT NULL DEFAULT 0"
    )
    await conn.execute(
        b"UPDATE archive_vectors AS v SET session_seq = t.session_seq, turn = t.turn, at = t.at "
        b"FROM session_turns AS t WHERE t.seq = v.turn_seq"
    )
    await conn.execute(
        b"ALTER TABLE archive_vectors ALTER COLUMN session_seq SET NOT NULL, ALTER COLUMN turn SET NOT NULL, "
        b"ALTER COLUMN at SET NOT NULL"
    )
    last = 0
    while True:
        cur = await conn.execute(
            b"SELECT v.seq, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END, v.speaker "
            b"FROM archive_vectors AS v JOIN session_turns AS t ON t.seq = v.turn_seq "
            b"WHERE v.seq > %s AND v.embedding IS NOT NULL ORDER BY v.seq LIMIT %s",
            (last, _BATCH),
        )
        batch = await cur.fetchall()
        if not batch:
            break
        for seq, text, speaker in batch:  # one statement per row: arrays of arrays cannot be ragged
            ids = term_ids(message_terms(text, speaker))
            await conn.execute(
                b"UPDATE archive_vectors SET term_ids = %s::bigint[], n_terms = %s WHERE seq = %s", (ids, len(ids), seq)
            )
        last = int(batch[-1][0])
    await conn.execute(_RELINK.format(sessions="", user="").encode())
    await conn.execute(
        b"""
        CREATE TABLE archive_stats (
            tenant text NOT NULL,
            user_id text NOT NULL,
            messages bigint NOT NULL,
            terms bigint NOT NULL,
            key_terms bigint NOT NULL,
            threads bigint NOT NULL,
            PRIMARY KEY (tenant, user_id)
        )
        """
    )
    await conn.execute(
        b"INSERT INTO archive_stats SELECT tenant, user_id, count(*), sum(n_terms), sum(key_len), "
        b"count(DISTINCT session_seq) FROM archive_vectors WHERE embedding IS NOT NULL GROUP BY tenant, user_id"
    )
    for statement in (
        b"CREATE INDEX archive_vectors_terms ON archive_vectors USING gin (term_ids) WHERE embedding IS NOT NULL",
        b"CREATE INDEX archive_vectors_thread ON archive_vectors (session_seq, turn, side) INCLUDE (n_terms) "
        b"WHERE embedding IS NOT NULL",
        b"CREATE INDEX archive_vectors_prev ON archive_vectors (prev_seq) WHERE prev_seq IS NOT NULL",
        b"CREATE INDEX archive_vectors_ann ON archive_vectors USING hnsw (embedding vector_cosine_ops)",
    ):
        await conn.execute(statement)


#: Each message's previous message in its session and its key's length, where they changed (all sessions: the
#: migration; or one user's ``= ANY(%(sessions)s)``).
_RELINK = """
WITH o AS (
    SELECT seq, n_terms, lag(seq) OVER w AS p, n_terms + coalesce(lag(n_terms) OVER w, 0) AS key_len
    FROM archive_vectors WHERE embedding IS NOT NULL{sessions}
    WINDOW w AS (PARTITION BY session_seq ORDER BY turn, side)
)
UPDATE archive_vectors AS v SET prev_seq = o.p, key_len = o.key_len FROM o
WHERE v.seq = o.seq AND (v.prev_seq IS DISTINCT FROM o.p OR v.key_len <> o.key_len){user}
"""
_ONE_USER = " AND tenant = %(tenant)s AND user_id = %(user)s AND session_seq = ANY(%(sessions)s)"
_SESSION_TOTALS = (
    "SELECT session_seq, count(*), sum(n_terms), sum(key_len) FROM archive_vectors WHERE tenant = %(tenant)s "
    "AND user_id = %(user)s AND session_seq = ANY(%(sessions)s) AND embedding IS NOT NULL GROUP BY session_seq"
)
_ADD_STATS = """
INSERT INTO archive_stats AS a (tenant, user_id, messages, terms, key_terms, threads)
VALUES (%(tenant)s, %(user)s, %(messages)s, %(terms)s, %(key_terms)s, %(threads)s)
ON CONFLICT (tenant, user_id) DO UPDATE SET messages = a.messages + excluded.messages,
    terms = a.terms + excluded.terms, key_terms = a.key_terms + excluded.key_terms,
    threads = a.threads + excluded.threads
"""


async def _totals(conn: Conn, user: UserRef, sessions: list[int]) -> dict[int, tuple[int, int, int]]:
    params = {"tenant": user.tenant, "user": user.user_id, "sessions": sessions}
    cur = await conn.execute(_SESSION_TOTALS.encode(), params)
    return {int(s): (int(n), int(t or 0), int(k or 0)) for s, n, t, k in await cur.fetchall()}


async def relink(conn: Conn, user: UserRef, sessions: Iterable[int], before: dict[int, tuple[int, int, int]]) -> None:
    """After messages of ``sessions`` were written (in the writer's transaction, under the user's lock): link them
    and the messages after them, and add the change to the user's statistics. ``before``: :func:`session_totals`
    taken before the write."""
    ids = sorted(set(sessions))
    scoped = {"tenant": user.tenant, "user": user.user_id, "sessions": ids}
    await conn.execute(
        _RELINK.format(sessions=_ONE_USER, user=" AND v.tenant = %(tenant)s AND v.user_id = %(user)s").encode(), scoped
    )
    after = await _totals(conn, user, ids)
    zero = (0, 0, 0)
    delta = [sum(after.get(s, zero)[i] - before.get(s, zero)[i] for s in ids) for i in range(3)]
    threads = sum(1 for s in ids if after.get(s, zero)[0] > 0 and before.get(s, zero)[0] == 0)
    if any(delta) or threads:
        params = {"tenant": user.tenant, "user": user.user_id, "threads": threads}
        params.update(zip(("messages", "terms", "key_terms"), delta, strict=True))
        await conn.execute(_ADD_STATS.encode(), params)


async def session_totals(conn: Conn, user: UserRef, sessions: Iterable[int]) -> dict[int, tuple[int, int, int]]:
    """Messages with a vector, their terms and their keys' terms, per session of ``user``."""
    return await _totals(conn, user, sorted(set(sessions)))


_INSERT = (
    "INSERT INTO archive_vectors (turn_seq, tenant, user_id, side, speaker, embedding, session_seq, turn, at, "
    "term_ids, n_terms) VALUES (%s, %s, %s, %s, %s, %s::vector, %s, %s, %s, %s::bigint[], %s) "
    "ON CONFLICT (turn_seq, side) DO NOTHING"
)

#: One archived message to write: its exchange's ``seq``, session ``seq``, turn, time and texts (user, assistant),
#: then its side, speaker and vector (as the connection sends it; ``None`` for a blank message).
Placed = tuple[int, int, int, datetime, tuple[str, str], int, str | None, Any]


async def insert_messages(conn: Conn, user: UserRef, messages: Sequence[Placed]) -> int:
    """In the writer's transaction, under the user's lock: write the messages' vectors with what ranking reads (their
    place, their stems), then link them and update the user's statistics (:func:`relink`); how many were new."""
    sessions = {m[1] for m in messages}
    before = await session_totals(conn, user, sessions)
    params = []
    for seq, session, turn, at, texts, side, speaker, vector in messages:
        ids = term_ids(message_terms(texts[side], speaker)) if vector is not None else []
        params.append((seq, user.tenant, user.user_id, side, speaker, vector, session, turn, at, ids, len(ids)))
    async with conn.cursor() as insert:
        await insert.executemany(_INSERT, params)
        written = insert.rowcount
    if written:
        await relink(conn, user, sessions, before)
    return max(int(written), 0)


#: The columns ranking reads, of ``archive_vectors AS v``: id, previous id,
#: session, the query terms' counts (``{tf}``: ``NULL`` when it holds none), terms, key terms, dot product
#: (``{dot}``), time (epoch seconds), excluded (the excluded session's, and the exchanges forgotten memories hide:
#: one hashed set per statement); then its turn and side (the order).
_COLUMNS = """v.seq, coalesce(v.prev_seq, -1), v.session_seq, {tf}, v.n_terms, v.key_len, {dot},
    extract(epoch FROM v.at)::float8, v.session_seq IS NOT DISTINCT FROM (
        SELECT seq FROM sessions WHERE tenant = %(tenant)s AND user_id = %(user)s AND id = %(exclude)s
    ) OR (v.session_seq, v.turn) IN (
        SELECT hs.seq, h.turn FROM hidden_items AS h JOIN sessions AS hs ON hs.tenant = h.tenant
        AND hs.user_id = h.user_id AND hs.id = h.session_id
        WHERE h.tenant = %(tenant)s AND h.user_id = %(user)s AND h.kind = 'turn'
    ), v.turn, v.side"""
_USER = "tenant = %(tenant)s AND user_id = %(user)s AND embedding IS NOT NULL"
_V_USER = "v.tenant = %(tenant)s AND v.user_id = %(user)s AND v.embedding IS NOT NULL"
_STATS = "st.messages, st.terms, st.key_terms, st.threads"

#: The user's statistics and, for an archive of at most ``%(scan_max)s`` messages, every message (straight from the
#: user's btree); a larger archive gives one row of statistics.
_ALL = f"""
SELECT {_STATS}, r.* FROM archive_stats AS st LEFT JOIN LATERAL (
    SELECT {_COLUMNS} FROM archive_vectors AS v WHERE {_V_USER} AND st.messages <= %(scan_max)s
) AS r ON true
WHERE st.tenant = %(tenant)s AND st.user_id = %(user)s
ORDER BY r.session_seq, r.turn, r.side
"""

#: A larger archive: the messages that can score (module docstring), with the lengths of the sessions holding a
#: term. The statistics are read again (the same columns as :data:`_ALL`, one statement per search).
_CANDIDATES = f"""
WITH own AS MATERIALIZED (
    SELECT seq, session_seq FROM archive_vectors WHERE {_USER} AND term_ids && %(ids)s::bigint[]
), keyed AS MATERIALIZED (
    SELECT seq FROM own
    UNION
    SELECT v.seq FROM archive_vectors AS v
    WHERE %(context)s = 1 AND v.prev_seq IN (SELECT seq FROM own) AND v.embedding IS NOT NULL
), lexical AS (
    SELECT seq FROM keyed
    UNION
    SELECT v.prev_seq FROM archive_vectors AS v WHERE v.seq IN (SELECT seq FROM keyed) AND v.prev_seq IS NOT NULL
    UNION
    SELECT v.seq FROM archive_vectors AS v WHERE v.prev_seq IN (SELECT seq FROM keyed) AND v.embedding IS NOT NULL
){{dense}}, found AS (
    SELECT seq FROM lexical{{found}}
), threads AS (
    SELECT session_seq, sum(n_terms) AS terms FROM archive_vectors
    WHERE session_seq IN (SELECT DISTINCT session_seq FROM own) AND embedding IS NOT NULL GROUP BY session_seq
)
SELECT {_STATS}, {_COLUMNS}, th.terms
FROM found JOIN archive_vectors AS v ON v.seq = found.seq
LEFT JOIN threads AS th ON th.session_seq = v.session_seq
CROSS JOIN (SELECT * FROM archive_stats WHERE tenant = %(tenant)s AND user_id = %(user)s) AS st
ORDER BY v.session_seq, v.turn, v.side
"""

#: The nearest ``n`` within the asked-for time.
_TIMED = f""", timed AS (
    SELECT v.seq FROM archive_vectors AS v WHERE {_V_USER} AND v.at >= %(since)s AND v.at < %(until)s
    ORDER BY v.embedding <#> %(v)s::vector, v.seq LIMIT %(n)s
)"""

_DOT = "-(v.embedding <#> %(v)s::vector)"
_MESSAGES = (
    "SELECT v.seq, s.id, t.turn, v.side, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END, t.at, "
    "v.speaker, EXISTS (SELECT 1 FROM hidden_items AS h WHERE h.tenant = v.tenant AND h.user_id = v.user_id "
    "AND h.kind = 'turn' AND h.session_id = s.id AND h.turn = t.turn) "
    "FROM archive_vectors AS v JOIN session_turns AS t ON t.seq = v.turn_seq "
    "JOIN sessions AS s ON s.seq = t.session_seq WHERE v.seq = ANY(%s) AND v.tenant = %s AND v.user_id = %s"
)

#: Statements are kept (prepared by the driver) for queries of up to this many terms; longer ones are built each time.
_KEPT_TERMS = 16


def _tf(n_terms: int) -> str:
    """How often each query term (``%(t0)s``, ``%(t1)s``, … as ids) occurs in the message: one array per row, no
    subquery."""
    if n_terms == 0:
        return "NULL::int[]"
    counts = ", ".join(f"cardinality(array_positions(v.term_ids, %(t{i})s::bigint))" for i in range(n_terms))
    return f"CASE WHEN v.term_ids && %(ids)s::bigint[] THEN ARRAY[{counts}] END"


def _statement(n_terms: int, *, everything: bool, vector: bool, indexed: bool, timed: bool) -> bytes:
    fill = {"tf": _tf(n_terms), "dot": _DOT if vector else "NULL::float8"}
    if everything:
        return _ALL.replace("{tf}", fill["tf"]).replace("{dot}", fill["dot"]).encode()
    dense, found = "", ""
    if vector:
        dense = ", " + nearest("dense", "archive_vectors", _USER, "%(n)s", indexed=indexed)
        found = " UNION SELECT seq FROM dense"
        if timed:
            dense += _TIMED
            found += " UNION SELECT seq FROM timed"
    text = _CANDIDATES.replace("{dense}", dense).replace("{found}", found)
    return text.replace("{tf}", fill["tf"]).replace("{dot}", fill["dot"]).encode()


class ArchiveSearch:
    """Ranks one user's archive in ``db`` (see the module docstring), with :class:`AnnSettings`' ``archive_*``:

    ``scan_max``: archives of at most this many messages are read whole (one btree scan is cheaper than finding
    candidates when a query's words, a speaker's name among them, are in most messages); ``nearest``: messages
    taken as candidates by vector (and again within an asked-for time); ``exact_max``: archives of at most this
    many messages find those exactly rather than through the HNSW index."""

    def __init__(self, db: Pool, dim: int, settings: AnnSettings | None = None) -> None:
        s = settings or AnnSettings()
        self._db = db
        self._dim = dim
        self.scan_max = s.archive_scan_max
        self.nearest = s.archive_nearest
        self.exact_max = s.archive_exact_max
        self._statements: dict[tuple[int, bool, bool, bool, bool], bytes] = {}

    def _sql(self, n_terms: int, *, everything: bool, vector: bool, indexed: bool, timed: bool) -> bytes:
        key = (n_terms, everything, vector, indexed, timed)
        statement = self._statements.get(key)
        if statement is None:
            statement = _statement(n_terms, everything=everything, vector=vector, indexed=indexed, timed=timed)
            if n_terms <= _KEPT_TERMS:
                self._statements[key] = statement
        return statement

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, exclude_session: str | None
    ) -> list[ArchiveMatch]:
        vector = None
        if query.vector is not None:  # checked as any vector, sent as given: the dot product is part of the score
            unit_vector(query.vector, self._dim)
            vector = self._db.vector_param(np.asarray(query.vector, dtype=np.float32).reshape(-1))
        async with self._db.connection() as conn:
            return await self._search(conn, user, query, vector, k, exclude_session)

    async def _search(
        self, conn: Conn, user: UserRef, query: ArchiveQuery, vector: Any, k: int, exclude_session: str | None
    ) -> list[ArchiveMatch]:
        """``vector``: the query vector as the connection sends it (``None``: rank lexically)."""
        q, s = query.query, query.settings
        terms = list(q.terms)
        ids = term_ids(terms)
        params: dict[str, Any] = {
            "tenant": user.tenant,
            "user": user.user_id,
            "ids": ids,
            "context": s.context_turns,
            "exclude": exclude_session,
            "v": vector,
            "scan_max": self.scan_max,
            **{f"t{i}": term for i, term in enumerate(ids)},
        }
        has_vector = vector is not None
        cur = conn.cursor(binary=True)
        await cur.execute(self._sql(len(terms), everything=True, vector=has_vector, indexed=False, timed=False), params)
        rows = await cur.fetchall()
        if not rows or not rows[0][0]:
            return []  # no message with a vector yet
        stats = ArchiveStats(*(int(x) for x in rows[0][:4]))
        everything = rows[0][4] is not None
        if not everything:  # a large archive: find the candidates
            timed = q.time_range is not None and has_vector
            if timed and q.time_range is not None:
                tr, margin = q.time_range, timedelta(days=_TIME_MARGIN_TAUS * s.time_tau_days)
                params.update(since=_utc(tr.start - tr.slack) - margin, until=_utc(tr.end + tr.slack) + margin)
            params["n"] = min(max(self.nearest, k), stats.messages)
            indexed = stats.messages > self.exact_max
            statement = self._sql(len(terms), everything=False, vector=has_vector, indexed=indexed, timed=timed)
            await cur.execute(statement, params)
            rows = await cur.fetchall()
        best = rank_candidates(_candidates([r[4:] for r in rows], len(terms), stats, whole=everything), query, k)
        if not best:
            return []
        before = {int(r[4]): int(r[5]) for r in rows}
        wanted = [seq for seq, _ in best] + [before[seq] for seq, _ in best if before[seq] >= 0]
        cur = await conn.execute(_MESSAGES.encode(), (wanted, user.tenant, user.user_id))
        rows = await cur.fetchall()
        messages = {int(r[0]): _message(r[:-1]) for r in rows}
        hidden = {int(r[0]) for r in rows if r[-1]}  # never shown as the message before a recalled one
        return [
            ArchiveMatch(messages[seq], score, None if before[seq] in hidden else messages.get(before[seq]))
            for seq, score in best
        ]


def _candidates(rows: Sequence[tuple[Any, ...]], n_terms: int, stats: ArchiveStats, *, whole: bool) -> Candidates:
    """Rows of :data:`_COLUMNS` (and, from :data:`_CANDIDATES`, the length of the message's session when it holds a
    term; ``whole``: every message of the archive, so the sessions' lengths are summed here)."""
    n = len(rows)
    tf = np.zeros((n, n_terms), dtype=np.float64)
    for i, row in enumerate(rows):
        if row[3] is not None:
            tf[i] = row[3]
    columns = list(zip(*rows, strict=True)) if rows else [()] * 12
    thread = np.asarray(columns[2], dtype=np.int64)
    lengths = np.asarray(columns[4], dtype=np.float64)
    if whole:
        sessions, inverse = np.unique(thread, return_inverse=True)
        sums = np.bincount(inverse, weights=lengths, minlength=len(sessions))
        thread_terms = {int(t): int(x) for t, x in zip(sessions, sums, strict=True)}
    else:
        thread_terms = {int(r[2]): int(r[11]) for r in rows if r[11] is not None}
    return Candidates(
        ids=np.asarray(columns[0], dtype=np.int64),
        prev=np.asarray(columns[1], dtype=np.int64),
        thread=thread,
        tf=tf,
        lengths=lengths,
        key_lengths=np.asarray(columns[5], dtype=np.float64),
        dense=None if not rows or rows[0][6] is None else np.asarray(columns[6], dtype=np.float64),
        days=np.asarray(columns[7], dtype=np.float64) / 86400.0,
        excluded=np.asarray(columns[8], dtype=bool),
        stats=stats,
        thread_terms=thread_terms,
    )


def _message(row: tuple[Any, ...]) -> ArchivedMessage:
    seq, session_id, turn, side, text, at, speaker = row
    return ArchivedMessage(int(seq), session_id, int(turn), MESSAGE_ROLES[int(side)], text, at, speaker)


def _utc(when: datetime) -> datetime:
    """A time range's bounds are naive UTC."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when

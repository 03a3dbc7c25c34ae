"""Artifacts: code blocks and drafts of a turn, verbatim, for "go back to the version from turn 3"."""

from __future__ import annotations

from memstack.session.artifacts import extract_artifacts
from memstack.types import Exchange

V1 = "def total(xs: list[int]) -> int:\n    return sum(xs)"


def test_code_blocks_of_both_messages_are_kept_verbatim() -> None:
    ex = Exchange(
        3,
        f"This fails:\n```python\n{V1}\n```\nand `x` is one line of inline code.",
        "Use this:\n```python\ndef total(xs):\n    return sum(x for x in xs if x)\n```\n"
        "```sql\nSELECT 1;\nSELECT 2;\n```",
    )
    arts = extract_artifacts(ex)
    assert [(a.role, a.kind, a.language, a.label, a.index) for a in arts] == [
        ("user", "code", "python", "total", 0),
        ("assistant", "code", "python", "total", 1),
        ("assistant", "code", "sql", "SELECT 1;", 2),
    ]
    assert arts[0].content == V1 and all(a.turn == 3 for a in arts)


def test_long_prose_reply_is_a_draft_and_short_talk_has_no_artifacts() -> None:
    body = "Dear team, the launch moves to May. " + "We will share the plan and the budget soon. " * 30
    drafts = extract_artifacts(Exchange(5, "Draft the announcement email.", body))
    assert [(a.kind, a.label) for a in drafts] == [("draft", "Dear team, the launch moves to May.")]
    assert drafts[0].content == body.strip()
    assert extract_artifacts(Exchange(6, "thanks", "You're welcome!")) == []

import re

from memstack.types import new_id, new_ids


def test_bulk_ids_have_the_single_id_format_and_are_unique() -> None:
    single = new_id("mem")
    batch = new_ids("mem", 5000)
    pattern = re.compile(r"mem_[0-9a-hjkmnp-tv-z]{26}")
    assert pattern.fullmatch(single) and all(pattern.fullmatch(i) for i in batch)
    assert len(set(batch)) == 5000
    assert batch[0][:14] >= single[:14]  # same millisecond prefix scheme: later ids sort after earlier ones
    assert new_ids("mem", 0) == []

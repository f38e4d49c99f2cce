"""The bounded-memo rule (core.memo.remember)."""

from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.memo import remember


def test_a_memo_at_its_bound_is_emptied_before_the_next_entry() -> None:
    memo = {1: "a", 2: "b"}
    assert remember(memo, 2, 3, "c") == "c"
    assert memo == {3: "c"}


@given(st.lists(st.integers(0, 50)), st.integers(1, 8))
def test_a_memo_never_holds_more_than_its_bound_and_keeps_the_last_entry(keys: list[int],
                                                                         bound: int) -> None:
    memo: dict[int, int] = {}
    for key in keys:
        assert remember(memo, bound, key, key * 2) == key * 2
        assert len(memo) <= bound and memo[key] == key * 2

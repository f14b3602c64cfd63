"""Whatever arguments a model sends (any JSON object), the tools' checks answer with what is
wrong or let the call go on: never an exception (the reply goes on with an error result)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.slack.permalinks import Linked
from app.tools.read_thread import _asked
from app.tools.search_messages import _problem

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
keys = st.sampled_from(["query", "channel", "days", "limit", "permalink", "ts"]) | st.text(
    max_size=8
)
arguments = st.dictionaries(keys, json_values, max_size=5)


@given(arguments)
def test_search_messages_arguments_are_checked_without_an_error(
    given_arguments: dict[str, Any],
) -> None:
    problem = _problem(given_arguments)
    assert problem is None or isinstance(problem, str)
    if problem is None:  # what run() then reads is of the types it expects
        assert isinstance(given_arguments.get("query") or "", str)
        assert given_arguments.get("limit") is None or int(given_arguments["limit"]) >= 1
        assert given_arguments.get("days") is None or float(given_arguments["days"]) > 0


@given(arguments)
def test_read_thread_arguments_are_checked_without_an_error(
    given_arguments: dict[str, Any],
) -> None:
    asked = _asked(given_arguments)
    assert isinstance(asked, str | Linked)

"""Walking a cursor-paged list, for the sync and the async client alike."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_Page)


def walk(fetch: Callable[[str | None], P], items: Callable[[P], Sequence[T]]) -> Iterator[T]:
    """The items of the page `fetch(None)` returns, then of each next page, fetched as iteration gets there."""
    cursor: str | None = None
    while True:
        page = fetch(cursor)
        yield from items(page)
        if not page.next_cursor:
            return
        cursor = page.next_cursor


async def awalk(fetch: Callable[[str | None], Awaitable[P]], items: Callable[[P], Sequence[T]]) -> AsyncIterator[T]:
    """`walk` for the async client."""
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        for item in items(page):
            yield item
        if not page.next_cursor:
            return
        cursor = page.next_cursor

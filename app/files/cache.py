"""What is kept of files lately read, so a file in use is not downloaded again for each prompt:
images as data: URIs, each for a while (`seconds`) and all of them within `max_bytes`, the least
recently used out first; and the files that could not be read, not tried again for a while."""

from __future__ import annotations

from collections import OrderedDict

MAX_REFUSALS = 10_000  # past this, refusals that ran out are forgotten


class KeptImages:
    """Data: URIs by file id, bounded in time and in bytes."""

    def __init__(self, *, seconds: float, max_bytes: int) -> None:
        self._seconds = seconds
        self._max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[str, float]] = OrderedDict()  # id: (uri, until)
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        """The bytes kept in all."""
        return self._bytes

    def get(self, file_id: str, *, now: float) -> str | None:
        kept = self._kept.get(file_id)
        if kept is None:
            return None
        uri, until = kept
        if until <= now:
            self._drop(file_id)
            return None
        self._kept.move_to_end(file_id)
        return uri

    def put(self, file_id: str, uri: str, *, now: float) -> None:
        """Keep `uri` (one larger than the whole bound is not kept), making room for it."""
        self._drop(file_id)
        for stale in [i for i, (_, until) in self._kept.items() if until <= now]:
            self._drop(stale)
        if len(uri) > self._max_bytes:
            return
        while self._kept and self._bytes + len(uri) > self._max_bytes:
            self._drop(next(iter(self._kept)))
        self._kept[file_id] = (uri, now + self._seconds)
        self._bytes += len(uri)

    def _drop(self, file_id: str) -> None:
        kept = self._kept.pop(file_id, None)
        if kept is not None:
            self._bytes -= len(kept[0])


class Refusals:
    """Files that could not be read, by id: not tried again for `seconds`."""

    def __init__(self, *, seconds: float) -> None:
        self._seconds = seconds
        self._until: dict[str, float] = {}

    def may_try(self, file_id: str, *, now: float) -> bool:
        return self._until.get(file_id, 0.0) <= now

    def refuse(self, file_id: str, *, now: float) -> bool:
        """Hold the file off; False when it already was (the refusal is not news)."""
        if not self.may_try(file_id, now=now):
            return False
        self._until[file_id] = now + self._seconds
        if len(self._until) > MAX_REFUSALS:
            for stale in [i for i, until in self._until.items() if until <= now]:
                del self._until[stale]
        return True

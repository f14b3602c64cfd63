"""What a judgment's or a reply's prompt needs of the files in its context, read once.

- Documents (PDFs, text files, snippets) of the newest messages, for any model: read, and their
  text (capped) stored with the message, so every later prompt and memory shows it without
  downloading the file again.
- Images of the messages the prompt shows with them (the judgment's newest messages, the
  reply's conversation newest first, then its lead-in), when the prompt's model sees images:
  at most MAX_IMAGES_PER_PROMPT, each kept as a data: URI for CACHE_SECONDS within
  CACHE_BYTES in all (app.files.cache: least recently used out first). A model that cannot
  see gets the image's name only, and nothing is downloaded for it. Images downloaded and
  not yet read hold IMAGE_BYTES at most in all (app.files.budget), and are read one at a time
  (app.files.images), so several in one message cost little more than the largest.
- Slack Connect stubs are completed with files.info first.
A file that could not be read is not tried again for CACHE_SECONDS; the message is handled
with its name. The first refusal for want of `files:read` is a WARNING saying what to do.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.models import Message
from app.domain import ChatMessage, Context, SharedFile
from app.files.budget import ByteBudget
from app.files.cache import KeptImages, Refusals
from app.files.documents import document_text
from app.files.fetch import Fetcher, Unreadable
from app.files.images import awaited_data_uri
from app.files.reading import read
from app.files.shown import shown_context
from app.slack.files import files_from_json, files_json, resolved, with_text
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError

logger = logging.getLogger(__name__)

Carrier = tuple[str, tuple[SharedFile, ...]]  # a message's ts and its files

DOCUMENTS_PER_PROMPT = 6  # the newest messages' documents read for one prompt (or memory run)
MAX_STUBS = 1000  # Slack Connect stubs' files.info answers kept
CACHE_SECONDS = 3600.0
CACHE_BYTES = 48 * 1024 * 1024
AT_ONCE = 4  # downloads at a time
IMAGE_BYTES = 24 * 1024 * 1024  # images downloaded and not yet read, in all (by Slack's size)


class FileReader:
    def __init__(
        self,
        *,
        fetcher: Fetcher,
        slack: SlackClient,
        engine: AsyncEngine,
        max_images: int,
        cache_seconds: float = CACHE_SECONDS,
        cache_bytes: int = CACHE_BYTES,
    ) -> None:
        self._fetcher = fetcher
        self._slack = slack
        self._engine = engine
        self._max_images = max_images
        self._images = KeptImages(seconds=cache_seconds, max_bytes=cache_bytes)
        self._stubs: dict[str, SharedFile] = {}  # a stub's id: what files.info said
        self._failed = Refusals(seconds=cache_seconds)
        self._told_scope = False
        self._at_once = asyncio.Semaphore(AT_ONCE)
        self._image_bytes = ByteBudget(IMAGE_BYTES)

    async def close(self) -> None:
        await self._fetcher.close()

    async def for_prompt(
        self, context: Context, *, pictured: Sequence[ChatMessage] = ()
    ) -> Context:
        """The context with its newest documents' text, and the images of the `pictured`
        messages (at most max_images, the first messages' first), as data: URIs."""
        now = time.time()
        messages = context.conversation_history.get_all_messages()
        with_files = [m for m in reversed(messages) if m.files]  # newest first
        if not with_files:
            return context
        carriers = [(m.ts, m.files) for m in with_files]
        channel = context.conversation_history.channel_id
        resolved_files = await self._resolve_stubs(carriers, now)
        named = await self._keep_names(channel, carriers, resolved_files)
        documents = self._documents(channel, carriers, resolved_files, now)
        if pictured and self._max_images > 0:  # downloaded at once: the wait is one timeout
            read, seen = await asyncio.gather(
                documents, self._images_of(pictured, resolved_files, now)
            )
        else:
            read, seen = await documents, {}
        if not read and not seen and not named:
            return context
        return shown_context(context, named | read, seen)

    async def read_documents(self, channel: str, carriers: Sequence[Carrier]) -> int:
        """Read the unread documents of these messages of a channel (newest first), for any
        model, and keep their text with them (the memory job: app.memory.refresh); how many
        were read."""
        now = time.time()
        files = await self._resolve_stubs(carriers, now)
        await self._keep_names(channel, carriers, files)
        return len(await self._documents(channel, carriers, files, now))

    # -- Slack Connect stubs ---------------------------------------------------------------

    async def _resolve_stubs(
        self, carriers: Sequence[Carrier], now: float
    ) -> dict[str, SharedFile]:
        """Every file of these messages by id, stubs completed where files.info could."""
        files = {f.id: f for _, carried in carriers for f in carried}
        stubs = [f for f in files.values() if f.stub and self._may_try(f.id, now)]
        for stub in stubs[: DOCUMENTS_PER_PROMPT + self._max_images]:
            if stub.id not in self._stubs:
                try:
                    answer = await self._slack.file_info(stub.id)
                except SlackError as error:
                    scope = error.error == "missing_scope"  # files.info needs files:read
                    self._give_up(stub, f"files.info: {error}", now, scope=scope)
                    continue
                found = resolved(stub, answer)
                if found is None:
                    self._give_up(stub, "files.info did not describe it", now)
                    continue
                if len(self._stubs) >= MAX_STUBS:
                    self._stubs.pop(next(iter(self._stubs)))
                self._stubs[stub.id] = found
        return {i: self._stubs.get(i, f) for i, f in files.items()}

    async def _keep_names(
        self, channel: str, carriers: Sequence[Carrier], files: dict[str, SharedFile]
    ) -> dict[str, SharedFile]:
        """The stubs files.info described, by id, kept with their message (its mark then
        names the file, and files.info is not asked again)."""
        named = {
            f.id: files[f.id]
            for _, carried in carriers
            for f in carried
            if f.stub and not files[f.id].stub
        }
        owners = {ts for ts, carried in carriers if any(f.id in named for f in carried)}
        if named:
            await self._store(channel, owners, named)
        return named

    # -- documents -------------------------------------------------------------------------

    async def _documents(
        self,
        channel: str,
        carriers: Sequence[Carrier],
        files: dict[str, SharedFile],
        now: float,
    ) -> dict[str, SharedFile]:
        """Read the newest unread documents; what was read, by id (stored with its message)."""
        wanted: list[tuple[str, SharedFile]] = []
        for ts, carried in carriers:
            for file in carried:
                full = files[file.id]
                if file.text is None and full.is_document and self._may_try(full.id, now):
                    wanted.append((ts, full))
        wanted = wanted[:DOCUMENTS_PER_PROMPT]
        texts = await asyncio.gather(*(self._document(file, now) for _, file in wanted))
        read = {
            file.id: replace(file, text=text)
            for (_, file), text in zip(wanted, texts, strict=True)
            if text is not None
        }
        if read:
            owners = {ts for ts, f in wanted if f.id in read}
            await self._store(channel, owners, read)
        return read

    async def _document(self, file: SharedFile, now: float) -> str | None:
        try:
            async with self._at_once:
                data = await self._fetcher.fetch(file)
            return await read(document_text, file, data)
        except Unreadable as error:
            self._give_up(file, str(error), now, scope=error.scope)
            return None

    async def _store(self, channel: str, stamps: set[str], read: dict[str, SharedFile]) -> None:
        """What was read of files (a document's text, a stub's details) goes with its
        message's files: later prompts and memories have it."""
        try:
            async with self._engine.begin() as connection:
                rows = await connection.execute(
                    select(col(Message.ts), col(Message.files)).where(
                        col(Message.channel) == channel, col(Message.ts).in_(stamps)
                    )
                )
                for ts, stored in rows.all():
                    files = with_text(files_from_json(stored), read)
                    await connection.execute(
                        update(Message)
                        .where(col(Message.channel) == channel, col(Message.ts) == ts)
                        .values(files=files_json(files))
                    )
        except Exception:
            logger.exception("could not keep what was read of %d file(s)", len(read))

    # -- images ----------------------------------------------------------------------------

    async def _images_of(
        self, pictured: Sequence[ChatMessage], files: dict[str, SharedFile], now: float
    ) -> dict[str, tuple[str, ...]]:
        """The images of these messages (at most max_images), by the ts of their message."""
        wanted: list[tuple[str, SharedFile]] = []
        for message in pictured:
            for file in message.files:
                full = files[file.id]
                if full.is_image and self._may_try(full.id, now):
                    wanted.append((message.ts, full))
        wanted = wanted[: self._max_images]
        uris = await asyncio.gather(*(self._image(file, now) for _, file in wanted))
        seen: dict[str, tuple[str, ...]] = {}
        for (ts, _), uri in zip(wanted, uris, strict=True):
            if uri is not None:
                seen[ts] = (*seen.get(ts, ()), uri)
        return seen

    async def _image(self, file: SharedFile, now: float) -> str | None:
        kept = self._images.get(file.id, now=now)
        if kept is not None:
            return kept
        try:
            async with self._image_bytes.holding(file.size or self._fetcher.max_bytes):
                async with self._at_once:
                    data = await self._fetcher.fetch(file)
                uri = await awaited_data_uri(data)  # one picture at a time, in all
        except Unreadable as error:
            self._give_up(file, str(error), now, scope=error.scope)
            return None
        self._images.put(file.id, uri, now=now)
        return uri

    # -- what could not be read ------------------------------------------------------------

    def _may_try(self, file_id: str, now: float) -> bool:
        return self._failed.may_try(file_id, now=now)

    def _give_up(self, file: SharedFile, why: str, now: float, *, scope: bool = False) -> None:
        if not self._failed.refuse(file.id, now=now):
            return
        if scope and not self._told_scope:
            self._told_scope = True
            logger.warning(
                "file %s (%s) not read: %s. tomo needs the files:read scope to see what people "
                "share: add it under OAuth & Permissions (or from slack-manifest.yml) and "
                "reinstall the app",
                file.id,
                file.name,
                why,
            )
        else:
            logger.info("file %s (%s) not read: %s", file.id, file.name, why)

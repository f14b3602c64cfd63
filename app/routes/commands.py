"""POST /slack/commands: the `/tomo` slash command (docs/how-tomo-works.md: #interfaces, #tomo).

Signed and verified exactly like events (401 on a bad signature); the body is form-encoded.
The answer is ephemeral (only the person who ran the command sees it) and leaves within
ANSWER_SECONDS, well inside Slack's 3 s: a command still running then is answered "still on
it" and finishes in the background, its answer sent to the command's response_url, like the
work that comes after an answer (the workspace memory rebuilt after a forget).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.commands.actions import Answer, Commands
from app.commands.answers import say
from app.observability.logs import log_context
from app.retention.forget import forget_messages
from app.routes.signed_form import signed_body
from app.slack.interactive.commands import SlashCommand, parse_command
from app.slack.interactive.response_url import respond
from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

router = APIRouter()

PATH = "/slack/commands"
MAX_BODY_BYTES = 64 * 1024  # a command's form is a few hundred bytes
ANSWER_SECONDS = 2.0


def commands(runtime: Runtime) -> Commands:
    return Commands(
        engine=runtime.engine,
        slack=runtime.slack,
        timers=runtime.timers,
        voice=runtime.voice,
        participation=runtime.intake.participation,
        identity=runtime.identity,
        persona_name=runtime.settings.PERSONA_NAME,
        auto_reply_channels=runtime.settings.AUTO_REPLY_CHANNELS,
        rebuild_memories=lambda: runtime.jobs.memory(wait=True),
        forget_messages=lambda channel, before: forget_messages(
            runtime.recorder, channel=channel, before=before
        ),
        settings=runtime.settings,
        digests=runtime.digests,
        run_digest=runtime.jobs.digest,
        zone=runtime.settings.timezone,
    )


def ephemeral(text: str) -> JSONResponse:
    return JSONResponse({"response_type": "ephemeral", "text": text})


@router.post(PATH, response_model=None)
async def slash_command(request: Request) -> JSONResponse:
    runtime: Runtime = request.app.state.runtime
    body = await signed_body(
        request,
        secret=runtime.settings.SLACK_SIGNING_SECRET.get_secret_value(),
        limit=MAX_BODY_BYTES,
        too_large="64 KiB",
        what="a command",
    )
    if isinstance(body, JSONResponse):
        return body
    command = parse_command(body)
    if command is None:
        return JSONResponse({"error": "not a slash command"}, status_code=400)
    with log_context(channel=command.channel_id):
        logger.info("command %s %r from %s", command.command, command.text[:100], command.user_id)
        return await _answer(runtime, command)


async def _answer(runtime: Runtime, command: SlashCommand) -> JSONResponse:
    service = commands(runtime)
    deadline = asyncio.get_running_loop().time() + ANSWER_SECONDS
    language = "en"
    try:
        language = await asyncio.wait_for(service.language(command), ANSWER_SECONDS / 4)
    except Exception as error:  # a slow or failing database: English it is
        logger.warning("could not tell the language of the command: %r", error)
    work = asyncio.ensure_future(service.answer(command, language=language))
    try:
        left = max(0.0, deadline - asyncio.get_running_loop().time())
        answer = await asyncio.wait_for(asyncio.shield(work), left)
    except TimeoutError:
        logger.warning("command still running after %.1f s: answering later", ANSWER_SECONDS)
        runtime.spawn(_finish(runtime, command, work, language), "command")
        return ephemeral(say(language, "still_working"))
    except Exception:
        logger.exception("command failed")
        return ephemeral(say(language, "failed"))
    if answer.later is not None:
        runtime.spawn(_later(runtime, command, answer), "command-later")
    return ephemeral(answer.text)


async def _finish(
    runtime: Runtime, command: SlashCommand, work: asyncio.Future[Answer], language: str
) -> None:
    try:
        answer = await work
    except Exception:
        logger.exception("command failed")
        await _tell(runtime, command, say(language, "failed"))
        return
    await _tell(runtime, command, answer.text)
    if answer.later is not None:
        await _later(runtime, command, answer)


async def _later(runtime: Runtime, command: SlashCommand, answer: Answer) -> None:
    assert answer.later is not None
    with log_context(channel=command.channel_id):
        try:
            text = await answer.later()
        except Exception:
            logger.exception("the work after a command failed")
            text = say(answer.language, "failed")
        if text:
            await _tell(runtime, command, text)


async def _tell(runtime: Runtime, command: SlashCommand, text: str) -> Any:
    return await respond(command.response_url, text, api_url=runtime.settings.SLACK_API_URL)

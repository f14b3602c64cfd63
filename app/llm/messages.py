"""A prompt's messages as each provider takes them: text parts, cache marks, images."""

from __future__ import annotations

from typing import Any

# Providers that cache a prompt's start only where it is marked (`cache_control`, passed on by
# LiteLLM); OpenAI and others cache on their own and get plain text.
CACHE_MARKED = frozenset({"anthropic"})


def system_message(parts: list[str]) -> dict[str, Any]:
    """A system message of the prompt's parts (app.llm.prompts.render_parts): text parts, the
    stable ones marked cacheable by `complete` where the provider takes marks."""
    return {"role": "system", "content": [{"type": "text", "text": p} for p in parts if p]}


def with_images(text: str, images: tuple[str, ...]) -> list[dict[str, Any]]:
    """A turn's content: its text, then its images (data: URIs) as OpenAI-style parts, which
    LiteLLM turns into each provider's own."""
    return [
        {"type": "text", "text": text},
        *({"type": "image_url", "image_url": {"url": uri}} for uri in images),
    ]


def for_provider(messages: list[dict[str, Any]], *, marks: bool) -> list[dict[str, Any]]:
    """Text parts joined into one string, or, for a provider that takes cache marks, every
    part of a system message but its last marked ephemeral-cacheable. A message with images
    keeps its parts."""
    shaped = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and not all(p.get("type") == "text" for p in content):
            pass  # text with images: the parts go as they are
        elif isinstance(content, list):
            if marks and message.get("role") == "system":
                content = [
                    part | {"cache_control": {"type": "ephemeral"}}
                    if n < len(content) - 1
                    else part
                    for n, part in enumerate(content)
                ]
            else:
                content = "".join(str(part.get("text", "")) for part in content)
            message = message | {"content": content}
        shaped.append(message)
    if marks and all(m.get("role") == "system" for m in shaped):
        # Such a provider (Anthropic) wants a turn besides the system prompt: the system
        # message's last part, the one not marked (the conversation, the time), becomes it.
        *before, last = shaped
        content = last.get("content")
        if isinstance(content, list) and len(content) > 1:
            shaped = [*before, last | {"content": content[:-1]}]
            shaped.append({"role": "user", "content": str(content[-1].get("text", ""))})
    return shaped

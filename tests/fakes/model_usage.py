"""What the model stand-in bills: words for text, and images priced as OpenAI prices them."""

from __future__ import annotations

import base64
import binascii
import io
import math
from typing import Any

from PIL import Image, UnidentifiedImageError


def words(content: Any) -> int:
    """Rough token count: whitespace-separated words of a string or of text parts."""
    if isinstance(content, str):
        return len(content.split())
    if isinstance(content, list):
        return sum(words(part.get("text")) for part in content if isinstance(part, dict))
    return 0


def image_tokens(width: int, height: int) -> int:
    """What OpenAI bills for an image at `detail: auto/high` (its vision guide): fitted within
    2048 x 2048, then its shortest side brought down to 768; 85 tokens plus 170 per 512 px
    tile."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        w, h = w * 2048 / max(w, h), h * 2048 / max(w, h)
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def _image_part_tokens(part: dict[str, Any]) -> int:
    url = str((part.get("image_url") or {}).get("url", ""))
    head, _, data = url.partition(",")
    if not (head.startswith("data:image/") and head.endswith(";base64")):
        return 85  # a URL the stand-in does not fetch: the low-detail price
    try:
        with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as picture:
            return image_tokens(picture.width, picture.height)
    except (binascii.Error, UnidentifiedImageError, OSError):
        return 85


def prompt_tokens(content: Any) -> int:
    """A message's tokens as the stand-in bills them: its words, and each image part priced
    as OpenAI prices it, so the usage reported includes what images cost."""
    images = 0
    if isinstance(content, list):
        images = sum(
            _image_part_tokens(part)
            for part in content
            if isinstance(part, dict) and part.get("type") == "image_url"
        )
    return words(content) + images

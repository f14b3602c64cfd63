"""MCP_SERVERS, read and checked (docs/tools.md#mcp): the MCP servers whose tools a reply's
model may call, a JSON array or `@` and the path of a JSON file holding one.

Each server: `name` (lower-case letters, digits, `-` and `_`, no `__`: tools are offered as
`{name}__{tool}`), `url` (http or https: its Streamable HTTP endpoint), `headers` (sent with
every request; `${VAR}` in a value is the environment variable VAR, so secrets stay out of the
JSON), `tools` (the tool names it may offer, or "read-only": those the server annotates
`readOnlyHint: true`) and `approve` (tool names a person must approve each call of). Nothing
else a server offers is ever offered. A header's value is a secret: never shown or logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

READ_ONLY = "read-only"
NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,29}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_FILE_BYTES = 256 * 1024


class McpServer(BaseModel):
    """One server, as MCP_SERVERS names it; `headers` with their `${VAR}` filled in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    tools: tuple[str, ...] | Literal["read-only"] = ()
    approve: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                f"server name {value!r} must be 1-30 lower-case letters, digits, - or _ "
                "(no __, which joins a server's name to its tools')"
            )
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"url {value!r} must be an http:// or https:// URL")
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _tools(cls, value: object) -> object:
        if isinstance(value, str) and value != READ_ONLY:
            raise ValueError(f'must be a list of tool names, or "{READ_ONLY}"')
        return value

    @field_validator("approve")
    @classmethod
    def _tool_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not TOOL_NAME.match(name):
                raise ValueError(f"{name!r} is not a tool name")
        return value

    @property
    def read_only(self) -> bool:
        """`"tools": "read-only"`: the server's tools annotated readOnlyHint: true."""
        return self.tools == READ_ONLY

    def header_values(self) -> dict[str, str]:
        return {name: value.get_secret_value() for name, value in self.headers.items()}


def raw_servers(value: str) -> str:
    """MCP_SERVERS as given: the JSON itself, or `@path` (made absolute, so the job worker,
    which reads the same setting, finds the same file)."""
    text = value.strip()
    if text.startswith("@"):
        try:
            path = Path(text[1:].strip()).expanduser().resolve()
        except (OSError, RuntimeError, ValueError) as error:
            raise ValueError(f"names a file that cannot be found ({error})") from None
        if not path.is_file():
            raise ValueError(f"names the file {path}, which does not exist")
        return f"@{path}"
    return text


def parse_servers(value: str, *, environment: Mapping[str, str]) -> tuple[McpServer, ...]:
    """The servers of MCP_SERVERS (raw_servers' form), `${VAR}` read from `environment`;
    ValueError says what is wrong, never a header's value."""
    text = value.strip()
    if text.startswith("@"):
        path = Path(text[1:].strip())
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError(f"names {path}, larger than {MAX_FILE_BYTES // 1024} KiB")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"names the file {path}, which cannot be read ({error})") from None
    if not text:
        return ()
    try:
        listed = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"is not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(listed, list):
        raise ValueError('must be a JSON array of servers ([{"name": …, "url": …}, …])')
    servers: list[McpServer] = []
    for number, item in enumerate(listed, 1):
        if not isinstance(item, dict):
            raise ValueError(f"server {number} is not a JSON object")
        headers = item.get("headers", {})
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ValueError(f"server {number}: headers must map names to text")
        filled = {
            k: _filled(v, environment, where=f"server {number}'s header {k}")
            for k, v in headers.items()
        }
        try:
            server = McpServer.model_validate({**item, "headers": filled})
        except ValidationError as error:
            raise ValueError(f"server {number}: {_first_problem(error)}") from None
        servers.append(server)
    _check_together(servers)
    return tuple(servers)


def _filled(value: str, environment: Mapping[str, str], *, where: str) -> str:
    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environment:
            raise ValueError(f"{where} names ${{{name}}}, which is not set")
        return environment[name]

    return VARIABLE.sub(variable, value)


def _first_problem(error: ValidationError) -> str:
    problem = error.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(part) for part in problem["loc"])
    message = str(problem["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _check_together(servers: list[McpServer]) -> None:
    names = [server.name for server in servers]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"names the server(s) {', '.join(twice)} more than once")
    for server in servers:
        if isinstance(server.tools, tuple):
            for name in server.tools:
                if not TOOL_NAME.match(name):
                    raise ValueError(f"server {server.name}: {name!r} is not a tool name")
            both = sorted(set(server.tools) & set(server.approve))
            if both:
                raise ValueError(
                    f"server {server.name}: {', '.join(both)} in both tools and approve; "
                    "a tool that needs approval goes in approve only"
                )

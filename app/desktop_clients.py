"""The desktop MCP clients ``docshelf config desktop`` can write for: each one's format and file.

A client starts a stdio server from ``command`` + ``args``, but each keeps its servers
under its own top-level key, in an entry of its own shape, in a file of its own. One
:class:`Client` row says all three, with the page that documents them; nothing here
reads or writes a file.

Locations are templates, one per platform (``sys.platform``): ``~`` is the home folder,
``%APPDATA%`` the Windows roaming application-data folder, ``$XDG_CONFIG_HOME`` the XDG
configuration folder (``~/.config`` when unset) and ``./`` the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MACOS, WINDOWS, LINUX = "darwin", "win32", "linux"
PLATFORM_NAMES = {MACOS: "macOS", WINDOWS: "Windows", LINUX: "Linux"}


@dataclass(frozen=True)
class Client:
    """One client's configuration format and where it keeps the file."""

    name: str  # the --client value
    label: str
    servers_key: str  # the top-level key that maps server names to entries
    locations: Mapping[str, str]  # sys.platform -> location template; absent: none documented
    docs: str  # where the format and the location are documented
    stdio_type: bool = False  # the entry says "type": "stdio"
    note: str = field(default="", compare=False)  # what the location means, when not obvious

    def entry(self, argv: Sequence[str]) -> dict[str, Any]:
        """The server entry that runs ``argv`` over stdio, in this client's shape."""
        head: dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        return {**head, "command": argv[0], "args": list(argv[1:])}

    def config_file(
        self,
        platform: str,
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        cwd: Path | None = None,
    ) -> Path | None:
        """The file this client reads on ``platform``, or None where none is documented."""
        template = self.locations.get(platform)
        if template is None:
            return None
        env = os.environ if env is None else env
        home = Path.home() if home is None else home
        if template.startswith("~/"):
            return home / template[2:]
        if template.startswith("./"):
            return (Path.cwd() if cwd is None else cwd) / template[2:]
        if template.startswith("%APPDATA%/"):
            base = env.get("APPDATA") or str(home / "AppData" / "Roaming")
            return Path(base, *template.split("/")[1:])
        if template.startswith("$XDG_CONFIG_HOME/"):
            base = env.get("XDG_CONFIG_HOME") or str(home / ".config")
            return Path(base, *template.split("/")[1:])
        raise ValueError(f"unknown location template {template!r}")


def _everywhere(template: str) -> dict[str, str]:
    return dict.fromkeys((MACOS, WINDOWS, LINUX), template)


CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        Client(
            "claude",
            "Claude Desktop",
            "mcpServers",
            {
                MACOS: "~/Library/Application Support/Claude/claude_desktop_config.json",
                WINDOWS: "%APPDATA%/Claude/claude_desktop_config.json",
            },
            "https://modelcontextprotocol.io/quickstart/user",
            note="Claude Desktop has no Linux build",
        ),
        Client(
            "claude-code",
            "Claude Code",
            "mcpServers",
            _everywhere("./.mcp.json"),
            "https://code.claude.com/docs/en/mcp",
            note="project scope: .mcp.json in the folder you start Claude Code from",
        ),
        Client(
            "cursor",
            "Cursor",
            "mcpServers",
            _everywhere("~/.cursor/mcp.json"),
            "https://cursor.com/docs/mcp",
            note="global; a project's own is .cursor/mcp.json",
        ),
        Client(
            "vscode",
            "VS Code",
            "servers",
            {
                MACOS: "~/Library/Application Support/Code/User/mcp.json",
                WINDOWS: "%APPDATA%/Code/User/mcp.json",
                LINUX: "$XDG_CONFIG_HOME/Code/User/mcp.json",
            },
            # the entry's shape: mcpStdioServerSchema in microsoft/vscode,
            # src/vs/workbench/contrib/mcp/common/mcpConfiguration.ts
            "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
            stdio_type=True,
            note="the default profile's; MCP: Open User Configuration opens it, "
            "a workspace's own is .vscode/mcp.json",
        ),
        Client(
            "windsurf",
            "Windsurf",
            "mcpServers",
            _everywhere("~/.codeium/windsurf/mcp_config.json"),
            "https://docs.windsurf.com/windsurf/cascade/mcp",
        ),
        Client(
            "zed",
            "Zed",
            "context_servers",
            {
                MACOS: "~/.config/zed/settings.json",
                WINDOWS: "%APPDATA%/Zed/settings.json",
                LINUX: "$XDG_CONFIG_HOME/zed/settings.json",
            },
            "https://zed.dev/docs/ai/mcp",
            note="Zed's settings file; zed: open settings file opens it",
        ),
    )
}
DEFAULT_CLIENT = "claude"

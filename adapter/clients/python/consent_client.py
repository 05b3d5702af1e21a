#!/usr/bin/env python3
"""An off-the-shelf MCP client (the official Python SDK, `pip install mcp`)
against `awg-mcp` in consent mode (spec §9, docs/adapter.md "Consent mode").

    consent_client.py http://127.0.0.1:8848/mcp [--elicit] [--owner alice --repo lab]

Without --elicit the client declares no elicitation: the first call ends
with the tool error `auth_required`, whose message ends with the authorize
URL. The script prints `AUTHORIZE_URL <url>` on stdout, waits for one line
on stdin (press Enter once you have consented in the browser), and calls
again in the same MCP session, which now holds the token.

With --elicit the client declares URL-mode elicitation: the adapter sends
`elicitation/create` (mode "url"); the script prints `AUTHORIZE_URL <url>`,
accepts, and the same call stays parked until the consent completes.

Either way the script prints the final tool result as one JSON line
(`RESULT {...}`) and exits 0 on success, 1 otherwise. It never prints a token.
"""

import argparse
import json
import sys

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def emit(tag: str, text: str) -> None:
    print(f"{tag} {text}", flush=True)


async def on_elicitation(_context, params) -> types.ElicitResult:
    if getattr(params, "mode", None) != "url":
        return types.ElicitResult(action="decline")
    emit("AUTHORIZE_URL", params.url)
    return types.ElicitResult(action="accept")


def tool_error_code(result: types.CallToolResult):
    if not result.is_error or not result.content:
        return None, None
    try:
        error = json.loads(result.content[0].text)
    except (AttributeError, ValueError):
        return None, None
    return error.get("code"), error.get("message", "")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the adapter's /mcp URL")
    parser.add_argument("--elicit", action="store_true", help="declare URL-mode elicitation")
    parser.add_argument("--owner", default="alice")
    parser.add_argument("--repo", default="lab")
    args = parser.parse_args()
    arguments = {"owner": args.owner, "repo": args.repo}
    callback = on_elicitation if args.elicit else None

    async with streamable_http_client(args.url) as (read, write, *_):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            result = await session.call_tool("get_repository", arguments)
            code, message = tool_error_code(result)
            if code == "auth_required":
                emit("AUTHORIZE_URL", message.rsplit(" ", 1)[-1])
                # Wait for the person to consent in the browser.
                await anyio.to_thread.run_sync(sys.stdin.readline)
                result = await session.call_tool("get_repository", arguments)
                code, message = tool_error_code(result)
            if result.is_error:
                emit("RESULT", json.dumps({"error": code, "message": message}))
                return 1
            emit("RESULT", json.dumps(result.structured_content))
            return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))

"""guard in front of any stdio MCP server: ``guard mcp-proxy -- <server command …>``.

``proxy`` relays the protocol, ``judge`` asks guard about each ``tools/call`` through the
flow every host shares, ``framing`` reads the wire strictly. Nothing here imports the ``mcp``
SDK: the relay is plain newline-delimited JSON-RPC over the server's pipes.
"""

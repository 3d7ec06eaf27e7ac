"""Adapters between guard and the places agents run. They translate; they never decide.

- ``guard.integrations.yolo_classifier``: the seed's ``classify_with_fusion(tool_name, params, session_id)``.
- ``guard.integrations.behavior_analyzer``: the seed's ``SessionBehaviorAnalyzer().analyze_session(id)``.
- ``guard.integrations.hosts``: the hook dialects of Claude Code, Codex CLI, Gemini CLI, Cursor and
  OpenClaw, and the one flow they share (``guard.integrations.hosts.flow``).
- ``guard.integrations.pending``: the small store that pairs a hook's ask with what followed it.
- ``guard.integrations.daemon`` / ``guard.integrations.server``: ``guard serve``, the long-lived process
  that keeps hook calls cheap, and its thin client.
- ``integrations/openclaw/``: the OpenClaw plugin (TypeScript), a client of the above.
- ``guard.integrations.mcp``: ``guard mcp-proxy``, guard in front of any stdio MCP server.
- ``guard.integrations.langchain`` / ``guard.integrations.openai_agents``: LangChain v1 middleware and OpenAI
  Agents SDK guardrails, over the shared link in ``guard.integrations.frameworks`` (extras
  ``[langchain]``, ``[openai-agents]``; nothing else imports them).
"""

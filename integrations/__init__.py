"""Adapters between guard and the places agents run. They translate; they never decide.

- ``integrations.yolo_classifier``: the seed's ``classify_with_fusion(tool_name, params, session_id)``.
- ``integrations.behavior_analyzer``: the seed's ``SessionBehaviorAnalyzer().analyze_session(id)``.
- ``integrations.hosts``: the hook dialects of Claude Code, Codex CLI, Gemini CLI, Cursor and
  OpenClaw, and the one flow they share (``integrations.hosts.flow``).
- ``integrations.pending``: the small store that pairs a hook's ask with what followed it.
- ``integrations.daemon`` / ``integrations.server``: ``guard serve``, the long-lived process
  that keeps hook calls cheap, and its thin client.
- ``integrations/openclaw/``: the OpenClaw plugin (TypeScript), a client of the above.
- ``integrations.mcp``: ``guard mcp-proxy``, guard in front of any stdio MCP server.
- ``integrations.langchain`` / ``integrations.openai_agents``: LangChain v1 middleware and OpenAI
  Agents SDK guardrails, over the shared link in ``integrations.frameworks`` (extras
  ``[langchain]``, ``[openai-agents]``; nothing else imports them).
"""

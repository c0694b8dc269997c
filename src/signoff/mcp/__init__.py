"""signoff over the Model Context Protocol: `signoff mcp` serves the sign-off tools (approvals bound
to exact content, the repair and notes verifiers, the airlock, room messages) to any MCP client,
over stdio or streamable HTTP, as a rooms agent."""

from signoff.mcp.auth import AgentKeyVerifier, Caller, parse_bearer
from signoff.mcp.server import build_server

__all__ = ["AgentKeyVerifier", "Caller", "build_server", "parse_bearer"]

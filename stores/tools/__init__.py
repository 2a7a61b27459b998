"""The tool registry: every tool a language model can call, defined once for every door."""

from stores.tools import anthropic, native, ohmypi, rockbot, suggestions, tomori
from stores.tools.registry import (
    REGISTRY,
    Tool,
    ToolArgumentError,
    ToolContext,
    all_tools,
    call_tool,
    get_tool,
)

__all__ = [
    "REGISTRY",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "all_tools",
    "anthropic",
    "call_tool",
    "get_tool",
    "native",
    "ohmypi",
    "rockbot",
    "suggestions",
    "tomori",
]

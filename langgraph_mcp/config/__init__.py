"""Connection configuration: what servers to talk to and how.

Accepted shapes (all normalised to ``dict[str, ServerConfig]`` by
:func:`load_connections`):

* a mapping ``{name: server}`` where each server is a dict in the standard
  ``mcpServers`` shape (``command``/``args``/``env``/``cwd`` for stdio,
  ``url``/``headers`` for HTTP), a bare URL string (streamable HTTP), a typed
  model from this module, or an in-process ``MCPServer`` / low-level ``Server``;
* a mapping with a top-level ``"mcpServers"`` (Claude Desktop, Cursor) or
  ``"servers"`` (VS Code) key;
* a path (``str`` or ``os.PathLike``) to a JSON file in either of those shapes;
* a single in-process ``MCPServer`` (named after the server).

``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` are expanded from
``os.environ`` in ``command``, ``args``, ``env``, ``cwd``, ``url`` and
``headers``. In a config file, a relative stdio ``cwd`` is resolved against
the file's folder (so a file can name servers next to it wherever the process
was started). A stdio server's ``envFile`` (VS Code) names a dotenv file whose
variables are added to its ``env`` (``env`` wins). Any problem raises
:class:`MCPConfigError`, naming the server and the field.

Reprs never show a value that came from the environment: a stdio server's
``command``, ``args`` and ``cwd`` are shown as written (``--token=${TOKEN}``),
``env``, ``headers`` and ``auth`` not at all, and a URL without its userinfo and
query values.
"""

from langgraph_mcp.config._load import load_connections
from langgraph_mcp.config._models import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    ClientCredentialsOAuth,
    ContentRoute,
    DeploymentOAuth,
    HTTPServerConfig,
    IdentityAssertionOAuth,
    InProcessServerConfig,
    ListingTTL,
    LoggingLevel,
    OutputHandling,
    PrivateKeyJWTOAuth,
    ProtocolMode,
    RestartPolicy,
    ServerConfig,
    SSEServerConfig,
    StdioServerConfig,
    UserOAuth,
)

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "ClientCredentialsOAuth",
    "ContentRoute",
    "DeploymentOAuth",
    "IdentityAssertionOAuth",
    "PrivateKeyJWTOAuth",
    "HTTPServerConfig",
    "UserOAuth",
    "InProcessServerConfig",
    "ListingTTL",
    "LoggingLevel",
    "OutputHandling",
    "ProtocolMode",
    "RestartPolicy",
    "SSEServerConfig",
    "ServerConfig",
    "StdioServerConfig",
    "load_connections",
]

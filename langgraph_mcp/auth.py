"""OAuth additions to pass as a server's ``auth``.

The MCP SDK's providers cover the authorization code flow (a person signs in), client
credentials, private-key JWT client authentication and enterprise identity assertions. This
module adds:

* :class:`JWTBearerOAuthProvider`, the **JWT-bearer grant** of RFC 7523 for workload identity
  federation (the MCP ``io.modelcontextprotocol/auth/wif`` extension): a workload that already
  holds a signed JWT from its platform (a Kubernetes service account token, a cloud identity
  token, a CI job's OIDC token) trades it for an access token, with no secret of its own;
* :class:`DPoPAuth`, **DPoP** (RFC 9449, the MCP ``io.modelcontextprotocol/auth/dpop``
  extension) around any of the SDK's OAuth providers: tokens bound to a key the client holds,
  presented with a fresh signed proof on every request, so a stolen token alone is useless.

.. code-block:: python

    from langgraph_mcp.auth import JWTBearerOAuthProvider

    auth = JWTBearerOAuthProvider(
        server_url="https://mcp.example.com/mcp",
        storage=my_token_storage,
        client_id="my-workload",
        assertion=open("/var/run/secrets/tokens/mcp").read().strip(),
    )
    servers = {"tools": {"url": "https://mcp.example.com/mcp", "auth": auth}}

The assertion is sent only to the authorization server it was made for: a fixed assertion's own
``aud`` claim names that server (it is read, not verified: verifying is the server's job), and
the flow stops, without sending it, when the MCP server points anywhere else. An assertion made
per request (a callable) is asked for the audience it must carry, and ``issuer`` then names the
one server it may go to. A refused token request is an error: the grant is not retried and no
other grant is tried.
"""

from langgraph_mcp._oauth.providers import JWT_BEARER_GRANT, DPoPAuth, JWTBearerOAuthProvider

__all__ = ["JWT_BEARER_GRANT", "DPoPAuth", "JWTBearerOAuthProvider"]

"""Per-user OAuth: the deployment's callback route, and revoking a user's tokens.

An HTTP server configured with ``oauth`` (:class:`~langgraph_mcp.config.UserOAuth`) asks each
user to connect with an ``mcp_authorization`` interrupt; the authorization server sends the
user's browser back to the route made by :func:`oauth_callback_app`, which checks ``state``,
exchanges the code and stores the user's tokens. A deployment mounts it in its ``http.app``::

    app.mount("/oauth", oauth_callback_app(servers, store=get_store, user_of=signed_in_user))

(the servers' ``redirect_uri`` is then ``https://<host>/oauth/callback``). ``user_of`` says who
the browser is signed in as: a sign-in is stored only for the user its link was made for.

The tokens are kept in the graph's store, which a LangGraph server also serves to its users (the
store API). :func:`guard_store` is the custom-auth rule that keeps the package's records out of
that API::

    auth.on.store()(guard_store)
"""

from langgraph_mcp._oauth.callback import PACKAGE_NAMESPACE, guard_store, oauth_callback_app, revoke

__all__ = ["PACKAGE_NAMESPACE", "guard_store", "oauth_callback_app", "revoke"]

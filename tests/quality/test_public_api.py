"""The public API, pinned: a change to it is a deliberate diff of this file.

The public modules are the package root and the modules without a leading underscore; each
exposes exactly its ``__all__``, and everything else in the package is private (``_``-prefixed).
Every exception the package defines derives from :class:`~langgraph_mcp.MCPError`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import langgraph_mcp
from langgraph_mcp import MCPConfigError, MCPError, MCPMiddleware, MCPToolCallError
from langgraph_mcp.errors import FAILURE_KINDS, FailureKind

PUBLIC: dict[str, list[str]] = {
    "langgraph_mcp": [
        "ApprovalByRisk",
        "FailureKind",
        "FromConfig",
        "FromContext",
        "FromState",
        "FromStore",
        "HTTPServerConfig",
        "InProcessServerConfig",
        "MCPArgumentError",
        "MCPAuthenticationError",
        "MCPConfigError",
        "MCPConnectionError",
        "MCPError",
        "MCPMiddleware",
        "MCPPool",
        "MCPProtocolError",
        "MCPServerError",
        "MCPSkillError",
        "MCPTimeoutError",
        "MCPTool",
        "MCPToolCallError",
        "MCPToolNode",
        "MCPUnknownServerError",
        "MissingValue",
        "OutputHandling",
        "RestartPolicy",
        "ResultToState",
        "SSEServerConfig",
        "ServerConfig",
        "StdioServerConfig",
        "ToolOptions",
        "ToolSearch",
        "__version__",
        "create_mcp_agent",
        "expand_uri_template",
        "load_connections",
        "load_mcp_tools",
        "read_tool_output",
        "route_tool_calls",
    ],
    "langgraph_mcp.config": [
        "ClientCredentialsOAuth",
        "ContentRoute",
        "DeploymentOAuth",
        "IdentityAssertionOAuth",
        "PrivateKeyJWTOAuth",
        "DEFAULT_CALL_TIMEOUT",
        "DEFAULT_CONNECT_TIMEOUT",
        "HTTPServerConfig",
        "InProcessServerConfig",
        "ListingTTL",
        "LoggingLevel",
        "OutputHandling",
        "ProtocolMode",
        "RestartPolicy",
        "SSEServerConfig",
        "ServerConfig",
        "StdioServerConfig",
        "UserOAuth",
        "load_connections",
    ],
    "langgraph_mcp.demo": ["SERVER_NAMES", "demo_server", "main"],
    "langgraph_mcp.deploy": [
        "CONFIG_ENV",
        "Closable",
        "DRAIN_TIMEOUT",
        "config_path",
        "lifespan",
        "server_store",
    ],
    "langgraph_mcp.elicitation": ["accept", "cancel", "decline", "resume_elicitations"],
    "langgraph_mcp.events": [
        "EVENTS_EXTENSION",
        "EVENTS_REVISION",
        "EVENTS_URL_ENV",
        "LEASE_WINDOW",
        "LEASE_WINDOW_ENV",
        "TASKS_KEY_ENV",
        "TRIGGERS_ENV",
        "DeliveryMode",
        "EventSubscription",
        "EventTrigger",
        "EventTriggers",
        "EventType",
        "MCPEvent",
        "TaskWakeups",
        "ThreadByField",
        "WebhookReceiver",
        "check_delivery",
        "load_triggers",
        "new_secret",
        "sign",
    ],
    "langgraph_mcp.oauth": ["PACKAGE_NAMESPACE", "guard_store", "oauth_callback_app", "revoke"],
    "langgraph_mcp.errors": [
        "FAILURE_KINDS",
        "FailureKind",
        "MCPArgumentError",
        "MCPAuthenticationError",
        "MCPConfigError",
        "MCPConnectionError",
        "MCPError",
        "MCPProtocolError",
        "MCPServerError",
        "MCPSkillError",
        "MCPTimeoutError",
        "MCPToolCallError",
        "MCPUnknownServerError",
        "MissingValue",
    ],
    "langgraph_mcp.skills": [
        "MCPSkill",
        "MCPSkillError",
        "MCPSkillFile",
        "MCPSkills",
        "MCPSkillsAgentState",
        "MCPSkillsMiddleware",
        "MCPSkillsState",
    ],
    "langgraph_mcp.streaming": [
        "MCPCalls",
        "MCPStreamTransformer",
        "MCP_CHANNEL",
    ],
    "langgraph_mcp.options": [
        "ApprovalByRisk",
        "ApprovalPolicy",
        "ArgumentSource",
        "FromConfig",
        "FromContext",
        "FromState",
        "FromStore",
        "MissingValue",
        "REVEALED_KEY",
        "ResultMapping",
        "ResultToState",
        "ToolFilter",
        "ToolOptions",
        "ToolSearch",
        "ToolSearchState",
        "is_destructive",
        "merge_revealed",
    ],
    "langgraph_mcp.apps": [
        "CONTEXT_KEY",
        "MAX_CALLS",
        "MAX_CALLS_PER_THREAD",
        "MAX_CALLS_PER_USER",
        "MAX_CONTEXT",
        "MCPAppCallsState",
        "ROUTE_PREFIX",
        "VIEW_CALLS_KEY",
        "VIEW_CALL_CONFIG",
        "app_context_message",
        "app_routes",
        "route_view_calls",
        "view_call_config",
        "view_call_input",
        "view_calls_node",
    ],
    "langgraph_mcp.auth": ["DPoPAuth", "JWT_BEARER_GRANT", "JWTBearerOAuthProvider"],
    "langgraph_mcp.schemas": ["SCHEMA_NAMES", "json_schema", "json_schemas"],
    "langgraph_mcp.serve": [
        "ANSWER_FIELD",
        "GraphServer",
        "GraphTool",
        "MESSAGE_ARGUMENT",
        "ServeOptions",
        "TASKS_EXTENSION",
        "THREAD_ARGUMENT",
        "THREAD_META_KEY",
        "create_mcp_server",
        "deployment_tools",
        "load_graph",
        "serve",
    ],
    "langgraph_mcp.testing": [
        "ModelCall",
        "ScriptedCall",
        "ScriptedChatModel",
        "Turn",
        "TurnBy",
        "UnboundPolicy",
    ],
    "langgraph_mcp.types": [
        "MCPEventInput",
        "MCPEventMessage",
        "MCPEventPayload",
        "APPROVALS_INTERRUPT_TYPE",
        "APPROVAL_INTERRUPT_TYPE",
        "APP_UI_NAME",
        "AUTHORIZATION_INTERRUPT_TYPE",
        "ELICITATION_INTERRUPT_TYPE",
        "ElicitationHandler",
        "MCPAppCallRequest",
        "MCPAppCallResponse",
        "MCPAppContext",
        "MCPAppToolResult",
        "MCPAppUIProps",
        "MCPApprovalActionRequest",
        "MCPApprovalDecision",
        "MCPApprovalDecisions",
        "MCPApprovalEditedAction",
        "MCPApprovalInterrupt",
        "MCPApprovalResponses",
        "MCPApprovalResume",
        "MCPApprovalReviewConfig",
        "MCPApprovalRisk",
        "MCPApprovalsDecisions",
        "MCPApprovalsInterrupt",
        "MCPApprovalsResponses",
        "MCPApprovalsResume",
        "MCPAuthorizationInterrupt",
        "MCPCallInfo",
        "MCPCallSnapshot",
        "MCPElicitationAccept",
        "MCPElicitationActionRequest",
        "MCPElicitationCancel",
        "MCPElicitationDecision",
        "MCPElicitationDecisions",
        "MCPElicitationDecline",
        "MCPElicitationEditedAction",
        "MCPElicitationFormRequest",
        "MCPElicitationInterrupt",
        "MCPElicitationRequest",
        "MCPElicitationResponse",
        "MCPElicitationResume",
        "MCPElicitationResumeValue",
        "MCPElicitationReviewConfig",
        "MCPElicitationUrlRequest",
        "MCPInterrupt",
        "MCPLoadedSkill",
        "MCPLoadedSkillFile",
        "MCPLogEvent",
        "MCPProgressEvent",
        "MCPProgressUIProps",
        "MCPResourceUpdatedEvent",
        "MCPSamplingInterrupt",
        "MCPSamplingResponses",
        "MCPSamplingResume",
        "MCPSamplingResumeValue",
        "MCPSkillApprovalInterrupt",
        "MCPSkillApprovalResume",
        "MCPSkillDecision",
        "MCPSkillDecisions",
        "MCPSkillFileInfo",
        "MCPSkillGrant",
        "MCPSkillLoadResult",
        "MCPSkillResponses",
        "MCPStreamEvent",
        "MCPTaskInterrupt",
        "MCPToolArtifact",
        "MCPToolCatalog",
        "MCPToolCatalogServer",
        "PROGRESS_UI_NAME",
        "SAMPLING_INTERRUPT_TYPE",
        "SKILL_APPROVAL_INTERRUPT_TYPE",
        "SKILL_GRANTS_KEY",
        "TASK_INTERRUPT_TYPE",
    ],
}


def all_modules() -> list[ModuleType]:
    found = [langgraph_mcp]
    for info in pkgutil.walk_packages(langgraph_mcp.__path__, "langgraph_mcp."):
        found.append(importlib.import_module(info.name))
    return found


def is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def test_the_public_modules_are_exactly_these() -> None:
    assert sorted(m.__name__ for m in all_modules() if is_public(m.__name__)) == sorted(PUBLIC)


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_a_public_module_exposes_exactly_its_names(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(PUBLIC[module])
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ names {name!r}, which it does not define"
    # Anything the module itself defines without a leading underscore is in __all__: a new public
    # name is a deliberate export, not an accident.
    own = [
        name
        for name, value in vars(mod).items()
        if not name.startswith("_")
        and getattr(value, "__module__", None) == module
        and (inspect.isclass(value) or inspect.isfunction(value))
    ]
    assert sorted(set(own) - set(mod.__all__)) == []


def test_every_exception_the_package_defines_is_an_mcp_error() -> None:
    strays = [
        f"{mod.__name__}.{name}"
        for mod in all_modules()
        for name, value in vars(mod).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == mod.__name__
        and not issubclass(value, MCPError)
    ]
    assert strays == []


@pytest.mark.parametrize(
    ("exception", "builtin"),
    [
        ("MCPConfigError", ValueError),
        ("MCPArgumentError", ValueError),
        ("MCPConnectionError", RuntimeError),
        ("MCPAuthenticationError", RuntimeError),
        ("MCPProtocolError", RuntimeError),
        ("MCPServerError", RuntimeError),
        ("MCPTimeoutError", TimeoutError),
        ("MCPUnknownServerError", KeyError),
        ("MissingValue", LookupError),
    ],
)
def test_each_error_keeps_its_builtin_base(exception: str, builtin: type[BaseException]) -> None:
    cls = getattr(langgraph_mcp, exception)
    assert issubclass(cls, MCPError)
    assert issubclass(cls, builtin)


def test_the_failure_kinds_are_one_list_for_errors_and_raise_errors() -> None:
    assert sorted(FAILURE_KINDS) == sorted(FailureKind.__args__)  # type: ignore[attr-defined]
    for kind in sorted(FAILURE_KINDS):
        assert MCPToolCallError("failed", kind=kind).kind == kind
        MCPMiddleware({}, raise_errors=[kind])  # every kind a call can fail with may be raised
    with pytest.raises(MCPConfigError, match="raise_errors has unknown kind"):
        MCPMiddleware({}, raise_errors=["bogus"])  # type: ignore[list-item]


def test_every_failure_kind_raised_in_the_package_is_a_known_kind() -> None:
    """Each ``kind="..."`` written in the package's source is one of the kinds."""
    import re

    used: set[str] = set()
    for mod in all_modules():
        try:
            source = inspect.getsource(mod)
        except (OSError, TypeError):
            continue
        used.update(re.findall(r'\bkind="([a-z_]+)"', source))
    assert used - FAILURE_KINDS == set()

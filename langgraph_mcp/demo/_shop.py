"""The shop demo server: tools that ask the person for input before they act.

The questions are asked with the MCP SDK's era-agnostic ``Resolve``/``Elicit``: on a
2026-07-28 connection they come back as ``InputRequiredResult`` rounds, on an older
(2025-11-25) connection as live ``elicitation/create`` requests.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, Field

server = MCPServer("shop", instructions="Orders and trips; asks before doing anything irreversible.")

ORDERS = {"A-1001": "2 x espresso beans", "A-1002": "1 x grinder"}


class Confirm(BaseModel):
    ok: bool = Field(description="Go ahead?")
    reason: str = Field(default="", description="Optional note for the log")


class Trip(BaseModel):
    start: str = Field(description="First day (YYYY-MM-DD)")
    nights: int = Field(default=2, ge=1, le=14, description="How many nights")
    room: Literal["single", "double", "suite"] = Field(default="double", description="Room type")


async def confirm_cancel(order_id: str) -> Elicit[Confirm]:
    return Elicit(f"Cancel order {order_id} ({ORDERS.get(order_id, 'unknown')})?", Confirm)


async def ask_trip(city: str) -> Elicit[Trip]:
    return Elicit(f"When do you want to go to {city}?", Trip)


async def confirm_trip(
    city: str, trip: Annotated[ElicitationResult[Trip], Resolve(ask_trip)]
) -> Elicit[Confirm]:
    if isinstance(trip, AcceptedElicitation):
        t = trip.data
        return Elicit(f"Book a {t.room} room in {city} for {t.nights} nights from {t.start}?", Confirm)
    return Elicit(f"Skip the trip to {city}?", Confirm)


@server.tool()
async def cancel_order(
    order_id: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm_cancel)]
) -> str:
    """Cancel an order (asks for confirmation first)."""
    if isinstance(answer, AcceptedElicitation) and answer.data.ok:
        ORDERS.pop(order_id, None)
        return f"order {order_id} cancelled" + (f" ({answer.data.reason})" if answer.data.reason else "")
    return f"order {order_id} kept ({answer.action})"


@server.tool()
async def book_trip(
    city: str,
    trip: Annotated[ElicitationResult[Trip], Resolve(ask_trip)],
    confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_trip)],
) -> str:
    """Book a trip: asks for dates and room, then for confirmation (two rounds)."""
    if isinstance(trip, AcceptedElicitation) and isinstance(confirm, AcceptedElicitation) and confirm.data.ok:
        t = trip.data
        return f"booked: {city}, {t.nights} nights from {t.start}, {t.room} room"
    return f"no trip to {city}"

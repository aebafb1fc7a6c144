"""Two small servers for tool search across servers: a weather service and a travel service.

``build_weather()``: ``get_forecast(city, days=3)``, ``current_conditions(city)``,
``air_quality(city)``, ``sunrise_sunset(city)``. ``build_trips()``: ``find_hotels(city, nights)``,
``book_flight(origin, destination)``, ``city_guide(city)``, ``convert_currency(amount, to)``.
Each tool answers ``<tool>:`` followed by its arguments as JSON (sorted keys). ``forecast_text``
overrides ``get_forecast``'s description (a server whose tool changed since it was kept).
"""

import json
import sys
from pathlib import Path

if not __package__:  # run as a plain script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp.server.mcpserver import MCPServer

from tests.servers._runner import parser, run_server

FORECAST = "Weather forecast for a city: temperature and rain for the next days."


def _answer(name: str, **kwargs: object) -> str:
    return f"{name}:" + json.dumps(kwargs, sort_keys=True)


def build_weather(forecast_text: str = FORECAST) -> MCPServer:
    """The weather service."""
    srv: MCPServer = MCPServer("weather")

    @srv.tool(description=forecast_text)
    def get_forecast(city: str, days: int = 3) -> str:
        return _answer("get_forecast", city=city, days=days)

    @srv.tool()
    def current_conditions(city: str) -> str:
        """Current weather conditions in a city: temperature, wind and humidity now."""
        return _answer("current_conditions", city=city)

    @srv.tool()
    def air_quality(city: str) -> str:
        """Air quality index and pollen levels of a city."""
        return _answer("air_quality", city=city)

    @srv.tool()
    def sunrise_sunset(city: str) -> str:
        """Sunrise and sunset times for a city today."""
        return _answer("sunrise_sunset", city=city)

    return srv


def build_trips() -> MCPServer:
    """The travel service."""
    srv: MCPServer = MCPServer("trips")

    @srv.tool()
    def find_hotels(city: str, nights: int = 1) -> str:
        """Find hotels in a city (e.g. Paris) with prices for the given nights."""
        return _answer("find_hotels", city=city, nights=nights)

    @srv.tool()
    def book_flight(origin: str, destination: str) -> str:
        """Book a flight between two airports."""
        return _answer("book_flight", origin=origin, destination=destination)

    @srv.tool()
    def city_guide(city: str) -> str:
        """A visitor's guide to a city (e.g. Paris): sights, museums, neighbourhoods."""
        return _answer("city_guide", city=city)

    @srv.tool()
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money to another currency."""
        return _answer("convert_currency", amount=amount, to=to)

    return srv


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--which", choices=["weather", "trips"], default="weather")
    args = p.parse_args()
    run_server(
        build_weather() if args.which == "weather" else build_trips(), args.transport, args.host, args.port
    )


if __name__ == "__main__":
    main()

"""Answering an MCP server's requests for input, durably.

By concern: ``answers`` (questions as payloads, answers validated), ``policy`` (who answers:
a person, a handler, decline, a sampling model), ``sampling`` (the model), ``durable`` (rounds
stored in the checkpoint), ``rounds`` (2026-07-28 ``InputRequiredResult`` calls), ``held``
(2025-11-25 calls held open while a person answers), ``url_required`` (``-32042``).
"""

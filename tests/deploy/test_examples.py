"""The quickstart and the server graph run as users run them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest_servers import REPO_ROOT

# Each example runs in a process of its own, with its MCP servers.
pytestmark = pytest.mark.deploy


def _run_example(script: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run an example as a user would: its own process, no API keys, nothing inherited."""
    return subprocess.run(
        [sys.executable, f"examples/{script}", *args],
        cwd=REPO_ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(REPO_ROOT), "COLUMNS": "120"},
    )


def test_quickstart_runs_offline() -> None:
    done = _run_example("quickstart.py")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "tools: add, multiply, describe, count_primes, search_notes, read_note, write_note" in out
    assert "[tools] add -> 42.0 (success)" in out
    assert "[tools] read_note -> train to Lyon on Friday 08:12, platform 4 (success)" in out
    assert "The mean is 3.833 (median 3.5)" in out


def test_progress_example_renders_both_calls() -> None:
    done = _run_example("progress.py")
    assert done.returncode == 0, done.stderr
    assert "primes_60k: 6057 primes" in done.stdout
    assert "primes_150k: 13848 primes" in done.stdout
    assert "count_primes [primes_150k]" in done.stdout
    assert "13848 primes so far" in done.stdout  # the last progress message reached the bar


def test_elicitation_example_auto() -> None:
    done = _run_example("elicitation.py", "--auto")
    assert done.returncode == 0, done.stderr
    assert "--- the graph is paused on 2 question(s) ---" in done.stdout
    assert "call_cancel: order A-1002 cancelled (changed my mind)" in done.stdout
    assert "call_trip: booked: Lisbon, 2 nights from 2027-04-12, double room" in done.stdout


def test_elicitation_example_on_a_terminal() -> None:
    # cancel_order: accept, ok=yes, no reason; book_trip: accept, dates, default nights, suite;
    # then decline the booking confirmation.
    answers = "a\ny\n\na\n2027-09-01\n\nsuite\nd\n"
    done = _run_example("elicitation.py", "--legacy", stdin=answers)
    assert done.returncode == 0, done.stderr
    assert "Book a suite room in Lisbon for 2 nights from 2027-09-01?" in done.stdout
    assert "call_cancel: order A-1002 cancelled" in done.stdout
    assert "call_trip: no trip to Lisbon" in done.stdout


def test_elicitation_example_refuses_answers_it_does_not_know_and_asks_again() -> None:
    # "ok" is no action and "a" no yes-or-no: each is refused and asked again, never taken for a no.
    answers = "ok\na\na\ny\n\nc\nd\n"
    done = _run_example("elicitation.py", stdin=answers)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "(a)ccept, (d)ecline or (c)ancel? [a]" in out
    assert "answer a, d or c (or accept, decline, cancel)" in out
    assert "Go ahead? [y/n]:" in out
    assert "answer y or n" in out
    assert "call_cancel: order A-1002 cancelled" in out
    assert "call_trip: no trip to Lisbon" in out  # cancelled, then declined


def test_agent_example_runs_synchronously_with_approval_and_hidden_arguments() -> None:
    done = _run_example("agent.py")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "approval asked: write_note {'text': 'buy flour'}" in out  # the forged title is gone
    # The person's edit ran (the model is told so), with the title from the context.
    assert (
        '[write_note] Note: before this call ran, a person changed its arguments to {"text": "buy oat milk"}'
        in out
    )
    assert "saved 'ada' (success)" in out
    assert "found in state: ['groceries', 'trip', 'ideas']" in out
    assert "[search_notes] groceries, trip, ideas (success)" in out  # one text block per item
    assert "agent: search_notes: groceries, trip, ideas" in out


def test_a_demo_server_name_that_does_not_exist_is_refused_with_the_names_that_do() -> None:
    from langgraph_mcp.demo import demo_server

    done = subprocess.run(
        [sys.executable, "-m", "langgraph_mcp.demo", "maths"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "invalid choice: 'maths'" in done.stderr, done.stderr
    assert "'math', 'notes', 'shop'" in done.stderr
    with pytest.raises(ValueError, match="the demo servers are math, notes, shop"):
        demo_server("maths")


def test_deep_agent_skills_example_loads_an_approved_mcp_skill_beside_a_local_one() -> None:
    done = _run_example("deep_agent_skills.py", "--auto")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "## Skills from MCP servers" in out
    # The MCP skill keeps its id, marked apart from deepagents' local skill of the same name.
    assert '`skills:release-notes` (server "skills") (not the local skill of the same name)' in out
    assert "- **release-notes**: The team's own release checklist (local, not from MCP)" in out
    assert "--- the agent is paused: skill_approval ---" in out
    assert "Load the skill 'release-notes' from MCP server 'skills' into the model's context" in out
    assert "templates/notes.md" in out and "sha256:" in out
    # The approved skill's body, then the file it refers to, each read and checked.
    assert '<skill server="skills" skill="skills:release-notes" file="SKILL.md">' in out
    assert "Write release notes for the people who install the new version" in out
    assert '<skill server="skills" skill="skills:release-notes" file="templates/notes.md">' in out
    assert "# <project> <version> (<YYYY-MM-DD>)" in out
    assert "Release checklist (local skill)" not in out  # the local skill's body was never loaded
    assert "loaded in the thread's state: ['skills:release-notes']" in out

"""RFC 6570 URI template expansion: the RFC's own examples (section 3.2) at every level."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp import expand_uri_template
from langgraph_mcp._pool.uritemplate import template_variables

VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

RFC_EXAMPLES = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list*}", "#red,green,blue"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{.who,who}", ".fred.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.empty_keys}", "X"),
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{;who}", ";who=fred"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?who}", "?who=fred"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&var:3}", "&var=val"),
    ("{&list*}", "&list=red&list=green&list=blue"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc_6570_examples(template: str, expected: str) -> None:
    assert expand_uri_template(template, VALUES) == expected


def test_unicode_is_percent_encoded_as_utf8() -> None:
    assert expand_uri_template("file:///{name}", {"name": "café"}) == "file:///caf%C3%A9"


@pytest.mark.parametrize("bad", ["{", "a}", "{va r}", "{=x}", "{x:0}", "{x:abc}"])
def test_invalid_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="URI template"):
        expand_uri_template(bad, {"x": "1"})


def test_which_variables_are_required() -> None:
    got = {v.name: v.required for v in template_variables("db://{+table}/rows{/id}{?limit,offset}{#frag}")}
    assert got == {"table": True, "id": True, "limit": False, "offset": False, "frag": False}


def test_literals_outside_expressions_are_pct_encoded() -> None:
    # RFC 6570 section 3.1: a literal character not allowed in a URI is copied pct-encoded.
    assert expand_uri_template("notes://my notes/{x}", {"x": "1"}) == "notes://my%20notes/1"
    assert expand_uri_template("notes://caf\u00e9/{x}", {"x": "1"}) == "notes://caf%C3%A9/1"
    assert expand_uri_template("a%20b/{x}", {"x": "1"}) == "a%20b/1"

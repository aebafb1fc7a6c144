"""The ``mcp-app`` component's pure checks (``ui/mcp-app-host.ts``), run as they are shipped: the
module is bundled with the browser harness's esbuild and run by Node. What a view declares or asks
for that could reach beyond its frame is refused: wildcard and scheme-only CSP sources, executable
download names; the permissions it declares are only granted once the person said yes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph_server import REPO_ROOT

HARNESS = REPO_ROOT / "tests" / "browser"

CASES = """
import * as host from "./host.mjs";
const out = {};
const csp = (declared) => host.contentSecurityPolicy({ connectDomains: declared, resourceDomains: declared,
  frameDomains: declared, baseUriDomains: declared });
out.refused = Object.fromEntries([
  "https://*", "http://*", "wss://*", "https://*:443", "https:", "http:", "data:", "blob:", "*", "'self'",
  "'unsafe-eval'", "https://*.com", "https://a.*.example.com", "https://*.*.example.com", "https://",
  "https://exa mple.com", "javascript:alert(1)", "https://ok.example.com/path", "https://ok.example.com;",
].map((source) => [source, csp([source])]));
out.kept = csp(["https://*.example.com", "https://api.example.com", "http://127.0.0.1:8123", "wss://live.example.org"]);
const name = (uri) => {
  try {
    return host.downloadable({ contents: [{ type: "resource", resource: { uri, text: "x" } }] }).name;
  } catch (error) {
    return "refused: " + error.message;
  }
};
out.names = Object.fromEntries([
  "ui://x/report.pdf", "ui://x/temps.csv", "ui://x/setup.exe", "ui://x/SETUP.EXE", "ui://x/report.pdf .exe",
  "ui://x/x.exe.", "ui://x/x.exe .", "ui://x/run.bat", "ui://x/install.msi", "ui://x/go.sh", "ui://x/a.cmd",
  "ui://x/a.ps1", "ui://x/a.vbs", "ui://x/a.js", "ui://x/a.jar", "ui://x/a.scr", "ui://x/a.lnk", "ui://x/a.app",
  "ui://x/a.dmg", "ui://x/a.deb", "ui://x/a.hta", "ui://x/a.reg", "ui://x/x.exe%20", "ui://x/x.exe%2E",
  "ui://x/x.exe::$DATA", "ui://x/exe", "ui://x/notes.txt.exe.txt",
].map((uri) => [uri, name(uri)]));
const attempt = (f) => { try { return f(); } catch (error) { return "error: " + error.message; } };
out.asked = attempt(() => [
  host.permissionsAsked(undefined),
  host.permissionsAsked({ camera: {}, microphone: {}, geolocation: {}, clipboardWrite: {} }),
  host.permissionsAsked({ clipboardWrite: {}, fullscreen: {}, usb: {}, camera: "yes" }),
]);
out.allow = attempt(() => [host.allowAttribute([]), host.allowAttribute(["clipboard-write"]),
  host.allowAttribute(["usb"])]);
out.links = Object.fromEntries([
  "https://example.com/a?b=1", "http://127.0.0.1:8123/x", "https://exämple.com/", "HTTPS://EXAMPLE.COM",
  "javascript:alert(1)", "data:text/html,hi", "file:///etc/passwd", "https://bank.example@evil.example/",
  "https://user:pw@example.com/", "ftp://example.com/", "not a url", "x".repeat(5000),
].map((url) => [url.slice(0, 40), host.linkShown(url)]));
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (HARNESS / "node_modules" / "esbuild").is_dir():
        pytest.fail("node and the browser harness's esbuild are needed: run python3 tests/browser/install.py")
    folder = tmp_path_factory.mktemp("mcp-app-host")
    bundle = (
        "require('esbuild').build({entryPoints: [process.argv[1]], outfile: process.argv[2], bundle: true, "
        "format: 'esm', platform: 'neutral', logLevel: 'error'}).catch(() => process.exit(1))"
    )
    subprocess.run(
        [node, "-e", bundle, str(REPO_ROOT / "ui" / "mcp-app-host.ts"), str(folder / "host.mjs")],
        cwd=HARNESS,
        check=True,
        timeout=60,
    )
    Path(folder / "cases.mjs").write_text(CASES)
    ran = subprocess.run(
        [node, str(folder / "cases.mjs")], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def test_a_views_csp_is_opened_only_to_named_hosts_never_to_wildcards_or_schemes(
    checks: dict[str, Any],
) -> None:
    for source, policy in checks["refused"].items():
        for directive in ("connect-src", "frame-src", "base-uri"):
            assert f"{directive} 'none'" in policy, (source, policy)
        assert "script-src 'unsafe-inline' ;" in policy, (source, policy)
    kept = checks["kept"]
    named = "https://*.example.com https://api.example.com http://127.0.0.1:8123 wss://live.example.org"
    assert f"connect-src {named};" in kept and f"script-src 'unsafe-inline' {named};" in kept


def test_an_executable_download_name_is_refused(checks: dict[str, Any]) -> None:
    names = checks["names"]
    assert names["ui://x/report.pdf"] == "report.pdf" and names["ui://x/temps.csv"] == "temps.csv"
    assert names["ui://x/exe"] == "exe" and names["ui://x/notes.txt.exe.txt"] == "notes.txt.exe.txt"
    assert names["ui://x/x.exe::$DATA"] == "x.exe___DATA"  # no stream of a file: the colons are gone
    refused = {uri: shown for uri, shown in names.items() if shown.startswith("refused: ")}
    assert set(names) - set(refused) == {
        "ui://x/report.pdf",
        "ui://x/temps.csv",
        "ui://x/exe",
        "ui://x/notes.txt.exe.txt",
        "ui://x/x.exe::$DATA",
    }, names
    assert all("could run as a program" in shown for shown in refused.values()), refused


def test_a_views_permissions_are_granted_only_once_asked_and_allowed(checks: dict[str, Any]) -> None:
    none, every, some = checks["asked"]
    assert none == [] and every == ["camera", "microphone", "geolocation", "clipboard-write"]
    assert some == ["clipboard-write"]  # fullscreen, unknown features and malformed values are never asked
    nothing, clipboard, unknown = checks["allow"]
    features = ["camera", "microphone", "geolocation", "clipboard-write", "clipboard-read", "fullscreen"]
    for feature in features:
        assert f"{feature} 'none'" in nothing.split("; "), nothing
        assert f"{feature} 'none'" in unknown.split("; "), unknown
    assert "clipboard-write *" in clipboard.split("; ") and "clipboard-write 'none'" not in clipboard
    assert "fullscreen 'none'" in clipboard.split("; ") and "usb 'none'" in unknown.split("; ")


def test_a_link_is_shown_as_it_will_be_opened_and_only_an_http_one(checks: dict[str, Any]) -> None:
    assert checks["links"] == {
        "https://example.com/a?b=1": "https://example.com/a?b=1",
        "http://127.0.0.1:8123/x": "http://127.0.0.1:8123/x",
        "https://exämple.com/": "https://xn--exmple-cua.com/",  # a look-alike shows as what it is
        "HTTPS://EXAMPLE.COM": "https://example.com/",
        "javascript:alert(1)": None,
        "data:text/html,hi": None,
        "file:///etc/passwd": None,
        "https://bank.example@evil.example/": None,
        "https://user:pw@example.com/": None,
        "ftp://example.com/": None,
        "not a url": None,
        "x" * 40: None,
    }

#!/usr/bin/env python3
"""End-to-end consent demo: the official MCP Python SDK (consent_client.py)
against awg-mcp in consent mode and the real refcore (spec §9).

    demo_refcore.py --refcore PATH --awg-mcp PATH [--port 8848]

Run it with the Python of a venv that has `mcp` installed (httpx comes with
it). It starts refcore on SQLite in a temporary directory, creates a person
`alice` with a password and a repository `alice/lab` through the setup API,
registers an OAuth application, starts awg-mcp in consent mode, and then, for
both delivery paths (`auth_required` + retry, and URL-mode elicitation), runs
consent_client.py and plays alice's browser on the printed authorize URL
(login form, consent form, the redirect to the adapter's callback). Exit 0
when both calls complete with the repository.

Passwords, tokens, cookies, CSRF values, states, challenges and codes are
generated here and never printed: URLs are shown with those values masked.
Not part of CI.
"""

import argparse
import html.parser
import os
import re
import secrets
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
SECRET_PARAMS = {"state", "code", "code_challenge", "_csrf", "redirect_to"}


def say(text: str) -> None:
    print(f"[demo] {text}", flush=True)


SECRET_VALUE = re.compile(r"\b(" + "|".join(SECRET_PARAMS) + r")=[^&\s\"']*")


def mask(text: str) -> str:
    """The text (a URL, or a line quoting one) with every secret query value
    replaced by `***`, wherever it appears, percent-encoded or not."""
    return SECRET_VALUE.sub(r"\1=***", text)


class Forms(html.parser.HTMLParser):
    """Collects each form's action, method and named inputs/buttons."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "method": a.get("method"), "fields": {}, "buttons": []})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value", "")
        elif tag == "button" and self.forms and a.get("name"):
            self.forms[-1]["buttons"].append((a["name"], a.get("value", "")))


def form_with_action(page: str, action: str) -> dict:
    parser = Forms()
    parser.feed(page)
    for form in parser.forms:
        if form["action"] == action and (form["method"] or "").lower() == "post":
            return form
    raise SystemExit(f"no POST form with action {action} on the page")


def start(argv, env, banner_prefix: str):
    """Starts a server process and returns it with the URL of its banner line."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    if not line.startswith(banner_prefix):
        proc.kill()
        raise SystemExit(f"{argv[0]} did not start (first line: {line!r})")
    return proc, line.split()[-1]


def play_browser(authorize_url: str, core: str, login: str, password: str) -> None:
    """alice's browser: sign in, consent, follow the redirect to the callback."""
    with httpx.Client(follow_redirects=False, timeout=30) as browser:
        r = browser.get(authorize_url)
        say(f"browser GET authorize -> {r.status_code} {mask(r.headers.get('location', ''))}")
        assert r.status_code == 303, r.status_code
        r = browser.get(urllib.parse.urljoin(core, r.headers["location"]))
        login_form = form_with_action(r.text, "/user/login")
        fields = dict(login_form["fields"], user_name=login, password=password)
        r = browser.post(f"{core}/user/login", data=fields)
        say(f"browser POST /user/login -> {r.status_code} {mask(r.headers.get('location', ''))}")
        assert r.status_code == 303, r.status_code
        r = browser.get(urllib.parse.urljoin(core, r.headers["location"]))
        say(f"browser GET authorize (signed in) -> {r.status_code} consent page")
        assert r.status_code == 200, r.status_code
        grant = form_with_action(r.text, "/login/oauth/grant")
        assert ("granted", "true") in grant["buttons"], grant["buttons"]
        r = browser.post(f"{core}/login/oauth/grant", data=dict(grant["fields"], granted="true"))
        callback = r.headers.get("location", "")
        say(f"browser POST /login/oauth/grant -> {r.status_code} {mask(callback)}")
        assert r.status_code == 303, r.status_code
        r = browser.get(callback)
        title = r.text.split("<title>")[-1].split("</title>")[0] if "<title>" in r.text else r.text[:80]
        say(f"browser GET adapter callback -> {r.status_code} {title!r}")


def run_client(mcp_url: str, elicit: bool, core: str, login: str, password: str) -> bool:
    argv = [sys.executable, str(HERE / "consent_client.py"), mcp_url, "--owner", login, "--repo", "lab"]
    if elicit:
        argv.append("--elicit")
    say(f"client: consent_client.py {mcp_url}{' --elicit' if elicit else ''}")
    client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ok = False
    try:
        for line in client.stdout:
            tag, _, rest = line.strip().partition(" ")
            if tag == "AUTHORIZE_URL":
                say(f"client printed AUTHORIZE_URL {mask(rest)}")
                play_browser(rest, core, login, password)
                if not elicit:
                    client.stdin.write("\n")
                    client.stdin.flush()
            elif tag == "RESULT":
                # An error's message may quote the authorize URL: masked too.
                say(f"client RESULT {mask(rest)}")
                ok = '"full_name": "alice/lab"' in rest
            else:
                say(f"client: {mask(line.rstrip())}")
        rc = client.wait(timeout=60)
    finally:
        # A failed browser step must not leave the client waiting on stdin.
        if client.poll() is None:
            client.kill()
            client.wait()
    say(f"client exit status {rc}")
    return ok and rc == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refcore", required=True, help="path to the refcore binary")
    parser.add_argument("--awg-mcp", required=True, help="path to the awg-mcp binary")
    parser.add_argument("--port", type=int, default=8848, help="fixed port for awg-mcp")
    args = parser.parse_args()

    admin_password = secrets.token_hex(16)
    alice_password = secrets.token_hex(16)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            env = dict(
                os.environ,
                CORE_LISTEN="127.0.0.1:0",
                CORE_DATABASE_URL=f"sqlite://{tmp}/core.db",
                CORE_SECRET_KEY=secrets.token_hex(32),
                CORE_ADMIN_USER="root",
                CORE_ADMIN_PASSWORD=admin_password,
            )
            core_proc, core = start([args.refcore], env, "core listening on ")
            procs.append(core_proc)
            say(f"refcore listening on {core} (SQLite in a temp dir)")

            api = httpx.Client(base_url=f"{core}/api/v1", timeout=30)
            r = api.post("/users/root/tokens", auth=("root", admin_password),
                         json={"name": "demo-admin", "scopes": ["write:admin", "write:user"]})
            r.raise_for_status()
            api.headers["Authorization"] = f"token {r.json()['sha1']}"
            say(f"admin token minted: {r.status_code}")
            r = api.post("/admin/users", json={"login": "alice", "email": "alice@example.test",
                                               "password": alice_password, "type": "individual"})
            say(f"POST /admin/users alice -> {r.status_code}")
            r.raise_for_status()
            r = api.post("/admin/users/alice/repos", json={"name": "lab", "private": True})
            say(f"POST /admin/users/alice/repos lab (private) -> {r.status_code}")
            r.raise_for_status()
            public = f"http://127.0.0.1:{args.port}"
            redirect = f"{public}/mcp/oauth/callback"
            r = api.post("/user/applications/oauth2",
                         json={"name": "awg-mcp demo", "redirect_uris": [redirect], "confidential_client": False})
            say(f"POST /user/applications/oauth2 redirect_uris=[{redirect}] -> {r.status_code}")
            r.raise_for_status()
            client_id = r.json()["client_id"]

            adapter_env = {k: v for k, v in os.environ.items() if not k.startswith("AWG_")}
            adapter_proc, mcp_url = start(
                [args.awg_mcp, "--transport", "http", "--listen", f"127.0.0.1:{args.port}",
                 "--core-url", core, "--oauth-client-id", client_id, "--public-url", public],
                adapter_env, "awg-mcp listening on ")
            procs.append(adapter_proc)
            say(f"awg-mcp listening on {mcp_url} (consent mode)")

            results = {}
            for elicit in (False, True):
                path = "url-elicitation" if elicit else "auth_required+retry"
                say(f"--- path: {path} ---")
                results[path] = run_client(mcp_url, elicit, core, "alice", alice_password)
            for path, ok in results.items():
                say(f"{path}: {'OK' if ok else 'FAILED'}")
            return 0 if all(results.values()) else 1
        finally:
            for proc in reversed(procs):
                proc.terminate()
                proc.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())

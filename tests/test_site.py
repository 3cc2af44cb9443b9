"""The results site (report/site.py, requirements-site.txt) as a person meets it: built once from the committed
sittings, served on 127.0.0.1 and driven in headless Chromium (Debian's `chromium`, through its DevTools protocol):
its pages load without a console error and fetch nothing from another host, every internal link and image resolves,
and the answer explorer, its choices set as a person sets them, ranks three cases as tools/answer_table.py does and
says "not measured" where no sitting ran the case. With SITE_SCREENSHOTS=FOLDER it writes the index's and the
explorer's screenshots there (docs/img holds the committed ones). Skipped where mkdocs-material or chromium is absent:
.ci/run installs both (chromium as root), pytest installs nothing."""
import base64
import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.parse
from html.parser import HTMLParser

import pytest

import answer_table
from sweep import variants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = shutil.which("chromium")
BROWSER_SECONDS = 60  # a page loads in well under a second; the browser starts in about 2 s
SCREENSHOTS = os.environ.get("SITE_SCREENSHOTS")
LANGUAGE = {variants.GYMNAX: "JAX", variants.GYMNASIUM: "NumPy", variants.TORCH_ENV: "torch"}
# three cases a person might have, each with the README's column that measured it
CASES = (({"env_language": "JAX", "algorithm": "PPO", "size": "small", "num_envs": "32", "hardware": "CPU"},
          "small model, CPU"),
         ({"env_language": "NumPy", "algorithm": "PPO", "size": "small", "num_envs": "8", "hardware": "CPU"},
          "8 envs, CPU"),
         ({"env_language": "any", "algorithm": "PPO", "size": "large", "num_envs": "32", "hardware": "GPU"},
          "large model, GPU"))
SCREENSHOT_CASE = {"env_language": "any", "algorithm": "PPO", "size": "small", "num_envs": "8", "hardware": "CPU"}

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("material") is None,
                       reason="mkdocs-material is not installed: pip install -r requirements-site.txt -c "
                              "requirements.txt (.ci/run installs it)"),
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on the PATH: apt-get install chromium, Debian's (.ci/run "
                                                "installs it as root)"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built once (report/site.py, in-process) and served on 127.0.0.1 from a thread: its folder and URL."""
    from report.site import build
    out = str(tmp_path_factory.mktemp("site") / "site")
    build(ROOT, out)
    handler = functools.partial(Quiet, directory=out)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    """python -m http.server's handler, without a line per request."""

    def log_message(self, *args):
        pass


class Page:
    """One tab of headless Chromium, driven through the DevTools protocol (websockets is a pin of requirements.txt):
    commands, and the events they caused (console messages, exceptions, requests, failed loads)."""

    def __init__(self, socket, session):
        self.socket, self.session, self.count, self.events = socket, session, 0, []

    def send(self, method, session=True, **params):
        self.count += 1
        message = {"id": self.count, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv(timeout=BROWSER_SECONDS))
            if reply.get("id") == self.count:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self.events.append(reply)

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def until(self, expression):
        """Waits until expression is true in the page (polled)."""
        deadline = time.monotonic() + BROWSER_SECONDS
        while not self.evaluate(expression):
            assert time.monotonic() < deadline, f"the page never made {expression} true"
            time.sleep(0.05)

    def visit(self, url, ready="document.readyState === 'complete'"):
        """Loads url, waits until ready, and returns the events of the load."""
        self.events = []
        self.send("Page.navigate", url=url)
        self.until(ready)
        return self.events


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A tab of headless Chromium at 1280×900, its console, log, network and page events on. Always ended."""
    from websockets.sync.client import connect
    profile = tmp_path_factory.mktemp("chromium")
    browser = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        address = None
        deadline = time.monotonic() + BROWSER_SECONDS
        while address is None and time.monotonic() < deadline:
            line = browser.stderr.readline()
            address = re.search(r"DevTools listening on (ws://\S+)", line)
            assert line or browser.poll() is None, f"chromium exited {browser.returncode} before listening"
        assert address, f"chromium did not listen in {BROWSER_SECONDS} s"
        with connect(address[1], max_size=None) as socket:
            tab = Page(socket, None)
            target = tab.send("Target.createTarget", session=False, url="about:blank")["targetId"]
            tab.session = tab.send("Target.attachToTarget", session=False, targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                tab.send(f"{domain}.enable")
            tab.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
            yield tab
    finally:
        os.killpg(browser.pid, signal.SIGKILL)  # the browser and its helper processes, a session of their own
        browser.wait()


def problems(events, base):
    """What a person would see go wrong in a load: console errors, uncaught exceptions, failed or refused requests,
    and any request to a host other than the site's."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails'].get('exception', {}).get('description')}")
        elif method == "Runtime.consoleAPICalled" and params["type"] == "error":
            found.append(f"console.error: {[arg.get('value') for arg in params['args']]}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            found.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed":
            found.append(f"failed to load: {params['errorText']}")
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            found.append(f"{params['response']['status']}: {params['response']['url']}")
        elif method == "Network.requestWillBeSent" and not params["request"]["url"].startswith((base, "data:")):
            found.append(f"a request to another host: {params['request']['url']}")
    return found


def broken_images(page):
    return page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")


def test_the_pages_load_without_a_console_error_a_broken_image_or_a_request_to_another_host(site, page):
    out, base = site
    for path in ("index.html", "docs/results.html", "results/cpu-2core-exp7/REPORT.html",
                 "results/cpu-2core-exp10-repeats/REPORT.html"):
        events = page.visit(f"{base}/{path}")
        assert problems(events, base) == [], path
        assert broken_images(page) == [], path
    events = page.visit(f"{base}/explorer.html", "!!document.querySelector('#explorer-result')")
    assert problems(events, base) == []
    if SCREENSHOTS:
        page.visit(f"{base}/index.html")
        write_screenshot(page, os.path.join(SCREENSHOTS, "site-index.png"))


class Links(HTMLParser):
    """A page's ids, and the URLs it links or loads (a, link, img, script, source)."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.loads = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        elif tag in ("link", "img", "script", "source", "iframe") and (attrs.get("href") or attrs.get("src")):
            self.loads.append(attrs.get("src") or attrs.get("href"))


def parsed(path):
    links = Links()
    with open(path) as file:
        links.feed(file.read())
    return links


def test_every_internal_link_and_image_of_every_page_resolves_and_nothing_loads_from_another_host(site):
    out, _ = site
    pages = {os.path.relpath(os.path.join(top, name), out): None for top, _, names in os.walk(out)
             for name in names if name.endswith(".html")}
    pages = {path: parsed(os.path.join(out, path)) for path in pages}
    broken, external = [], []
    for path, links in pages.items():
        external += [f"{path}: {url}" for url in links.loads if urllib.parse.urlsplit(url).netloc]
        for url in links.links + links.loads:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme or parts.netloc:
                continue  # a link a reader may follow out; nothing the page loads
            relative = urllib.parse.unquote(parts.path)  # from the page's folder, or from the site's root ("/...")
            target = os.path.normpath(os.path.join(os.path.dirname(path), relative) if not relative.startswith("/")
                                      else relative.lstrip("/")) if relative else path
            target = os.path.join(target, "index.html") if os.path.isdir(os.path.join(out, target)) else target
            if not os.path.isfile(os.path.join(out, target)):
                broken.append(f"{path}: {url}")
            elif parts.fragment and target in pages and urllib.parse.unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{path}: {url} (no such anchor)")
    assert len(pages) > 100 and broken == [] and external == [], (broken[:20], external[:20])


def choose(page, base, choice):
    """Opens the explorer and sets its five choices one by one as a person does (a select's value, then its change
    event); the ranking tables shown then, as {sitting: [(design, ratio text)]}, or the not-measured message."""
    page.visit(f"{base}/explorer.html", "!!document.querySelector('#explorer-result')")
    for key, value in choice.items():
        page.evaluate(f"""(() => {{ const select = document.querySelector('select[name="{key}"]');
            select.value = {json.dumps(value)}; select.dispatchEvent(new Event('change')); }})()""")
        page.until(f"document.querySelector('select[name=\"{key}\"]').value === {json.dumps(value)}")
    page.until(f"document.querySelector('#explorer-result').dataset.case.startsWith({json.dumps(choice['algorithm'])}"
               f" + ', ' + {json.dumps(choice['size'])} + ' model, ' + {json.dumps(choice['num_envs'])})")
    return page.evaluate("""(() => {
        const rows = (table) => [...table.querySelectorAll('tbody tr')]
            .map((row) => [row.dataset.design, row.querySelector('.ratio').textContent]);
        const tables = [...document.querySelectorAll('#explorer-result table')];
        return {tables: Object.fromEntries(tables.map((table) => [table.dataset.sitting, rows(table)])),
                text: document.querySelector('#explorer-result').textContent};
    })()""")


def expected_ranking(column, language):
    """answer_table's cells of the README column, for the designs that step an env of the language: {design: text}."""
    cells, _ = answer_table.cells_of(os.path.join(ROOT, "results"), column)
    design = {row.name: row for row in answer_table.DESIGNS}
    return {name: text for name, text in cells.items()
            if language == "any" or LANGUAGE[answer_table.variant_of(design[name], column).backend] == language}


def ratio(text):
    return float(text.rstrip("×†="))


@pytest.mark.parametrize("choice,title", CASES, ids=[title for _, title in CASES])
def test_the_explorer_ranks_a_case_as_answer_table_computes_it(site, page, choice, title):
    _, base = site
    column = next(column for column in answer_table.COLUMNS if column.title == title)
    shown = choose(page, base, choice)["tables"][column.sweep]
    assert dict(shown) == expected_ranking(column, choice["env_language"])
    assert [ratio(text) for _, text in shown] == sorted(ratio(text) for _, text in shown)


def test_the_explorer_says_not_measured_where_no_sitting_ran_the_case(site, page):
    _, base = site
    shown = choose(page, base, {"env_language": "NumPy", "algorithm": "PPO", "size": "large", "num_envs": "32",
                                "hardware": "GPU"})
    assert shown["tables"] == {} and shown["text"].startswith("Not measured: no committed sitting ran PPO, large")
    if SCREENSHOTS:
        choose(page, base, SCREENSHOT_CASE)
        write_screenshot(page, os.path.join(SCREENSHOTS, "site-explorer.png"))


def write_screenshot(page, path):
    """The page's viewport as a PNG."""
    data = page.send("Page.captureScreenshot", format="png")["data"]
    with open(path, "wb") as file:
        file.write(base64.b64decode(data))

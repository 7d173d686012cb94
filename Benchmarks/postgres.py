#!/usr/bin/env python3
"""lctrace on PostgreSQL beside SQLite, on one generated corpus, in one run.

    Benchmarks/postgres.py [--events-scale N] [--runs N] [--keep DIR] [--url URL]

Starts a throwaway PostgreSQL cluster (scripts/postgres-test-server) unless --url names a
server, generates a corpus with lctrace-gen (never committed), and times, in alternating
rounds: `lctrace ingest` into SQLite; into PostgreSQL with one ingester; with four ingesters
at once on disjoint quarters of the files; with four at once on every file (each file loaded by
all four: de-duplication under contention). Each PostgreSQL run starts on an empty schema.
Prints medians: wall time, events/s, peak RSS of one ingester, database size, and the ratio to
SQLite's time. A measurement, never a test.
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, tempfile, time, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def timed_many(commands):
    """Runs the commands at once under /usr/bin/time; returns (wall seconds, max peak RSS MB, statuses)."""
    start = time.perf_counter()
    procs = []
    for cmd in commands:
        rss = tempfile.mktemp()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append((p, rss))
    statuses, peak = [], 0.0
    for p, rss in procs:
        _, err = p.communicate()
        statuses.append(p.returncode)
        if p.returncode not in (0, 65):
            sys.stderr.write(err.decode(errors="replace")[-2000:])
        with open(rss) as f:
            peak = max(peak, int(f.read().strip().splitlines()[-1]) / 1024)
        os.unlink(rss)
    return time.perf_counter() - start, peak, statuses


def psql(url, sql):
    return subprocess.run(["psql", "-qAt", url, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=120, help="sessions in the corpus (about 6,000 events each)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="work folder to keep (the corpus is reused)")
    ap.add_argument("--url", help="a PostgreSQL server to use instead of a throwaway cluster")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="lctrace-pgbench-")
    os.makedirs(work, exist_ok=True)
    sh(["swift", "build", "-c", "release", "--product", "lctrace"], cwd=ROOT, stdout=subprocess.DEVNULL)
    sh(["swift", "build", "-c", "release", "--product", "lctrace-gen"], cwd=ROOT, stdout=subprocess.DEVNULL)
    lctrace = os.path.join(ROOT, ".build/release/lctrace")
    gen = os.path.join(ROOT, ".build/release/lctrace-gen")
    corpus = os.path.join(work, f"corpus-{a.sessions}")
    if not os.path.isdir(corpus):
        sh([gen, "--seed", "1760", "--sessions", str(a.sessions), "--per-file", "1", "--scenarios", "480",
            "--lines-per-member", "400", corpus], stdout=subprocess.DEVNULL)
    files = sorted(glob.glob(os.path.join(corpus, "*.gz")))
    events = int(subprocess.run("gzip -dc " + " ".join(files) + " | wc -l", shell=True, capture_output=True, text=True).stdout)

    cluster = None
    url = a.url
    if not url:
        cluster = os.path.join(work, "pg")
        shutil.rmtree(cluster, ignore_errors=True)
        url = subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "start", cluster],
                             check=True, capture_output=True, text=True).stdout.strip()
    try:
        def fresh():
            schema = "bench_" + uuid.uuid4().hex[:8]
            psql(url, f"CREATE SCHEMA {schema}")
            return schema, url + ("&" if "?" in url else "?") + f"options=-csearch_path%3D{schema}"

        quarters = [files[k::4] for k in range(4)]
        results = {name: [] for name in ["sqlite", "pg1", "pg4-disjoint", "pg4-overlapping"]}
        sizes = {}
        for _ in range(a.runs):
            db = os.path.join(work, "bench.db")
            for f in glob.glob(db + "*"):
                os.unlink(f)
            results["sqlite"].append(timed_many([[lctrace, "ingest", "-q", "--db", db] + files]))
            sizes["sqlite"] = sum(os.path.getsize(p) for p in glob.glob(db + "*"))
            for name, sets in [("pg1", [files]), ("pg4-disjoint", quarters), ("pg4-overlapping", [files] * 4)]:
                schema, target = fresh()
                results[name].append(timed_many([[lctrace, "ingest", "-q", "--db", target] + s for s in sets]))
                stored = int(psql(url, f"SELECT count(*) FROM {schema}.events"))
                if stored != events:
                    sys.exit(f"{name}: {stored} events stored, {events} in the corpus")
                sizes[name] = int(psql(url, f"SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                                            f"ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' AND c.relkind IN ('r', 't', 'm')"))
                psql(url, f"DROP SCHEMA {schema} CASCADE")
        base = statistics.median(r[0] for r in results["sqlite"])
        labels = {"sqlite": "lctrace ingest → SQLite (1 process)",
                  "pg1": "lctrace ingest → PostgreSQL, 1 ingester",
                  "pg4-disjoint": "4 ingesters at once, a quarter of the files each",
                  "pg4-overlapping": "4 ingesters at once, every file each (de-duplication)"}
        print(f"\nCorpus: {events:,} events in {len(files)} files; medians of {a.runs} runs; 2 cores shared by the server and the ingesters\n")
        print("| run | wall s | events/s | peak RSS MB (one ingester) | bytes/event in DB | time ÷ SQLite |")
        print("|---|---|---|---|---|---|")
        for name, rows in results.items():
            secs = statistics.median(r[0] for r in rows)
            rss = max(r[1] for r in rows)
            print(f"| {labels[name]} | {secs:.2f} | {events / secs / 1000:,.0f} k | {rss:.0f} | {sizes[name] / events:.0f} | {secs / base:.2f} |")
    finally:
        if cluster:
            subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "stop", cluster])
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


main()

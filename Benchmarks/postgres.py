#!/usr/bin/env python3
"""lctrace on PostgreSQL beside SQLite and beside COPY's own floor, on one generated corpus, in one run.

    Benchmarks/postgres.py [--sessions N] [--runs N] [--keep DIR] [--url URL]
                           [--binary LABEL=PATH ...] [--only RUN,RUN] [--round-trip-us N]
                           [--analyze-sessions N]

Starts a throwaway PostgreSQL cluster (scripts/postgres-test-server) unless --url names a
server, generates a corpus with lctrace-gen (never committed), and times, in alternating
rounds: `lctrace ingest` into SQLite; the `\\copy` floor (the corpus's event rows, exported
once from an lctrace ingest, `\\copy`'d by psql into a fresh table with the columns and the
primary key of `events` and nothing else, a row an event, as schema 6 stored them: one psql on all the rows, and four at once on
quarters); into PostgreSQL with one ingester; with four ingesters at once on disjoint quarters
of the files; with four at once on every file (each file loaded by all four: de-duplication
under contention). Each PostgreSQL run starts on an empty schema. The run `analyze` times
`lctrace analyze --all` (every session's model and findings rebuilt, as a change of settings
asks) on a second corpus of many short sessions (--analyze-sessions, about 500 events each),
loaded once with --no-analyze into SQLite and into a schema per binary. With several `--binary`,
each binary's PostgreSQL runs take turns in every round (SQLite and the floor run with the
first), so the binaries are compared under the same load of a shared machine.

Prints medians: wall time, events/s, the client's CPU (user + system of the ingesters) and the
server's (every process of the throwaway cluster, ended backends included; not measured with
--url), peak RSS of one ingester, database size, the ratios to SQLite's time and to the floor;
then the table of the README's PostgreSQL section. A measurement, never a test.

--round-trip-us N (Linux) makes the server seem N microseconds away, as across a network: a
client (lctrace and the floor's psql) reads no answer sooner than N us after it last sent on that
connection (Benchmarks/round-trip-delay.c, loaded with LD_PRELOAD). SQLite's run is not delayed.
"""
import argparse, glob, os, shutil, statistics, subprocess, sys, tempfile, time, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


class ServerClock:
    """CPU seconds used by a cluster's processes: the postmaster, its live children, and the
    children it reaped (backends of ended connections count in its cutime/cstime)."""

    def __init__(self, cluster):
        self.pid = None
        if cluster:
            with open(os.path.join(cluster, "data", "postmaster.pid")) as f:
                self.pid = int(f.readline())

    @staticmethod
    def _stat(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[1]), [int(x) for x in fields[11:15]]  # ppid; utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            return None, None

    def _children(self):
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != self.pid:
                ppid, t = self._stat(int(entry))
                if ppid == self.pid and t:
                    out.append(t)
        return out

    def seconds(self, settle=False):
        if self.pid is None:
            return None
        def total():
            return sum(self._stat(self.pid)[1] or [0]) + sum(t[0] + t[1] for t in self._children())
        if not settle:
            return total() / TICKS
        # An ended backend counts once the postmaster has reaped it (its cutime); one that is
        # exiting is in neither: wait for the children of the idle server and a steady total.
        last = None
        for _ in range(40):
            time.sleep(0.1)
            now = total()
            if now == last and len(self._children()) <= self.idle_children:
                break
            last = now
        return now / TICKS

    def note_idle(self):
        self.idle_children = len(self._children()) if self.pid else 0


def timed_many(commands, clock, env=None):
    """Runs the commands at once under /usr/bin/time; returns (wall s, max peak RSS MB, statuses,
    client CPU s, server CPU s). `env`: variables added to the commands' environment."""
    server0 = clock.seconds()
    start = time.perf_counter()
    procs = []
    for cmd in commands:
        out = tempfile.mktemp()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M %U %S", "-o", out] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, **(env or {})})
        procs.append((p, out))
    statuses, peak, cpu = [], 0.0, 0.0
    for p, out in procs:
        _, err = p.communicate()
        statuses.append(p.returncode)
        if p.returncode not in (0, 65):
            sys.stderr.write(err.decode(errors="replace")[-2000:])
        with open(out) as f:
            rss, user, system = f.read().strip().splitlines()[-1].split()
        peak = max(peak, int(rss) / 1024)
        cpu += float(user) + float(system)
        os.unlink(out)
    wall = time.perf_counter() - start
    server1 = clock.seconds(settle=True)
    return wall, peak, statuses, cpu, (server1 - server0) if server0 is not None else None


def psql(url, sql):
    return subprocess.run(["psql", "-qAt", url, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def schema_size(url, schema):
    return int(psql(url, f"SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                         f"ON n.oid = c.relnamespace WHERE n.nspname = '{schema}' AND c.relkind IN ('r', 't', 'm')"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=120, help="sessions in the corpus (about 6,000 events each)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="work folder to keep (the corpus is reused)")
    ap.add_argument("--url", help="a PostgreSQL server to use instead of a throwaway cluster")
    ap.add_argument("--binary", action="append", default=[], metavar="LABEL=PATH",
                    help="an lctrace binary to measure (repeat to compare; default: this checkout's release build)")
    ap.add_argument("--only", help="runs to make, of sqlite,floor,floor4,pg1,pg4-disjoint,pg4-overlapping,analyze")
    ap.add_argument("--analyze-sessions", type=int, default=3000, help="sessions (about 500 events each) of the corpus analyze --all is timed on")
    ap.add_argument("--round-trip-us", type=int, default=0, metavar="N",
                    help="no answer of the server sooner than N microseconds after the client sent, as across a network (Linux)")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="lctrace-pgbench-")
    os.makedirs(work, exist_ok=True)
    # The PostgreSQL clients' environment: the round-trip delay, when asked for.
    remote = {}
    if a.round_trip_us > 0:
        shim = os.path.join(work, "round-trip-delay.so")
        sh(["cc", "-O2", "-shared", "-fPIC", "-o", shim, os.path.join(ROOT, "Benchmarks/round-trip-delay.c"), "-ldl"])
        remote = {"LD_PRELOAD": shim, "LCTRACE_BENCH_ROUND_TRIP_US": str(a.round_trip_us)}
    sh(["swift", "build", "-c", "release", "--product", "lctrace-gen"], cwd=ROOT, stdout=subprocess.DEVNULL)
    if a.binary:
        binaries = [tuple(b.split("=", 1)) for b in a.binary]
    else:
        sh(["swift", "build", "-c", "release", "--product", "lctrace"], cwd=ROOT, stdout=subprocess.DEVNULL)
        binaries = [("lctrace", os.path.join(ROOT, ".build/release/lctrace"))]
    gen = os.path.join(ROOT, ".build/release/lctrace-gen")
    corpus = os.path.join(work, f"corpus-{a.sessions}")
    if not os.path.isdir(corpus):
        sh([gen, "--seed", "1760", "--sessions", str(a.sessions), "--per-file", "1", "--scenarios", "480",
            "--lines-per-member", "400", corpus], stdout=subprocess.DEVNULL)
    files = sorted(glob.glob(os.path.join(corpus, "*.gz")))
    events = int(subprocess.run("gzip -dc " + " ".join(files) + " | wc -l", shell=True, capture_output=True, text=True).stdout)
    runs = ["sqlite", "floor", "floor4", "pg1", "pg4-disjoint", "pg4-overlapping", "analyze"]
    if a.only:
        runs = [r for r in runs if r in a.only.split(",")]

    cluster = None
    url = a.url
    if not url:
        cluster = os.path.join(work, "pg")
        shutil.rmtree(cluster, ignore_errors=True)
        url = subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "start", cluster],
                             check=True, capture_output=True, text=True).stdout.strip()
    clock = ServerClock(cluster)
    clock.note_idle()
    template = None
    analysed = {}
    try:
        def fresh():
            schema = "bench_" + uuid.uuid4().hex[:8]
            psql(url, f"CREATE SCHEMA {schema}")
            return schema, url + ("&" if "?" in url else "?") + f"options=-csearch_path%3D{schema}"

        # The floor's rows: the events lctrace stores, exported once from an ingest of the
        # first binary (all rows, and four quarters by session), with the primary key's text.
        rows_dir = os.path.join(work, "floor-rows")
        floor_files = [os.path.join(rows_dir, "all.copy")] + [os.path.join(rows_dir, f"q{k}.copy") for k in range(4)]
        primary_key = None
        if "floor" in runs or "floor4" in runs:
            os.makedirs(rows_dir, exist_ok=True)
            schema, target = fresh()
            sh([binaries[0][1], "ingest", "-q", "--no-analyze", "--db", target] + files, stdout=subprocess.DEVNULL)
            events_table = f"{schema}.events"
            columns = psql(url, f"SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
                                f"WHERE attrelid = '{events_table}'::regclass AND attnum > 0 AND NOT attisdropped")
            primary_key = psql(url, f"SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '{events_table}'::regclass AND contype = 'p'")
            # Schema 7 stores blocks of events behind the view `events`: the floor stays a row an
            # event, with the table and key `events` had up to schema 6.
            is_view = psql(url, f"SELECT relkind FROM pg_class WHERE oid = '{events_table}'::regclass") == "v"
            if is_view:
                primary_key = "PRIMARY KEY (session, seq)"
            key = primary_key[primary_key.index("(") + 1:primary_key.index(")")]
            psql(url, f"\\copy (SELECT {columns} FROM {events_table} ORDER BY {key}) TO '{floor_files[0]}'")
            for k in range(4):
                psql(url, f"\\copy (SELECT {columns} FROM {events_table} WHERE session % 4 = {k} ORDER BY {key}) TO '{floor_files[1 + k]}'")
            # The floor's table: the same columns (types, NOT NULL), the same primary key, nothing else.
            # (The schema stays, as the template, until the end.)
            floor_ddl = f"CREATE TABLE floor_events (LIKE {events_table}); ALTER TABLE floor_events ADD {primary_key}"
            if is_view:
                floor_ddl += "; " + "; ".join(f"ALTER TABLE floor_events ALTER {c} SET NOT NULL" for c in ("t", "seq", "session", "ev", "flags"))
            template = schema

        def floor(parts):
            schema, target = fresh()
            psql(target, floor_ddl)
            r = timed_many([["psql", "-q", target, "-c", f"\\copy floor_events FROM '{p}'"] for p in parts], clock, remote)
            stored = int(psql(url, f"SELECT count(*) FROM {schema}.floor_events"))
            if stored != events:
                sys.exit(f"floor: {stored} rows stored, {events} in the corpus")
            size = schema_size(url, schema)
            psql(url, f"DROP SCHEMA {schema} CASCADE")
            return r, size

        # The analysis's corpus, loaded once without analysis: SQLite by the first binary, a
        # schema by each binary.
        if "analyze" in runs:
            analysis_corpus = os.path.join(work, f"analyze-corpus-{a.analyze_sessions}")
            if not os.path.isdir(analysis_corpus):
                sh([gen, "--seed", "3", "--sessions", str(a.analyze_sessions), "--per-file", "100", "--scenarios", "2",
                    analysis_corpus], stdout=subprocess.DEVNULL)
            analysis_files = sorted(glob.glob(os.path.join(analysis_corpus, "*.gz")))
            analysis_events = int(subprocess.run("gzip -dc " + " ".join(analysis_files) + " | wc -l", shell=True,
                                                 capture_output=True, text=True).stdout)
            analysis_db = os.path.join(work, "analyze.db")
            for f in glob.glob(analysis_db + "*"):
                os.unlink(f)
            sh([binaries[0][1], "ingest", "-q", "--no-analyze", "--db", analysis_db] + analysis_files, stdout=subprocess.DEVNULL)
            for label, binary in binaries:
                analysed[label] = fresh()
                sh([binary, "ingest", "-q", "--no-analyze", "--db", analysed[label][1]] + analysis_files, stdout=subprocess.DEVNULL)

        quarters = [files[k::4] for k in range(4)]
        sets = {"pg1": [files], "pg4-disjoint": quarters, "pg4-overlapping": [files] * 4}
        keys = [r for r in runs if r in ("sqlite", "floor", "floor4")] + [(label, r) for label, _ in binaries for r in runs if r in sets]
        results = {k: [] for k in keys}
        analysis_keys = (["analyze-sqlite"] + [(label, "analyze-pg") for label, _ in binaries]) if "analyze" in runs else []
        results.update({k: [] for k in analysis_keys})
        sizes = {}
        for round_ in range(a.runs):
            # Binaries alternate their order from round to round.
            order = binaries if round_ % 2 == 0 else binaries[::-1]
            if "sqlite" in runs:
                db = os.path.join(work, "bench.db")
                for f in glob.glob(db + "*"):
                    os.unlink(f)
                results["sqlite"].append(timed_many([[binaries[0][1], "ingest", "-q", "--db", db] + files], clock))
                sizes["sqlite"] = sum(os.path.getsize(p) for p in glob.glob(db + "*"))
            for name, parts in [("floor", floor_files[:1]), ("floor4", floor_files[1:])]:
                if name in runs:
                    r, sizes[name] = floor(parts)
                    results[name].append(r)
            for label, binary in order:
                for name in [r for r in runs if r in sets]:
                    schema, target = fresh()
                    results[(label, name)].append(timed_many([[binary, "ingest", "-q", "--db", target] + s for s in sets[name]], clock, remote))
                    stored = int(psql(url, f"SELECT count(*) FROM {schema}.events"))
                    if stored != events:
                        sys.exit(f"{label} {name}: {stored} events stored, {events} in the corpus")
                    sizes[(label, name)] = schema_size(url, schema)
                    psql(url, f"DROP SCHEMA {schema} CASCADE")
            if "analyze" in runs:
                results["analyze-sqlite"].append(timed_many([[binaries[0][1], "analyze", "--all", "--db", analysis_db]], clock))
                for label, binary in order:
                    results[(label, "analyze-pg")].append(timed_many([[binary, "analyze", "--all", "--db", analysed[label][1]]], clock, remote))

        def median(key, i):
            values = [r[i] for r in results[key] if r[i] is not None]
            return statistics.median(values) if values else None

        base = median("sqlite", 0) if "sqlite" in results else None
        floors = {1: median("floor", 0) if "floor" in results else None, 4: median("floor4", 0) if "floor4" in results else None}
        labels = {"sqlite": "lctrace ingest → SQLite (1 process)",
                  "floor": "`\\copy` floor: psql, all rows, one table with the primary key",
                  "floor4": "`\\copy` floor: 4 psql at once, a quarter of the rows each",
                  "pg1": "→ PostgreSQL, 1 ingester",
                  "pg4-disjoint": "→ PostgreSQL, 4 ingesters at once, a quarter of the files each",
                  "pg4-overlapping": "→ PostgreSQL, 4 ingesters at once, every file each (de-duplication)"}
        ingesters = {"floor": 1, "floor4": 4, "pg1": 1, "pg4-disjoint": 4, "pg4-overlapping": 4}

        def fmt(x, spec):
            return "–" if x is None else format(x, spec)

        print(f"\nCorpus: {events:,} events in {len(files)} files; medians of {a.runs} runs; 2 cores shared by the server and the clients")
        if a.round_trip_us:
            print(f"No answer of the server read sooner than {a.round_trip_us} us after the client sent (--round-trip-us), as across a network; SQLite not delayed")
        if primary_key:
            print(f"Floor table: the columns of events and {primary_key}, nothing else")
        print("\n| run | wall s | events/s | client CPU s | server CPU s | peak RSS MB (one client) | bytes/event in DB | time ÷ SQLite | time ÷ floor |")
        print("|---|---|---|---|---|---|---|---|---|")
        for key in keys:
            label, name = (None, key) if isinstance(key, str) else key
            secs = median(key, 0)
            rss = max(r[1] for r in results[key])
            floor_secs = floors.get(ingesters.get(name, 0)) if name.startswith("pg") else None
            title = labels[name] if label is None or len(binaries) == 1 else f"{label} {labels[name]}"
            print(f"| {title} | {secs:.2f} | {events / secs / 1000:,.0f} k | {fmt(median(key, 3), '.2f')} | {fmt(median(key, 4), '.2f')} "
                  f"| {rss:.0f} | {sizes[key] / events:.0f} | {fmt(secs / base if base else None, '.2f')} "
                  f"| {fmt(secs / floor_secs if floor_secs else None, '.2f')} |")

        if analysis_keys:
            sqlite_analysis = median("analyze-sqlite", 0)
            print(f"\n`analyze --all`: {analysis_events:,} events in {a.analyze_sessions:,} sessions; medians of {a.runs} runs")
            print("\n| run | wall s | sessions/s | client CPU s | server CPU s | peak RSS MB | time ÷ SQLite |")
            print("|---|---|---|---|---|---|---|")
            for key in analysis_keys:
                secs = median(key, 0)
                title = "analyze --all, SQLite" if isinstance(key, str) else f"{key[0] + ' ' if len(binaries) > 1 else ''}analyze --all, PostgreSQL"
                print(f"| {title} | {secs:.2f} | {a.analyze_sessions / secs:,.0f} | {fmt(median(key, 3), '.2f')} | {fmt(median(key, 4), '.2f')} "
                      f"| {max(r[1] for r in results[key]):.0f} | {secs / sqlite_analysis:.2f} |")

        # The README's table: one binary (the first), one ingester and four on disjoint quarters.
        label = binaries[0][0]
        if base and (label, "pg1") in results and floors[1]:
            def cell(key, i=0):
                return median(key, i) if key in results else None
            pg = {1: cell((label, "pg1")), 4: cell((label, "pg4-disjoint"))}
            def size(key):
                return sizes[key] / events if key in sizes else None
            def rss(key):
                return max(r[1] for r in results[key]) if key in results else None
            rows = [("lctrace ingest → PostgreSQL, s", pg[1], pg[4], ".2f"),
                    ("`\\copy` floor (psql, same rows, primary key only), s", floors[1], floors[4], ".2f"),
                    ("lctrace ingest → SQLite (one process), s", base, base, ".2f"),
                    ("PostgreSQL ÷ SQLite", pg[1] / base, pg[4] / base if pg[4] else None, ".2f"),
                    ("PostgreSQL ÷ floor", pg[1] / floors[1], pg[4] / floors[4] if pg[4] and floors[4] else None, ".2f"),
                    ("bytes/event, PostgreSQL", size((label, "pg1")), size((label, "pg4-disjoint")), ".0f"),
                    ("bytes/event, floor table", size("floor"), size("floor4"), ".0f"),
                    ("bytes/event, SQLite", size("sqlite"), size("sqlite"), ".0f"),
                    ("peak RSS of an lctrace client, MB", rss((label, "pg1")), rss((label, "pg4-disjoint")), ".0f"),
                    ("client CPU s (all clients)", cell((label, "pg1"), 3), cell((label, "pg4-disjoint"), 3), ".2f"),
                    ("server CPU s", cell((label, "pg1"), 4), cell((label, "pg4-disjoint"), 4), ".2f")]
            print(f"\n| {events:,} events, {len(files)} files | one ingester | four at once (disjoint quarters) |")
            print("|---|---|---|")
            for title, one, four, spec in rows:
                print(f"| {title} | {fmt(one, spec)} | {fmt(four, spec)} |")
    finally:
        if template:
            psql(url, f"DROP SCHEMA {template} CASCADE")
        for schema, _ in analysed.values():
            psql(url, f"DROP SCHEMA {schema} CASCADE")
        if cluster:
            subprocess.run([os.path.join(ROOT, "scripts/postgres-test-server"), "stop", cluster])
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


main()

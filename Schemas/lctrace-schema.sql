-- lctrace database schema, version 2 (PRAGMA user_version = 2). Version 2 adds the finding
-- identities (`findings.identity_key`, `findings.identity`, `identities_v`); a version-1
-- database is migrated in place by `lctrace ingest` or `lctrace analyze` (its findings rebuilt).
--
-- Stored tables keep repeated text (controller ids, class and event names) as integer
-- references into `strings`, which keeps a database near 30 bytes per event. Every table
-- has a readable companion view with a `_v` suffix that resolves those references: ad-hoc
-- queries should start from the views.
--
-- Times: `t` columns are nanoseconds on the session's monotonic clock (format v1 `t`);
-- `*_ms` view columns are milliseconds. `seq` is the per-session event counter.
-- An instance is named by (session, vc, since): `since` is the seq of its `init` (or of its
-- first event when no init was seen), because controller ids (addresses) are reused.

-- Interned text: controller ids, class names, event names, threads, styles, scenes.
CREATE TABLE strings (
    id   INTEGER PRIMARY KEY,                 -- referenced by the columns documented as "→ strings"
    text TEXT NOT NULL UNIQUE                 -- the text itself
);

-- One row per distinct input file content (a copy under another name adds no row).
CREATE TABLE files (
    id           INTEGER PRIMARY KEY,
    path         TEXT NOT NULL,               -- path as given to `lctrace ingest` ('-' for standard input)
    size         INTEGER NOT NULL DEFAULT 0,  -- raw bytes read (compressed size for gzip)
    sha256       TEXT UNIQUE,                 -- SHA-256 of the raw bytes; NULL while loading
    gzip_members INTEGER NOT NULL DEFAULT 0,  -- gzip members read (0 for plain JSON lines)
    lines        INTEGER NOT NULL DEFAULT 0,  -- lines read, blank ones included
    events       INTEGER NOT NULL DEFAULT 0,  -- good event lines (new or already known)
    rejects      INTEGER NOT NULL DEFAULT 0,  -- lines rejected (see `rejects`)
    conflicts    INTEGER NOT NULL DEFAULT 0,  -- lines whose (sid, seq) was already stored with other content
    status       TEXT NOT NULL CHECK (status IN ('loading', 'complete', 'damaged')),
    damage       TEXT,                        -- why the file ended early (status 'damaged')
    loader_pid   INTEGER,                     -- process id of the ingest loading it (status 'loading'), for people: the loader holds byte `id` of the file <database>-loaders locked
    ingested_at  TEXT NOT NULL                -- UTC time the load started ('loading') or finished
);

-- One row per session (one app launch), merged from its repeated session records.
CREATE TABLE sessions (
    id               INTEGER PRIMARY KEY,
    sid              TEXT NOT NULL UNIQUE,    -- session id from the trace
    app              TEXT,                    -- bundle id
    app_version      TEXT,
    build            TEXT,
    os               TEXT,
    os_version       TEXT,
    sdk              TEXT,                    -- SDK the app was built with
    device           TEXT,                    -- model id, e.g. iPhone16,2
    recorder         TEXT,
    wall             TEXT,                    -- RFC 3339 wall-clock time of the session record
    record_seq       INTEGER,                 -- seq of the session record kept (the earliest one)
    record_conflicts INTEGER NOT NULL DEFAULT 0, -- session records that disagreed with the kept one
    end_reason       TEXT,                    -- reason of `sessionEnd`; NULL when the session ended abruptly
    events           INTEGER NOT NULL DEFAULT 0, -- events stored
    first_seq        INTEGER,
    last_seq         INTEGER,
    first_t          INTEGER,                 -- t of the first event (ns)
    last_t           INTEGER,                 -- t of the last event: the session's end for rules (ns)
    lost_events      INTEGER NOT NULL DEFAULT 0, -- seq values missing below last_seq (holes)
    dirty            INTEGER NOT NULL DEFAULT 1  -- 1 while events changed since the model was built
);

-- Every good event line, once per (session, seq).
CREATE TABLE events (
    session INTEGER NOT NULL,                 -- → sessions.id
    seq     INTEGER NOT NULL,                 -- per-session counter
    t       INTEGER NOT NULL,                 -- monotonic ns
    ev      INTEGER NOT NULL,                 -- event name → strings
    vc      INTEGER,                          -- controller id → strings
    cls     INTEGER,                          -- class name as written on this line → strings
    other   INTEGER,                          -- the other controller → strings: parent (containment), host (viewAttached/Detached), presented (present), child (push/pop)
    flags   INTEGER NOT NULL DEFAULT 0,       -- booleans: bit 0 animated, 1 isMovingToParent, 2 isBeingPresented, 3 isMovingFromParent, 4 isBeingDismissed, 5 interactive; bit n+8 = key present; bit 16 = `other` key present
    detail  INTEGER,                          -- style (present), scene (scene events), name (mark), reason (sessionEnd) → strings
    thread  INTEGER,                          -- thread label → strings
    wall    TEXT,                             -- RFC 3339 wall-clock time, when the line had one
    attrs   TEXT,                             -- JSON object of the other keys: bounds, traits and keys format v1 does not define
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;

-- Every input problem: rejected lines, conflicting duplicates, damaged streams.
CREATE TABLE rejects (
    id     INTEGER PRIMARY KEY,
    file   INTEGER NOT NULL,                  -- → files.id
    kind   TEXT NOT NULL CHECK (kind IN ('line', 'conflict', 'damage')),
    line   INTEGER,                           -- 1-based line number in the decompressed stream
    offset INTEGER,                           -- byte offset of the line in the decompressed stream (raw offset for 'damage')
    reason TEXT NOT NULL,                     -- what was wrong, naming the key or value
    text   TEXT                               -- first 200 bytes of the line (a BLOB when they are not UTF-8)
);
CREATE INDEX rejects_by_file ON rejects (file);

-- Model: one row per controller instance (an id reused after deinit starts a new one).
CREATE TABLE instances (
    session     INTEGER NOT NULL,             -- → sessions.id
    vc          INTEGER NOT NULL,             -- controller id → strings
    since       INTEGER NOT NULL,             -- seq of its init, or of its first event without one
    cls         INTEGER,                      -- class → strings
    init_t      INTEGER,                      -- NULL when no init was seen (LC902)
    end_seq     INTEGER,                      -- seq of its deinit, or of the init that reused its id
    end_t       INTEGER,
    end_how     TEXT,                         -- 'deinit', 'reused' (id init'ed again with no deinit seen), NULL: alive at the end
    parent      INTEGER,                      -- last container (addChild) → strings
    presenter   INTEGER,                      -- controller that presented it → strings
    release_seq INTEGER,                      -- seq of the release that was not cancelled (docs/rule-reference.md, LC301)
    release_t   INTEGER,
    release_how TEXT,                         -- 'pop', 'dismiss', 'removeFromParent', 'ancestor', 'chain' (1.1: taken along by a dismissal below it)
    appearances INTEGER NOT NULL DEFAULT 0,   -- appearance cycles started
    final_state TEXT NOT NULL,                -- appearance state at its end: hidden, appearing, visible, disappearing
    PRIMARY KEY (session, vc, since)
) WITHOUT ROWID;

-- Model: one row per appearance cycle (viewWillAppear to the next hidden state).
CREATE TABLE appearances (
    session      INTEGER NOT NULL,            -- → sessions.id
    will_seq     INTEGER NOT NULL,            -- seq of viewWillAppear
    vc           INTEGER NOT NULL,            -- → strings
    since        INTEGER NOT NULL,            -- instance (with session, vc)
    will_t       INTEGER NOT NULL,            -- viewWillAppear
    is_t         INTEGER,                     -- viewIsAppearing
    did_t        INTEGER,                     -- viewDidAppear
    will_disappear_t INTEGER,                 -- viewWillDisappear
    did_disappear_t  INTEGER,                 -- viewDidDisappear
    animated     INTEGER,                     -- 1/0 from viewWillAppear
    interactive  INTEGER NOT NULL DEFAULT 0,  -- 1 when it ran inside an interactive push/pop (excluded from LC401)
    backgrounded INTEGER NOT NULL DEFAULT 0,  -- 1 when the app went to the background during it
    outcome      TEXT NOT NULL,               -- 'completed' (did appear), 'cancelled' (disappear began first), 'interrupted' (deinit or session end first)
    ending       TEXT NOT NULL,               -- 'disappeared', 'disappear-cancelled', 'visible-at-end', 'deinit', 'session-end', 'violation'
    PRIMARY KEY (session, will_seq)
) WITHOUT ROWID;

-- Model: one row per addChild (parent–child edge) with the protocol steps seen.
CREATE TABLE containment (
    session        INTEGER NOT NULL,          -- → sessions.id
    add_seq        INTEGER NOT NULL,          -- seq of addChild
    child          INTEGER NOT NULL,          -- → strings
    child_since    INTEGER NOT NULL,
    parent         INTEGER NOT NULL,          -- → strings
    parent_since   INTEGER,                   -- NULL when the parent was never seen as an instance
    add_t          INTEGER NOT NULL,
    will_move_seq  INTEGER,                   -- willMoveToParent(parent)
    did_move_seq   INTEGER,                   -- didMoveToParent(parent): the container's duty
    will_remove_seq INTEGER,                  -- willMoveToParent(null): the container's duty before removal
    remove_seq     INTEGER,                   -- removeFromParent
    remove_t       INTEGER,
    did_remove_seq INTEGER,                   -- didMoveToParent(null)
    PRIMARY KEY (session, add_seq)
) WITHOUT ROWID;

-- Rule results. `evidence` lists the seqs of the events that prove a finding.
CREATE TABLE findings (
    id         INTEGER PRIMARY KEY,
    rule       TEXT NOT NULL,                 -- LC101 …
    name       TEXT NOT NULL,                 -- orphan-view …
    severity   TEXT NOT NULL CHECK (severity IN ('error', 'warning', 'info')),
    session    INTEGER,                       -- → sessions.id; NULL for file-level findings (LC904)
    vc         INTEGER,                       -- → strings; NULL for session-level findings
    since      INTEGER,                       -- with session and vc, names the instance
    cls        INTEGER,                       -- → strings
    t          INTEGER,                       -- t of the decisive event (ns)
    message    TEXT NOT NULL,
    evidence   TEXT NOT NULL,                 -- JSON array of seqs
    confidence TEXT NOT NULL CHECK (confidence IN ('high', 'low')), -- low in sessions with lost events
    file       INTEGER,                       -- → files.id, for file-level findings
    detail     TEXT,                          -- JSON object of rule-specific values, typed (e.g. {"how":"pop","retained_ms":126144})
    identity_key TEXT NOT NULL,               -- the defect's readable key, rule|app|… (docs/rule-reference.md, "Finding identity"): no session, address, seq, time or path
    identity   TEXT NOT NULL                  -- first 8 bytes of SHA-256 of identity_key, 16 lowercase hex digits
);
CREATE INDEX findings_by_session ON findings (session);
CREATE INDEX findings_by_identity ON findings (identity);

-- Settings the stored model and findings were built with.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Readable views.

-- Events with names resolved, booleans as 0/1 (NULL when the key was absent).
CREATE VIEW events_v AS
SELECT s.sid, e.session AS session_id, e.seq, e.t, e.t / 1000000.0 AS ms,
       n.text AS event, v.text AS vc, c.text AS class,
       CASE WHEN n.text IN ('addChild', 'willMoveToParent', 'didMoveToParent', 'removeFromParent') THEN o.text END AS parent,
       CASE WHEN n.text IN ('viewAttached', 'viewDetached') THEN o.text END AS host,
       CASE WHEN n.text = 'present' THEN o.text END AS presented,
       CASE WHEN n.text IN ('push', 'pop') THEN o.text END AS child,
       CASE WHEN e.flags & 256 THEN e.flags & 1 END AS animated,
       CASE WHEN e.flags & 512 THEN (e.flags >> 1) & 1 END AS is_moving_to_parent,
       CASE WHEN e.flags & 1024 THEN (e.flags >> 2) & 1 END AS is_being_presented,
       CASE WHEN e.flags & 2048 THEN (e.flags >> 3) & 1 END AS is_moving_from_parent,
       CASE WHEN e.flags & 4096 THEN (e.flags >> 4) & 1 END AS is_being_dismissed,
       CASE WHEN e.flags & 8192 THEN (e.flags >> 5) & 1 END AS interactive,
       d.text AS detail, th.text AS thread, e.wall, e.attrs
FROM events e
JOIN sessions s ON s.id = e.session
JOIN strings n ON n.id = e.ev
LEFT JOIN strings v ON v.id = e.vc
LEFT JOIN strings c ON c.id = e.cls
LEFT JOIN strings o ON o.id = e.other
LEFT JOIN strings d ON d.id = e.detail
LEFT JOIN strings th ON th.id = e.thread;

-- Instances with names resolved and lifetimes in milliseconds.
CREATE VIEW instances_v AS
SELECT s.sid, i.session AS session_id, v.text AS vc, i.since, c.text AS class,
       i.init_t, i.end_seq, i.end_t, i.end_how, p.text AS parent, pr.text AS presenter,
       i.release_seq, i.release_t, i.release_how,
       (i.end_t - i.release_t) / 1000000.0 AS release_to_end_ms,
       i.appearances, i.final_state
FROM instances i
JOIN sessions s ON s.id = i.session
JOIN strings v ON v.id = i.vc
LEFT JOIN strings c ON c.id = i.cls
LEFT JOIN strings p ON p.id = i.parent
LEFT JOIN strings pr ON pr.id = i.presenter;

-- Instances with no deinit (nor reuse) by the end of their session.
CREATE VIEW live_instances_v AS
SELECT * FROM instances_v WHERE end_how IS NULL;

-- Appearance cycles with their durations in milliseconds.
CREATE VIEW appearances_v AS
SELECT s.sid, a.session AS session_id, v.text AS vc, a.since, c.text AS class, a.will_seq,
       a.will_t, a.is_t, a.did_t, a.will_disappear_t, a.did_disappear_t,
       (a.is_t - a.will_t) / 1000000.0 AS will_to_is_ms,
       (a.did_t - a.is_t) / 1000000.0 AS is_to_did_ms,
       (a.did_t - a.will_t) / 1000000.0 AS will_to_did_ms,
       (a.did_disappear_t - a.did_t) / 1000000.0 AS visible_ms,
       a.animated, a.interactive, a.backgrounded, a.outcome, a.ending
FROM appearances a
JOIN sessions s ON s.id = a.session
JOIN strings v ON v.id = a.vc
LEFT JOIN instances i ON i.session = a.session AND i.vc = a.vc AND i.since = a.since
LEFT JOIN strings c ON c.id = i.cls;

-- Containment edges with names resolved.
CREATE VIEW containment_v AS
SELECT s.sid, k.session AS session_id, ch.text AS child, k.child_since, cc.text AS child_class,
       pa.text AS parent, k.parent_since, pc.text AS parent_class,
       k.add_seq, k.add_t, k.will_move_seq, k.did_move_seq, k.will_remove_seq, k.remove_seq, k.remove_t, k.did_remove_seq
FROM containment k
JOIN sessions s ON s.id = k.session
JOIN strings ch ON ch.id = k.child
JOIN strings pa ON pa.id = k.parent
LEFT JOIN instances ci ON ci.session = k.session AND ci.vc = k.child AND ci.since = k.child_since
LEFT JOIN strings cc ON cc.id = ci.cls
LEFT JOIN instances pi ON pi.session = k.session AND pi.vc = k.parent AND pi.since = k.parent_since
LEFT JOIN strings pc ON pc.id = pi.cls;

-- Findings with names resolved: the columns of `lctrace report --format json`, with the
-- session's app, build and device.
CREATE VIEW findings_v AS
SELECT f.id, f.rule, f.name, f.severity, s.sid AS session, v.text AS vc, f.since, c.text AS class,
       f.t, f.message, f.evidence, f.confidence, fl.path AS file, f.detail, f.session AS session_id,
       f.identity, f.identity_key, s.app, s.build, s.device
FROM findings f
LEFT JOIN sessions s ON s.id = f.session
LEFT JOIN strings v ON v.id = f.vc
LEFT JOIN strings c ON c.id = f.cls
LEFT JOIN files fl ON fl.id = f.file;

-- One row per finding identity (one defect, however many sessions, devices and builds show it).
CREATE VIEW identities_v AS
SELECT f.identity, f.identity_key, f.rule, f.name, f.severity, min(c.text) AS class,
       count(*) AS occurrences, count(DISTINCT f.session) AS sessions
FROM findings f
LEFT JOIN strings c ON c.id = f.cls
GROUP BY f.identity, f.identity_key, f.rule, f.name, f.severity;

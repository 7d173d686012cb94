-- lctrace database schema, version 6 (PRAGMA user_version = 6). Version 2 added the finding
-- identities (`findings.identity_key`, `findings.identity`, `identities_v`); version 3 packs
-- the rows of `events`, `instances`, `appearances` and `containment` (below); version 4
-- added `file_sessions` (rules 1.2). An older database is migrated in place by `lctrace
-- ingest` or `lctrace analyze` (its events kept, its model and findings rebuilt). Version 5
-- indexes the file ledger (`files_by_path`, `files_by_size`), version 6 the sessions to
-- analyze (`sessions_dirty`); a database of version 4 or 5 is read as it is and gains the
-- indexes at the next `ingest` or `analyze`.
--
-- The documented query surface is the views: `events_v`, `instances_v`, `live_instances_v`,
-- `appearances_v`, `containment_v`, `findings_v`, `identities_v`, and the tables `sessions`,
-- `files`, `rejects`, `findings` and `strings`, whose columns mean what they say. The other
-- stored tables are packed to keep a database under 40 bytes per event: repeated text as
-- integer references into `strings`, controller ids relative to their session's, flags in
-- one integer, times and seqs relative to the row's first, rare values in one column only
-- where present. Their views restore every documented column with its name, type and
-- meaning; ad-hoc queries should start from the views. The `*_rows` views (`event_rows`,
-- `instance_rows`, `appearance_rows`, `containment_rows`) give the packed tables back in
-- the plain layout of version 2, ids unresolved: lctrace's own queries that every storage
-- backend shares read those.
--
-- Times: `t` columns are nanoseconds on the session's monotonic clock (format v1 `t`);
-- `*_ms` view columns are milliseconds. `seq` is the per-session event counter.
-- An instance is named by (session, vc, since): `since` is the seq of its `init` (or of its
-- first event when no init was seen), because controller ids (addresses) are reused.

-- Interned text: controller ids, class names, event names, threads, styles, scenes, and the
-- rarer values of event lines that came more than once (`events.rest`).
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
    damage       TEXT,                        -- why the file is damaged: where it ended early, or the first place bytes were skipped to the next gzip member (status 'damaged')
    loader_pid   INTEGER,                     -- process id of the ingest loading it (status 'loading'), for people: the loader holds byte `id` of the file <database>-loaders locked
    ingested_at  TEXT NOT NULL                -- UTC time the load started ('loading') or finished
);
-- Every new file is looked up by path and size before it loads (a resumed or a grown file)
-- and by size (a copy under another name): without these a campaign's ledger is scanned
-- once per file.
CREATE INDEX files_by_path ON files (path, size);
CREATE INDEX files_by_size ON files (size);

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
    dirty            INTEGER NOT NULL DEFAULT 1, -- 1 while events changed since the model was built
    vc_base          INTEGER NOT NULL DEFAULT 0  -- the session's controller ids are stored in `events` minus this (the highest strings.id when the session began): they are then small numbers
);
-- The sessions whose events changed since their model was built (`dirty`), which every
-- analysis looks for: an ingest into a database of many sessions reads these, not them all.
CREATE INDEX sessions_dirty ON sessions (id) WHERE dirty = 1;

-- Every good event line, once per (session, seq), packed: read it through `events_v` (or
-- `event_rows`). Controller ids are `strings` ids minus the session's `vc_base`.
CREATE TABLE events (
    session INTEGER NOT NULL,                 -- → sessions.id
    seq     INTEGER NOT NULL,                 -- per-session counter
    t       INTEGER NOT NULL,                 -- monotonic ns
    ev      INTEGER NOT NULL,                 -- event name → strings
    vc      INTEGER,                          -- controller id → strings, minus sessions.vc_base
    other   INTEGER,                          -- flags bit 0 clear: the other controller (parent, host, presented, child) → strings, minus sessions.vc_base; bit 0 set: the class (on events that name no other controller) → strings
    flags   INTEGER NOT NULL DEFAULT 0,       -- bit 0: `other` holds the class (with `other` NULL: the other key was present, null); bits 2k+1 and 2k+2: key k present, its value (k = 0 animated, 1 isMovingToParent, 2 isBeingPresented, 3 isMovingFromParent, 4 isBeingDismissed, 5 interactive)
    rest    BLOB,                             -- NULL, or the line's rarer values as a JSON object with the keys present of "class" (→ strings, when `other` holds a controller), "detail" and "thread" (→ strings), "wall" and "attrs" (text; "wall_id" → strings instead of "wall" when the time holds a NUL, which JSON text cannot give back): an integer (→ strings) when that object came before, else the object's text
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;

-- (1.2) The sessions each file holds events of: a file's app, for the identity of its
-- LC904 findings, is that of its sessions when they have one.
CREATE TABLE file_sessions (
    file    INTEGER NOT NULL,                 -- → files.id
    session INTEGER NOT NULL,                 -- → sessions.id
    PRIMARY KEY (file, session)
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

-- Model: one row per controller instance (an id reused after deinit starts a new one), packed:
-- read it through `instances_v` (or `instance_rows`).
CREATE TABLE instances (
    session     INTEGER NOT NULL,             -- → sessions.id
    vc          INTEGER NOT NULL,             -- controller id → strings
    since       INTEGER NOT NULL,             -- seq of its init, or of its first event without one
    cls         INTEGER,                      -- class → strings
    init_t      INTEGER,                      -- NULL when no init was seen (LC902)
    end_dseq    INTEGER,                      -- seq of its deinit, or of the init that reused its id, minus since
    end_dt      INTEGER,                      -- t of that event minus init_t (or minus 0 without one)
    parent      INTEGER,                      -- last container (addChild) → strings
    presenter   INTEGER,                      -- controller that presented it → strings
    release_dseq INTEGER,                     -- seq of the release that was not cancelled (docs/rule-reference.md, LC301), minus since
    release_dt  INTEGER,                      -- its t minus init_t (or minus 0)
    appearances INTEGER NOT NULL DEFAULT 0,   -- appearance cycles started
    codes       INTEGER NOT NULL,             -- final state (bits 0-1: 0 hidden, 1 appearing, 2 visible, 3 disappearing) | end (bits 2-3: 0 alive at the end, 1 deinit, 2 reused) | release (bits 4-6: 0 none, 1 pop, 2 dismiss, 3 removeFromParent, 4 ancestor, 5 chain, 6 root)
    PRIMARY KEY (session, vc, since)
) WITHOUT ROWID;

-- Model: one row per appearance cycle (viewWillAppear to the next hidden state), packed: read
-- it through `appearances_v` (or `appearance_rows`). Each later time is stored minus the
-- latest earlier one of the cycle that is known.
CREATE TABLE appearances (
    session      INTEGER NOT NULL,            -- → sessions.id
    will_seq     INTEGER NOT NULL,            -- seq of viewWillAppear
    vc           INTEGER NOT NULL,            -- → strings
    since_dseq   INTEGER NOT NULL,            -- will_seq minus the instance's since (with session, vc: the instance)
    will_t       INTEGER NOT NULL,            -- viewWillAppear
    is_dt        INTEGER,                     -- viewIsAppearing, minus will_t
    did_dt       INTEGER,                     -- viewDidAppear, minus the later of will_t and is_t
    will_disappear_dt INTEGER,                -- viewWillDisappear, minus the latest of the times before it
    did_disappear_dt  INTEGER,                -- viewDidDisappear, minus the latest of the times before it
    codes        INTEGER NOT NULL,            -- ending (bits 0-2: 0 disappeared, 1 disappear-cancelled, 2 visible-at-end, 3 deinit, 4 session-end, 5 violation, 6 lost) | outcome (bits 3-4: 0 completed, 1 cancelled, 2 interrupted) | animated (bits 5-6: 0 not known, 2 no, 3 yes) | bit 7 interactive | bit 8 backgrounded
    PRIMARY KEY (session, will_seq)
) WITHOUT ROWID;

-- Model: one row per addChild (parent–child edge) with the protocol steps seen, packed: read it
-- through `containment_v` (or `containment_rows`). Seqs are stored minus add_seq.
CREATE TABLE containment (
    session        INTEGER NOT NULL,          -- → sessions.id
    add_seq        INTEGER NOT NULL,          -- seq of addChild
    child          INTEGER NOT NULL,          -- → strings
    child_dseq     INTEGER NOT NULL,          -- the child instance's since, minus add_seq
    parent         INTEGER NOT NULL,          -- → strings
    parent_dseq    INTEGER,                   -- the parent instance's since minus add_seq; NULL when the parent was never seen as an instance
    add_t          INTEGER NOT NULL,
    will_move_dseq  INTEGER,                  -- willMoveToParent(parent)
    did_move_dseq   INTEGER,                  -- didMoveToParent(parent): the container's duty
    will_remove_dseq INTEGER,                 -- willMoveToParent(null): the container's duty before removal
    remove_dseq    INTEGER,                   -- removeFromParent
    remove_dt      INTEGER,                   -- its t minus add_t
    did_remove_dseq INTEGER,                  -- didMoveToParent(null)
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

-- The packed tables in the plain layout of version 2, ids unresolved: what lctrace's queries
-- shared by every storage backend read (a backend that stores that layout as it is reads
-- its tables instead). Not for ad-hoc queries: use the views above.

-- `events` with every column of version 2: vc, other, cls, detail and thread → strings,
-- flags with bit n the value and bit n+8 the presence of boolean n (0 animated … 5
-- interactive) and bit 16 the presence of the other key.
CREATE VIEW event_rows AS
SELECT e.session, e.seq, e.t, e.ev, e.vc + s.vc_base AS vc,
       CASE WHEN e.flags & 1 AND e.other IS NOT NULL THEN e.other ELSE json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.class') END AS cls,
       CASE WHEN e.flags & 1 = 0 THEN e.other + s.vc_base END AS other,
       ((((e.flags >> 2) & 1) << 0) | (((e.flags >> 4) & 1) << 1) | (((e.flags >> 6) & 1) << 2) | (((e.flags >> 8) & 1) << 3) | (((e.flags >> 10) & 1) << 4) | (((e.flags >> 12) & 1) << 5)
        | (((e.flags >> 1) & 1) << 8) | (((e.flags >> 3) & 1) << 9) | (((e.flags >> 5) & 1) << 10) | (((e.flags >> 7) & 1) << 11) | (((e.flags >> 9) & 1) << 12) | (((e.flags >> 11) & 1) << 13)
        | CASE WHEN (e.flags & 1) = (e.other IS NULL) THEN 65536 ELSE 0 END) AS flags,
       json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.detail') AS detail,
       json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.thread') AS thread,
       coalesce(json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.wall'), w.text) AS wall,
       json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.attrs') AS attrs
FROM events e
JOIN sessions s ON s.id = e.session
LEFT JOIN strings r ON r.id = CASE WHEN typeof(e.rest) = 'integer' THEN e.rest END
LEFT JOIN strings w ON w.id = json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.wall_id');

-- `instances` with absolute seqs and times and its codes as text.
CREATE VIEW instance_rows AS
SELECT session, vc, since, cls, init_t, since + end_dseq AS end_seq, coalesce(init_t, 0) + end_dt AS end_t,
       CASE (codes >> 2) & 3 WHEN 1 THEN 'deinit' WHEN 2 THEN 'reused' END AS end_how,
       parent, presenter, since + release_dseq AS release_seq, coalesce(init_t, 0) + release_dt AS release_t,
       CASE (codes >> 4) & 7 WHEN 1 THEN 'pop' WHEN 2 THEN 'dismiss' WHEN 3 THEN 'removeFromParent' WHEN 4 THEN 'ancestor' WHEN 5 THEN 'chain' WHEN 6 THEN 'root' END AS release_how,
       appearances,
       CASE codes & 3 WHEN 0 THEN 'hidden' WHEN 1 THEN 'appearing' WHEN 2 THEN 'visible' ELSE 'disappearing' END AS final_state
FROM instances;

-- `appearances` with absolute times and its codes as text and 0/1.
CREATE VIEW appearance_rows AS
SELECT session, will_seq, vc, will_seq - since_dseq AS since, will_t,
       will_t + is_dt AS is_t,
       will_t + coalesce(is_dt, 0) + did_dt AS did_t,
       will_t + coalesce(is_dt, 0) + coalesce(did_dt, 0) + will_disappear_dt AS will_disappear_t,
       will_t + coalesce(is_dt, 0) + coalesce(did_dt, 0) + coalesce(will_disappear_dt, 0) + did_disappear_dt AS did_disappear_t,
       CASE (codes >> 5) & 3 WHEN 2 THEN 0 WHEN 3 THEN 1 END AS animated,
       (codes >> 7) & 1 AS interactive,
       (codes >> 8) & 1 AS backgrounded,
       CASE (codes >> 3) & 3 WHEN 0 THEN 'completed' WHEN 1 THEN 'cancelled' ELSE 'interrupted' END AS outcome,
       CASE codes & 7 WHEN 0 THEN 'disappeared' WHEN 1 THEN 'disappear-cancelled' WHEN 2 THEN 'visible-at-end'
                      WHEN 3 THEN 'deinit' WHEN 4 THEN 'session-end' WHEN 6 THEN 'lost' ELSE 'violation' END AS ending
FROM appearances;

-- `containment` with absolute seqs and times.
CREATE VIEW containment_rows AS
SELECT session, add_seq, child, add_seq + child_dseq AS child_since, parent, add_seq + parent_dseq AS parent_since, add_t,
       add_seq + will_move_dseq AS will_move_seq, add_seq + did_move_dseq AS did_move_seq,
       add_seq + will_remove_dseq AS will_remove_seq, add_seq + remove_dseq AS remove_seq, add_t + remove_dt AS remove_t,
       add_seq + did_remove_dseq AS did_remove_seq
FROM containment;

-- Readable views.

-- Events with names resolved, booleans as 0/1 (NULL when the key was absent).
CREATE VIEW events_v AS
SELECT s.sid, e.session AS session_id, e.seq, e.t, e.t / 1000000.0 AS ms,
       n.text AS event, v.text AS vc, c.text AS class,
       CASE WHEN n.text IN ('addChild', 'willMoveToParent', 'didMoveToParent', 'removeFromParent') THEN o.text END AS parent,
       CASE WHEN n.text IN ('viewAttached', 'viewDetached') THEN o.text END AS host,
       CASE WHEN n.text = 'present' THEN o.text END AS presented,
       CASE WHEN n.text IN ('push', 'pop') THEN o.text END AS child,
       CASE WHEN e.flags & 2 THEN (e.flags >> 2) & 1 END AS animated,
       CASE WHEN e.flags & 8 THEN (e.flags >> 4) & 1 END AS is_moving_to_parent,
       CASE WHEN e.flags & 32 THEN (e.flags >> 6) & 1 END AS is_being_presented,
       CASE WHEN e.flags & 128 THEN (e.flags >> 8) & 1 END AS is_moving_from_parent,
       CASE WHEN e.flags & 512 THEN (e.flags >> 10) & 1 END AS is_being_dismissed,
       CASE WHEN e.flags & 2048 THEN (e.flags >> 12) & 1 END AS interactive,
       d.text AS detail, th.text AS thread,
       coalesce(json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.wall'), w.text) AS wall,
       json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.attrs') AS attrs
FROM events e
JOIN sessions s ON s.id = e.session
JOIN strings n ON n.id = e.ev
LEFT JOIN strings r ON r.id = CASE WHEN typeof(e.rest) = 'integer' THEN e.rest END
LEFT JOIN strings w ON w.id = json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.wall_id')
LEFT JOIN strings v ON v.id = e.vc + s.vc_base
LEFT JOIN strings c ON c.id = CASE WHEN e.flags & 1 AND e.other IS NOT NULL THEN e.other ELSE json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.class') END
LEFT JOIN strings o ON o.id = CASE WHEN e.flags & 1 = 0 THEN e.other + s.vc_base END
LEFT JOIN strings d ON d.id = json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.detail')
LEFT JOIN strings th ON th.id = json_extract(CASE WHEN typeof(e.rest) = 'integer' THEN r.text ELSE e.rest END, '$.thread');

-- Instances with names resolved and lifetimes in milliseconds.
CREATE VIEW instances_v AS
SELECT s.sid, i.session AS session_id, v.text AS vc, i.since, c.text AS class,
       i.init_t, i.end_seq, i.end_t, i.end_how, p.text AS parent, pr.text AS presenter,
       i.release_seq, i.release_t, i.release_how,
       (i.end_t - i.release_t) / 1000000.0 AS release_to_end_ms,
       i.appearances, i.final_state
FROM instance_rows i
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
FROM appearance_rows a
JOIN sessions s ON s.id = a.session
JOIN strings v ON v.id = a.vc
LEFT JOIN instances i ON i.session = a.session AND i.vc = a.vc AND i.since = a.since
LEFT JOIN strings c ON c.id = i.cls;

-- Containment edges with names resolved.
CREATE VIEW containment_v AS
SELECT s.sid, k.session AS session_id, ch.text AS child, k.child_since, cc.text AS child_class,
       pa.text AS parent, k.parent_since, pc.text AS parent_class,
       k.add_seq, k.add_t, k.will_move_seq, k.did_move_seq, k.will_remove_seq, k.remove_seq, k.remove_t, k.did_remove_seq
FROM containment_rows k
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

/// What the read queries shared by every backend (LCTraceStore/Reads) need of a connection: prepare
/// a statement, bind its parameters, step through its rows. SQLite's statement and
/// PostgreSQL's query both conform, so a report, a timeline or a selection is written once in
/// portable SQL; the hot paths of each backend (loading events, writing models, reading a
/// session's events for the model) stay backend-specific.
///
/// Parameters are written `?1`, `?2` … (or `?` in order): PostgreSQL's connection turns them
/// into `$1`, `$2` ….
package protocol SQLQuery: AnyObject {
    /// Rewinds to before the first row and clears the bindings.
    func reset()
    /// Rewinds to before the first row, keeping the bindings (hot loops rebind every one).
    func resetKeepingBindings()
    func bind(_ values: [SQLValue]) throws
    func bind(_ value: SQLValue, at index: Int32) throws
    func bind(_ value: Int64, at index: Int32)
    func bind(_ value: Int64?, at index: Int32)
    func bind(_ value: String?, at index: Int32)
    /// Moves to the next row; false after the last.
    func step() throws -> Bool
    var columnCount: Int { get }
    func columnName(_ i: Int) -> String
    func isNull(_ i: Int) -> Bool
    func int(_ i: Int) -> Int64
    func optionalInt(_ i: Int) -> Int64?
    func double(_ i: Int) -> Double
    func text(_ i: Int) -> String?
    func value(_ i: Int) -> SQLValue
}

/// The most rows a statement run as a look-up (`SQLReadConnection.lookup`) may give: its
/// result is held whole.
package let lookUpRows: Int64 = 4096

/// The stored tables the shared queries read, in the plain layout of schema version 2
/// (Schemas/lctrace-schema.sql: ids unresolved, absolute seqs and times, texts for the codes).
package enum SharedTable: String {
    case events, instances, appearances, containment

    /// The view that gives the table in that layout where a backend packs it (SQLite's schema
    /// 3, PostgreSQL's schema 4: `event_rows` …).
    package var rowsView: String {
        switch self {
        case .events: return "event_rows"
        case .instances: return "instance_rows"
        case .appearances: return "appearance_rows"
        case .containment: return "containment_rows"
        }
    }
}

/// A connection the shared read queries run on.
package protocol SQLReadConnection: AnyObject {
    func query(_ sql: String) throws -> any SQLQuery
    /// A statement whose result is a row or a few (a look-up by key, `LIMIT 1`, a range of at
    /// most `lookUpRows` seqs), run many times: a server backend runs it whole, prepared once,
    /// without a cursor's round trips.
    func lookup(_ sql: String) throws -> any SQLQuery
    /// SQL for the text of key `key` of the JSON object in `column` (NULL when absent): the
    /// one function the shared queries need that the backends spell differently.
    func jsonText(_ column: String, key: String) -> String
    /// The relation that gives `table` in the shared layout: the table itself where a backend
    /// stores that layout, a view where it packs its rows (SQLite: `event_rows` …).
    func relation(_ table: SharedTable) -> String
    /// SQL (a scalar subquery) for `column` of the event at (`session`, `seq`), SQL expressions
    /// each written once (`?1`, a column): NULL when no such event is stored. A look-up of one
    /// event, which a backend storing events in blocks reaches through the blocks' bounds
    /// instead of unnesting every block of the session.
    func eventValue(_ column: EventColumn, session: String, seq: String) -> String
    /// SQL (a parenthesized FROM item, to alias) for the events of `session` with seqs from
    /// `from` through `through` (SQL expressions, each written once; nil: unbounded), with the
    /// columns of `relation(.events)`. `firstOnly`: the caller reads the lowest seq at or after
    /// `from` only, which a backend storing events in blocks finds in a block or two.
    func events(session: String, from: String?, through: String?, firstOnly: Bool) -> String
    /// SQL (a parenthesized FROM item, to alias) for the events of `session` whose seq is one
    /// of `seqs` (a few: a finding's evidence), with the columns of `relation(.events)`. A
    /// backend storing events in blocks unnests only the blocks that hold them, not every
    /// block between the first and the last.
    func events(session: String, seqs: [Int64]) -> String
    /// SQL (a parenthesized FROM item, to alias) of columns seq and t of the events of
    /// `session` at or after seq `from`, of which the caller reads the first: a timeline's
    /// bisection probes it a few hundred times a report.
    func seqTimes(session: String, atOrAfter from: String) -> String
    /// Events up to which a session's seqs, times and names are read whole for a timeline's
    /// searches (`TimelineQuery`), rather than looked up a few hundred times: 0 where a
    /// look-up costs next to nothing (SQLite's key).
    var searchIndexLimit: Int { get }
    /// SQL for the appearances whose viewIsAppearing → viewDidAppear gap the statistics count
    /// (completed, not interactive, not in the background, both times known), of the sessions
    /// `sessions` (an `IN (…)` list) selects, in session order: columns session, vc, since,
    /// animated (0, 1 or NULL), gap (ns). The hottest read of `report`: 800,000 rows on the
    /// 10 M benchmark database.
    func countedGapsSQL(sessions: String) -> String
    /// A second connection that sees exactly what this one sees (the same snapshot), for a
    /// read run on another thread beside this connection's (`BesideRead`): a server works on
    /// both at once. Nil where the backend has none: SQLite's reads are this process's own
    /// CPU, and two of its connections could see two states of the file.
    func sibling() throws -> (any SQLReadConnection)?
}

/// The columns of an event `SQLReadConnection.eventValue` looks up.
package enum EventColumn: String {
    case t, attrs
}

/// The event reads of `SQLReadConnection` spelled on the shared layout's relation of the
/// events (`relation(.events)`), which its key (session, seq) reaches: the defaults, and what a
/// backend that stores the events otherwise falls back to on a database of an older layout.
package enum SharedLayoutEvents {
    package static func events(_ relation: String, session: String, from: String?, through: String?) -> String {
        "(SELECT * FROM \(relation) WHERE session = \(session)" + (from.map { " AND seq >= \($0)" } ?? "")
            + (through.map { " AND seq <= \($0)" } ?? "") + ")"
    }

    package static func events(_ relation: String, session: String, seqs: [Int64]) -> String {
        "(SELECT * FROM \(relation) WHERE session = \(session) AND seq IN (\(seqList(seqs))))"
    }

    /// `seqs` for an `IN (…)` list: NULL when there is none (an empty list is not SQL).
    package static func seqList(_ seqs: [Int64]) -> String {
        seqs.isEmpty ? "NULL" : seqs.map(String.init).joined(separator: ",")
    }

    package static func seqTimes(_ relation: String, session: String, atOrAfter from: String) -> String {
        "(SELECT seq, t FROM \(relation) WHERE session = \(session) AND seq >= \(from))"
    }

    package static func eventValue(_ relation: String, _ column: EventColumn, session: String, seq: String) -> String {
        "(SELECT e.\(column.rawValue) FROM \(relation) e WHERE e.session = \(session) AND e.seq = \(seq))"
    }
}

package extension SQLReadConnection {
    /// The table itself: the backend stores the shared layout.
    func relation(_ table: SharedTable) -> String { table.rawValue }

    func events(session: String, from: String?, through: String?, firstOnly: Bool) -> String {
        SharedLayoutEvents.events(relation(.events), session: session, from: from, through: through)
    }

    func events(session: String, seqs: [Int64]) -> String {
        SharedLayoutEvents.events(relation(.events), session: session, seqs: seqs)
    }

    var searchIndexLimit: Int { 0 }

    func seqTimes(session: String, atOrAfter from: String) -> String {
        SharedLayoutEvents.seqTimes(relation(.events), session: session, atOrAfter: from)
    }

    func eventValue(_ column: EventColumn, session: String, seq: String) -> String {
        SharedLayoutEvents.eventValue(relation(.events), column, session: session, seq: seq)
    }

    func lookup(_ sql: String) throws -> any SQLQuery { try query(sql) }

    func sibling() throws -> (any SQLReadConnection)? { nil }

    func countedGapsSQL(sessions: String) -> String {
        """
        SELECT session, vc, since, animated, did_t - is_t FROM \(relation(.appearances))
        WHERE session IN (\(sessions)) AND outcome = 'completed' AND is_t IS NOT NULL AND did_t IS NOT NULL
          AND interactive = 0 AND backgrounded = 0
        ORDER BY session
        """
    }

    /// The first column of the first row, or nil.
    func scalarInt(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int64? {
        let q = try lookup(sql)
        try q.bind(bindings)
        defer { q.reset() }
        return try q.step() ? q.optionalInt(0) : nil
    }

    func scalarText(_ sql: String, _ bindings: [SQLValue] = []) throws -> String? {
        let q = try lookup(sql)
        try q.bind(bindings)
        defer { q.reset() }
        return try q.step() ? q.text(0) : nil
    }
}

/// The controllers an instance is related to, with their classes: SARIF places a finding on a
/// class the app does not declare (a UIKit container) on the nearest related class it does.
package final class RelatedControllersQuery {
    private let db: any SQLReadConnection
    private var relatedStatement: (any SQLQuery)?
    private var classStatement: (any SQLQuery)?

    package init(db: any SQLReadConnection) { self.db = db }

    /// An instance of `session`: its id, the seq of its `init` (or first event) and its class.
    package struct Instance: Sendable, Equatable {
        package var vc: String
        package var since: Int64
        package var cls: String?

        package init(vc: String, since: Int64, cls: String?) { self.vc = vc; self.since = since; self.cls = cls }
    }

    /// The last container (addChild) and the presenter of instance (`vc`, `since`), each as
    /// the instance it was when this one began, when known.
    package func related(session: Int64, vc: String, since: Int64) throws -> (parent: Instance?, presenter: Instance?) {
        if relatedStatement == nil {
            relatedStatement = try db.query("""
                SELECT p.text, pr.text FROM \(db.relation(.instances)) i JOIN strings v ON v.id = i.vc
                LEFT JOIN strings p ON p.id = i.parent LEFT JOIN strings pr ON pr.id = i.presenter
                WHERE i.session = ?1 AND v.text = ?2 AND i.since = ?3
                """)
        }
        let q = relatedStatement!
        q.reset()
        q.bind(session, at: 1)
        q.bind(vc, at: 2)
        q.bind(since, at: 3)
        guard try q.step() else { return (nil, nil) }
        let (parent, presenter) = (q.text(0), q.text(1))
        return (try parent.flatMap { try instance(session: session, vc: $0, at: since) },
                try presenter.flatMap { try instance(session: session, vc: $0, at: since) })
    }

    /// The instance that controller id `vc` of `session` named at `seq`: the latest one begun
    /// by then (an id is reused after a deinit), else the first one.
    package func instance(session: Int64, vc: String, at seq: Int64) throws -> Instance? {
        if classStatement == nil {
            classStatement = try db.query("""
                SELECT i.since, c.text FROM \(db.relation(.instances)) i JOIN strings v ON v.id = i.vc
                LEFT JOIN strings c ON c.id = i.cls
                WHERE i.session = ?1 AND v.text = ?2
                ORDER BY CASE WHEN i.since <= ?3 THEN 0 ELSE 1 END, CASE WHEN i.since <= ?3 THEN -i.since ELSE i.since END
                LIMIT 1
                """)
        }
        let q = classStatement!
        q.reset()
        q.bind(session, at: 1)
        q.bind(vc, at: 2)
        q.bind(seq, at: 3)
        guard try q.step() else { return nil }
        return Instance(vc: vc, since: q.int(0), cls: q.text(1))
    }
}

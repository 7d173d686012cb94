/// Session records of one session that disagreed with the one kept (the earliest).
package struct RecordConflict: Sendable, Equatable {
    package var sid: String
    package var count: Int
    /// The keys that differed (app, build, osVersion …).
    package var fields: [String]

    package init(sid: String, count: Int, fields: [String]) {
        self.sid = sid; self.count = count; self.fields = fields
    }
}

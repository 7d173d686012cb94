import XCTest
@testable import LCTraceFormat
@testable import LCTraceModel
@testable import LCTraceRules
@testable import LCTraceIngest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTracePostgreSQL
@testable import LCTraceAnalysis
@testable import LCTraceReport
@testable import LCTrace

/// Schema 3 packs the stored rows (`PackedEvent`, `ModelCodes`); the views are the documented
/// surface. What goes in must come out of `events_v` and `event_rows` exactly as the decoder
/// read it, through SQL and through the analysis's own reader, and de-duplication must compare
/// content, whatever way a row was packed.
final class PackedRowsTests: TemporaryDirectoryTestCase {

    /// Lines that exercise every packing rule: the class in `other` (init, an unknown event)
    /// or in `rest` (an event that names another controller), the other key null, every
    /// boolean present or not, detail, thread, wall and attrs with characters JSON escapes,
    /// attrs repeated (interned from their second time) or unique (inline), a controller id
    /// a session interned before this one (stored below the session's base).
    static func trickyLines() -> [String] {
        var a = TraceBuilder(sid: "A")
        a.vc(2, "init", "0xshared", #""cls":"Shared""#)
        var b = TraceBuilder(sid: "B")
        b.vc(2, "init", "0xb1", #""cls":"First""#)
        b.vc(3, "init", "0xshared", #""cls":"Shared""#)   // interned by A: below B's base
        b.vc(4, "addChild", "0xb1", #""parent":"0xshared","cls":"ClassOnAnAddChild""#)
        b.vc(5, "viewAttached", "0xb1", #""host":null"#)
        b.vc(6, "viewWillAppear", "0xb1", #""animated":true,"isMovingToParent":false,"isBeingPresented":true"#)
        b.vc(7, "viewWillDisappear", "0xb1", #""animated":false,"isMovingFromParent":true,"isBeingDismissed":false"#)
        b.vc(8, "pop", "0xshared", #""child":"0xb1","animated":true,"interactive":true"#)
        b.vc(9, "present", "0xb1", #""presented":"0xshared","style":"pageSheet","thread":"main \"ui\" \\ thread","bounds":[1,2]"#)
        b.add(10, "mark", #""name":"tab\tnew\nline \u0001 é 😀","wall":"2026-11-02T10:15:03.120Z","traits":{"h":"compact"}"#)
        b.add(10.5, "mark", #""name":"nul","wall":"2026-11-02\u0000T10""#)   // a NUL SQLite's JSON would cut
        b.vc(11, "viewAttached", "0xb1", #""host":"0xshared","bounds":[1,2]"#)   // attrs repeated: interned
        b.vc(12, "viewAttached", "0xb1", #""host":"0xshared","bounds":[1,2]"#)
        b.vc(13, "somethingNew", "0xb1", #""cls":"Unknown","extra":{"a":[1,{"b":null}]},"parent":"0xother""#)
        b.add(14, "sessionEnd", #""reason":"user""#)
        b.vc(15, "viewIsAppearing", "0xb1", #""animated":false,"cls":"LateClass""#)
        // (1.2) Attrs the model reads: init's uikit (the second one's rest interned), windowRoot's old.
        b.vc(16, "init", "0xs1", #""cls":"ProductSearchController","uikit":"UISearchController""#)
        b.vc(17, "init", "0xs2", #""cls":"ProductSearchController","uikit":"UISearchController""#)
        b.vc(18, "windowRoot", "0xs2", #""old":"0xshared","scene":"s \"1\"""#)
        return a.lines + b.lines
    }

    /// The decoder's reading of `lines`: what every view and reader must give back.
    func decoded(_ lines: [String]) -> [TraceEvent] {
        let decoder = EventDecoder()
        return lines.compactMap { line in
            var bytes = Array(line.utf8)
            guard case .success(let e) = bytes.withUnsafeMutableBytes({ decoder.decode(UnsafeRawBufferPointer($0)) }) else {
                XCTFail("bad test line \(line)")
                return nil
            }
            return e
        }
    }

    func load(_ lines: [String], name: String = "t.jsonl") throws -> SQLiteDatabase {
        TestSupport.writeLines(lines, to: dir + "/" + name)
        let r = TestSupport.run(["ingest", "-q", "--db", db, dir + "/" + name])
        XCTAssertEqual(r.status, 0, r.err)
        return try SQLiteDatabase(path: db, mode: .readOnly)
    }

    func testEventsComeBackAsTheDecoderReadThem() throws {
        let lines = Self.trickyLines()
        let database = try load(lines)
        let q = try database.prepare("""
            SELECT sid, seq, t, event, vc, class, coalesce(parent, host, presented, child), detail, thread, wall, attrs,
                   animated, is_moving_to_parent, is_being_presented, is_moving_from_parent, is_being_dismissed, interactive
            FROM events_v ORDER BY session_id, seq
            """)
        let rows = try database.prepare("SELECT flags, other IS NULL FROM event_rows ORDER BY session, seq")
        for e in decoded(lines) {
            XCTAssertTrue(try q.step())
            XCTAssertTrue(try rows.step())
            let at = "\(e.sid) \(e.seq) \(e.name)"
            XCTAssertEqual(q.text(0), e.sid, at)
            XCTAssertEqual(q.int(1), e.seq, at)
            XCTAssertEqual(q.int(2), e.t, at)
            XCTAssertEqual(q.text(3), e.name, at)
            XCTAssertEqual(q.text(4), e.vc, at)
            XCTAssertEqual(q.text(5), e.cls, at)
            XCTAssertEqual(q.text(6), e.other, at)
            XCTAssertEqual(q.text(7), e.detail, at)
            XCTAssertEqual(q.text(8), e.thread, at)
            XCTAssertEqual(q.text(9), e.wall, at)
            XCTAssertEqual(q.text(10), e.attrs, at)
            let booleans: [EventFlags] = [.animated, .isMovingToParent, .isBeingPresented, .isMovingFromParent, .isBeingDismissed, .interactive]
            for (k, flag) in booleans.enumerated() {
                XCTAssertEqual(q.optionalInt(11 + k), e.has(.present(flag)) ? (e.has(flag) ? 1 : 0) : nil, "\(at) boolean \(k)")
            }
            XCTAssertEqual(rows.int(0), e.flags.rawValue, "\(at): event_rows gives the decoder's flags back")
        }
        XCTAssertFalse(try q.step())
        // The packing rules were all used.
        XCTAssertEqual(try database.scalarText("SELECT group_concat(typeof(rest)) FROM events WHERE seq IN (12, 13) AND session = 2"),
                       "text,integer", "the repeated attrs: inline the first time, interned the second")
        XCTAssertGreaterThan(try database.scalarInt("SELECT count(*) FROM events WHERE typeof(rest) = 'text'") ?? 0, 3)
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM events WHERE flags & 1 AND other IS NOT NULL"), 7, "classes in other")
        XCTAssertEqual(try database.scalarInt("SELECT count(*) FROM events WHERE vc < 0"), 2, "0xshared in B, below its base")
    }

    /// The analysis's reader (`SessionEventReader`) and the portable one (`PortableEventReader`,
    /// plain SQL over `event_rows`) give the decoder's events, as far as the model reads them.
    func testBothEventReadersUnpackAlike() throws {
        let lines = Self.trickyLines()
        let database = try load(lines)
        let expected = decoded(lines).filter { $0.sid == "B" }
        let session = try XCTUnwrap(database.scalarInt("SELECT id FROM sessions WHERE sid = 'B'"))
        var fast: [TraceEvent] = [], portable: [TraceEvent] = []
        try SessionEventReader(db: database).forEachEvent(session: session, sid: "B") { fast.append($0) }
        try PortableEventReader(db: database).forEachEvent(session: session, sid: "B") { portable.append($0) }
        func modelFields(_ e: TraceEvent) -> String {
            "\(e.seq) \(e.t) \(e.name) \(e.kind) \(e.vc ?? "-") \(e.cls ?? "-") \(e.other ?? "-") \(e.flags.rawValue) \(e.detail ?? "-")"
                + (e.kind.modelReadsAttrs ? " \(e.attrs ?? "-")" : "")
        }
        XCTAssertEqual(fast.map(modelFields), expected.map(modelFields))
        XCTAssertEqual(portable.map(modelFields), expected.map(modelFields))
    }

    /// Re-reading the same lines finds duplicates (content compared, whether a row's rarer
    /// values were stored inline or interned); a change in any packed value is a conflict.
    func testDuplicatesAndConflictsCompareContentNotPacking() throws {
        let lines = Self.trickyLines()
        _ = try load(lines)
        // The repeated attrs went inline on their first line, interned after: the copy of
        // the first line must still be a duplicate.
        var shuffled = lines.filter { $0.contains("\"sid\":\"B\"") }
        shuffled.reverse()
        TestSupport.writeLines(shuffled + [lines[0]], to: dir + "/again.jsonl")
        let again = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/again.jsonl"])
        XCTAssertEqual(again.status, 0, again.err)
        let counts = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(again.out.utf8)) as? [String: Any])?["events"] as? [String: Int])
        XCTAssertEqual(counts["new"], 0)
        XCTAssertEqual(counts["duplicate"], shuffled.count + 1)
        XCTAssertEqual(counts["conflicting"], 0)

        let changes: [(String, String)] = [
            (#""cls":"ClassOnAnAddChild""#, #""cls":"OtherClass""#),          // class in rest
            (#""cls":"First""#, #""cls":"Second""#),                          // class in other
            (#""host":null"#, #""host":"0xb1""#),                              // other key null
            (#""isMovingToParent":false"#, #""isMovingToParent":true"#),       // a boolean
            (#""isBeingDismissed":false"#, ""),                               // a boolean dropped
            (#""thread":"main \"ui\" \\ thread""#, #""thread":"main""#),       // thread
            (#""wall":"2026-11-02T10:15:03.120Z""#, #""wall":"2026-11-02T10:15:04Z""#),
            (#""traits":{"h":"compact"}"#, #""traits":{"h":"regular"}"#),      // attrs
            (#""style":"pageSheet""#, #""style":"formSheet""#),                // detail
        ]
        for (i, (from, to)) in changes.enumerated() {
            let line = try XCTUnwrap(lines.first { $0.contains(from) }, from)
            var changed = line.replacingOccurrences(of: from, with: to)
            changed = changed.replacingOccurrences(of: ",,", with: ",").replacingOccurrences(of: ",}", with: "}")
            TestSupport.writeLines([changed], to: dir + "/change\(i).jsonl")
            let r = TestSupport.run(["ingest", "--db", db, "--format", "json", dir + "/change\(i).jsonl"])
            let c = (try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["events"] as? [String: Int]
            XCTAssertEqual(c?["conflicting"], 1, "\(from) → \(to): \(r.out)")
        }
    }

    /// Every code of the model tables reads back through the views as its enum's text.
    func testModelCodesReadBackAsTheirTexts() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        try database.execute(SQLiteSchema.ddl)
        var since: Int64 = 0
        for state in AppearanceState.allCases {
            for end in [nil] + InstanceEnd.allCases.map(Optional.some) {
                for how in [nil] + ReleaseHow.allCases.map(Optional.some) {
                    since += 1
                    try database.prepare("INSERT INTO instances(session, vc, since, appearances, codes) VALUES (1, 1, ?, 0, ?)")
                        .run([.int(since), .int(ModelCodes.instance(state: state, end: end, release: how))])
                    let q = try database.prepare("SELECT final_state, end_how, release_how FROM instance_rows WHERE since = ?")
                    try q.bind([.int(since)])
                    XCTAssertTrue(try q.step())
                    XCTAssertEqual(q.text(0), state.rawValue)
                    XCTAssertEqual(q.text(1), end?.rawValue)
                    XCTAssertEqual(q.text(2), how?.rawValue)
                }
            }
        }
        var seq: Int64 = 0
        for ending in AppearanceCycle.Ending.allCases {
            for outcome in AppearanceCycle.Outcome.allCases {
                for animated in [nil, false, true] as [Bool?] {
                    for (interactive, backgrounded) in [(false, false), (true, false), (false, true), (true, true)] {
                        seq += 1
                        try database.prepare("INSERT INTO appearances(session, will_seq, vc, since_dseq, will_t, codes) VALUES (1, ?, 1, 0, 5, ?)")
                            .run([.int(seq), .int(ModelCodes.appearance(ending: ending, outcome: outcome, animated: animated,
                                                                         interactive: interactive, backgrounded: backgrounded))])
                        let q = try database.prepare("SELECT ending, outcome, animated, interactive, backgrounded FROM appearance_rows WHERE will_seq = ?")
                        try q.bind([.int(seq)])
                        XCTAssertTrue(try q.step())
                        XCTAssertEqual(q.text(0), ending.rawValue)
                        XCTAssertEqual(q.text(1), outcome.rawValue)
                        XCTAssertEqual(q.optionalInt(2), animated.map { $0 ? 1 : 0 })
                        XCTAssertEqual(q.int(3), interactive ? 1 : 0)
                        XCTAssertEqual(q.int(4), backgrounded ? 1 : 0)
                    }
                }
            }
        }
    }

    /// Every combination of booleans (present or not, true or false) and of the other column
    /// round-trips through the packed flags, in Swift and in SQL.
    func testEveryFlagCombinationRoundTrips() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        try database.execute(SQLiteSchema.ddl)
        try database.execute("INSERT INTO sessions(id, sid) VALUES (1, 's')")
        let booleans: [EventFlags] = [.animated, .isMovingToParent, .isBeingPresented, .isMovingFromParent, .isBeingDismissed, .interactive]
        let insert = try database.prepare("INSERT INTO events(session, seq, t, ev, other, flags) VALUES (1, ?, 0, 1, ?, ?)")
        let read = try database.prepare("SELECT flags FROM event_rows WHERE session = 1 AND seq = ?")
        var seq: Int64 = 0
        for combination in 0..<(1 << 12) {
            var flags: EventFlags = []
            for (k, flag) in booleans.enumerated() {
                if combination & (1 << (2 * k)) != 0 { flags.insert(.present(flag)) }
                if combination & (1 << (2 * k + 1)) != 0, flags.contains(.present(flag)) { flags.insert(flag) }
            }
            // (other key present, other non-null, class in other): the cases the writer makes.
            for (present, nonNull, classInOther) in [(false, false, false), (true, false, false), (true, true, false), (false, true, true)] {
                var f = flags
                if present { f.insert(.otherPresent) }
                let packed = PackedEvent.flags(f, classInOther: classInOther, otherIsNull: !nonNull)
                XCTAssertEqual(PackedEvent.decodedFlags(packed, otherIsNull: !nonNull), f)
                seq += 1
                insert.reset()
                try insert.bind([.int(seq), nonNull ? .int(7) : .null, .int(packed)])
                try insert.step()
                read.reset()
                try read.bind([.int(seq)])
                XCTAssertTrue(try read.step())
                XCTAssertEqual(read.int(0), f.rawValue, "flags \(f.rawValue) present \(present) non-null \(nonNull) class \(classInOther)")
            }
        }
    }

    /// The rarer values' object is JSON SQLite reads, and its ids read back in Swift.
    func testRestObjectsAreJSONBothWays() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        let texts = ["plain", "quote \" backslash \\ slash /", "tab\tnl\ncr\r bell \u{7} esc \u{1b}", "é 😀 ∑", ""]
        for wall in texts {
            for attrs in [#"{"a":1}"#, #"{"k":"\"\\","n":[1, 2]}"#, "{\"old\":\"0x1\",\"c\":\"\u{1}\t\"}"] {
                var out: [UInt8] = []
                let present = Array(wall.utf8).withUnsafeBytes { w in
                    Array(attrs.utf8).withUnsafeBytes { a in
                        PackedEvent.appendRest(to: &out, cls: 12, detail: -3, thread: 99, wall: w, attrs: a)
                    }
                }
                XCTAssertTrue(present)
                let q = try database.prepare("SELECT json_extract(?1, '$.wall'), json_extract(?1, '$.attrs'), json_extract(?1, '$.class'), json_valid(?1)")
                q.bindText(out.withUnsafeBytes { $0 }, at: 1)
                XCTAssertTrue(try q.step())
                XCTAssertEqual(q.text(0), wall)
                XCTAssertEqual(q.text(1), attrs)
                XCTAssertEqual(q.int(2), 12)
                XCTAssertEqual(q.int(3), 1)
                let ids = out.withUnsafeBytes { PackedEvent.restIDs($0) }
                XCTAssertEqual(ids.cls, 12)
                XCTAssertEqual(ids.detail, -3)
                XCTAssertEqual(out.withUnsafeBytes { PackedEvent.restAttrs($0) }, attrs, "the attrs the analysis reads back")
            }
        }
        // A class key inside the attrs text is not the object's class.
        var out: [UInt8] = []
        _ = Array(#"{"\"class\":5":1}"#.utf8).withUnsafeBytes { PackedEvent.appendRest(to: &out, cls: nil, detail: 4, thread: nil, wall: nil, attrs: $0) }
        XCTAssertNil(out.withUnsafeBytes { PackedEvent.restIDs($0) }.cls)
        var noAttrs: [UInt8] = []
        _ = Array(#"x","attrs":"y"#.utf8).withUnsafeBytes { PackedEvent.appendRest(to: &noAttrs, cls: 1, detail: nil, thread: nil, wall: $0, attrs: nil) }
        XCTAssertNil(noAttrs.withUnsafeBytes { PackedEvent.restAttrs($0) }, "an attrs key inside the wall text is not the attrs")
        var none: [UInt8] = []
        XCTAssertFalse(PackedEvent.appendRest(to: &none, cls: nil, detail: nil, thread: nil, wall: nil, attrs: nil))
    }
}

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

/// The public schema: the DDL the code runs is the documented file, every table and column
/// is commented, and the JSON Schema of a trace line agrees with the decoder.
final class SchemaTests: XCTestCase {
    func testCodeDDLIsTheDocumentedFile() throws {
        let file = try String(contentsOf: TestSupport.root.appendingPathComponent("Schemas/lctrace-schema.sql"), encoding: .utf8)
        XCTAssertEqual(SQLiteSchema.ddl.trimmingCharacters(in: .whitespacesAndNewlines),
                       file.trimmingCharacters(in: .whitespacesAndNewlines),
                       "Schemas/lctrace-schema.sql and SchemaDDL.swift differ: run scripts/sync-schema")
    }

    func testEveryTableIsCreatedAndEveryColumnCommented() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try SQLiteSchema.openForWriting(path: dir + "/s.db")
        let tables = try db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var names: [String] = []
        while try tables.step() {
            let name = tables.text(0)!
            names.append(name)
            let sql = tables.text(1)!
            XCTAssertTrue(SQLiteSchema.ddl.contains(sql), "\(name) as created is not verbatim in the DDL")
            // Each column definition line carries a comment in the documented file.
            let columns = try db.prepare("SELECT name FROM pragma_table_info('\(name)')")
            while try columns.step() {
                let column = columns.text(0)!
                let line = SQLiteSchema.ddl.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(column + " ") && $0.contains(" ") }
                XCTAssertNotNil(line, "\(name).\(column) not found in the DDL")
            }
        }
        XCTAssertEqual(Set(names), ["strings", "files", "file_sessions", "sessions", "events", "rejects", "instances",
                                    "appearances", "containment", "findings", "meta"])
        let views = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'view'")
        var viewNames: Set<String> = []
        while try views.step() { viewNames.insert(views.text(0)!) }
        XCTAssertEqual(viewNames, ["events_v", "instances_v", "live_instances_v", "appearances_v", "containment_v", "findings_v", "identities_v",
                                   "event_rows", "instance_rows", "appearance_rows", "containment_rows"])
    }

    // MARK: JSON Schema

    /// A validator for the subset of JSON Schema 2020-12 that trace-line.schema.json uses.
    struct MiniValidator {
        let root: [String: Any]

        func valid(_ value: Any, _ schema: [String: Any]) -> Bool {
            if let type = schema["type"] {
                let types = (type as? [String]) ?? [type as! String]
                guard types.contains(where: { matches(value, $0) }) else { return false }
            }
            if let c = schema["const"], !equal(value, c) { return false }
            if let e = schema["enum"] as? [Any], !e.contains(where: { equal(value, $0) }) { return false }
            if let s = value as? String {
                let n = s.unicodeScalars.count
                if let min = schema["minLength"] as? Int, n < min { return false }
                if let max = schema["maxLength"] as? Int, n > max { return false }
            }
            if let n = value as? NSNumber, !Self.isBool(value) {
                if let min = schema["minimum"] as? Double, n.doubleValue < min { return false }
            }
            if let a = value as? [Any] {
                if let min = schema["minItems"] as? Int, a.count < min { return false }
                if let max = schema["maxItems"] as? Int, a.count > max { return false }
                if let items = schema["items"] as? [String: Any], !a.allSatisfy({ valid($0, items) }) { return false }
            }
            if let o = value as? [String: Any] {
                if let req = schema["required"] as? [String], !req.allSatisfy({ o[$0] != nil }) { return false }
                if let props = schema["properties"] as? [String: Any] {
                    for (k, sub) in props { if let v = o[k], !valid(v, sub as! [String: Any]) { return false } }
                }
            }
            if let all = schema["allOf"] as? [[String: Any]], !all.allSatisfy({ valid(value, $0) }) { return false }
            if let cond = schema["if"] as? [String: Any], valid(value, cond), let then = schema["then"] as? [String: Any] {
                if !valid(value, then) { return false }
            }
            return true
        }

        private func matches(_ v: Any, _ type: String) -> Bool {
            let isBool = Self.isBool(v)
            switch type {
            case "object": return v is [String: Any]
            case "array": return v is [Any]
            case "string": return v is String
            case "null": return v is NSNull
            case "boolean": return isBool
            case "integer":
                guard let n = v as? NSNumber, !isBool else { return false }
                return n.doubleValue == n.doubleValue.rounded()
            case "number": return v is NSNumber && !isBool
            default: return false
            }
        }

        /// JSONSerialization gives booleans as NSNumber of ObjC type "c" (on Linux and Darwin).
        static func isBool(_ v: Any) -> Bool {
            (v as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
        }

        private func equal(_ a: Any, _ b: Any) -> Bool {
            if let x = a as? String, let y = b as? String { return x == y }
            if let x = a as? NSNumber, let y = b as? NSNumber { return x == y }
            return false
        }
    }

    /// The keys a Codable recorder omits (format 1.1, "Keys that are absent"), and the ones it
    /// may not: the schema and the decoder agree on each line.
    func testJSONSchemaAgreesWithTheDecoderOnAbsentKeys() throws {
        let schemaData = try Data(contentsOf: TestSupport.root.appendingPathComponent("Schemas/trace-line.schema.json"))
        let schema = try JSONSerialization.jsonObject(with: schemaData) as! [String: Any]
        let validator = MiniValidator(root: schema)
        let lines: [(String, Bool)] = [
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"willMoveToParent","vc":"0x2"}"#, true),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"didMoveToParent","vc":"0x2"}"#, true),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"dismiss","vc":"0x2","interactive":true}"#, true),
            (#"{"v":1,"sid":"S","seq":0,"t":0,"ev":"session","wall":"2026-11-02T10:15:03.120Z","extension":"com.apple.share-services"}"#, true),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"addChild","vc":"0x2"}"#, false),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"present","vc":"0x2"}"#, false),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"init","vc":"0x2"}"#, false),
            (#"{"v":1,"sid":"S","seq":1,"t":1,"ev":"viewDidLoad"}"#, false),
            (#"{"v":1,"sid":"S","seq":0,"t":0,"ev":"session"}"#, false),
        ]
        for (line, valid) in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            XCTAssertEqual(validator.valid(object, schema), valid, "schema: \(line)")
            var bytes = Array(line.utf8)
            let decoded = bytes.withUnsafeMutableBytes { EventDecoder().decode(UnsafeRawBufferPointer($0)) }
            if case .success = decoded { XCTAssertTrue(valid, "decoder accepts \(line)") } else { XCTAssertFalse(valid, "decoder rejects \(line)") }
        }
    }

    func testJSONSchemaAgreesWithTheDecoderOnSampleLines() throws {
        let schemaData = try Data(contentsOf: TestSupport.root.appendingPathComponent("Schemas/trace-line.schema.json"))
        let schema = try JSONSerialization.jsonObject(with: schemaData) as! [String: Any]
        XCTAssertEqual(schema["$schema"] as? String, "https://json-schema.org/draft/2020-12/schema")
        let validator = MiniValidator(root: schema)
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        var checked = 0, agreedRejects = 0
        let (inputs, _) = Ingester.expand([samples])
        for input in inputs {
            let trace = try TraceInput(location: input)
            LineReader(input: trace).forEachLine { line in
                guard line.overlongLength == nil, !line.bytes.isEmpty,
                      let object = try? JSONSerialization.jsonObject(with: Data(line.bytes)) else { return true }
                let decoded = EventDecoder().decode(line.bytes)
                let schemaOK = (object as? [String: Any]).map { validator.valid($0, schema) } ?? false
                switch decoded {
                case .success: XCTAssertTrue(schemaOK, "decoder accepts, schema rejects: \(String(decoding: line.bytes, as: UTF8.self))")
                case .failure(let r):
                    XCTAssertFalse(schemaOK, "decoder rejects (\(r.message)), schema accepts: \(String(decoding: line.bytes, as: UTF8.self))")
                    agreedRejects += 1
                }
                checked += 1
                return true
            }
        }
        XCTAssertGreaterThan(checked, 3000)
        XCTAssertGreaterThanOrEqual(agreedRejects, 6, "the bad-lines sample exercises the schema's types")
    }
}

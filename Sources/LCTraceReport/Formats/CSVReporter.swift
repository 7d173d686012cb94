import LCTraceModel

/// `--format csv`: the JSON findings' columns, one row per finding, `detail` as a JSON object.
enum CSVReporter: StreamingReporter {
    package static let id = "csv"
    package static let summary = "one row per finding, the JSON keys as columns"

    package static func writer(_ options: ReportOptions, to sink: @escaping ([UInt8]) throws -> Void) -> any FindingWriter {
        Writer(neutralizesFormulas: options.neutralizesFormulas, sink: sink)
    }

    /// The header row, then a row per finding as it comes, handed on 64 KiB at a time.
    final class Writer: FindingWriter {
        private let neutralizesFormulas: Bool
        private let sink: ([UInt8]) throws -> Void
        private var out: [UInt8] = []

        init(neutralizesFormulas: Bool, sink: @escaping ([UInt8]) throws -> Void) {
            self.neutralizesFormulas = neutralizesFormulas
            self.sink = sink
            out += Array((JSONReporter.columns.joined(separator: ",") + "\n").utf8)
        }

        func add(_ f: Finding, state: BaselineState?) throws {
            let cells: [String] = [
                f.rule, f.name, f.severity.rawValue, f.session ?? "", f.vc ?? "", f.since.map(String.init) ?? "",
                f.cls ?? "", f.t.map(String.init) ?? "", f.message,
                "[" + f.evidence.map(String.init).joined(separator: ",") + "]", f.confidence, f.file ?? "",
                f.identity, f.identityKey, f.app ?? "", f.build ?? "", f.device ?? "", state?.rawValue ?? "",
                DetailValue.encode(f.detail),
            ]
            out += Array((cells.map { RowFormatter.csvField($0, neutralize: neutralizesFormulas) }.joined(separator: ",") + "\n").utf8)
            if out.count >= 1 << 16 { try sink(out); out.removeAll(keepingCapacity: true) }
        }

        func finish(_ view: ReportView) throws {
            if !out.isEmpty { try sink(out) }
            out.removeAll()
        }
    }
}

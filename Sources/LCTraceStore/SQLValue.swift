/// A value to bind or read.
package enum SQLValue: Equatable, Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])
}

/// A query `lctrace query` will not run: it would write, attach, or change settings.
package struct QueryRefused: Error, CustomStringConvertible {
    package var message: String
    package init(message: String) { self.message = message }
    package var description: String { message }
}

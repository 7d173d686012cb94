/// Trace format v1 (docs/input-format.md): the contract between a recorder in an app and
/// lctrace. The names live here, in the target both the recorder and the decoder build on.
package enum TraceFormat {
    /// The format version this lctrace writes and reads (`v` of every line).
    package static let version: Int64 = 1
    /// The longest session id (`sid`), in characters.
    package static let maxSessionIDLength = 128
}

/// The keys of trace format v1 that have a meaning of their own, spelt as the format spells
/// them (`text`): the decoder classifies a line's keys by them and the recorder writes them,
/// so the two cannot drift. Any other key is kept verbatim (`attrs`).
public enum TraceKey: Int, CaseIterable, Sendable {
    case v, sid, seq, t, ev, wall, thread, vc, cls
    case animated, isMovingToParent, isBeingPresented, isMovingFromParent, isBeingDismissed, interactive
    case parent, host, presented, child, style, scene, name, reason, bounds, traits
    case app, appVersion, build, os, osVersion, sdk, device, recorder

    package var text: String { String(describing: self) }

    /// Keys by length, for classifying a raw key without building a String.
    @usableFromInline package static let byLength = ShortName.table(TraceKey.allCases) { $0.text }

    /// The key `bytes` spell, if the format names it. A hot loop passes `byLength` it holds
    /// (read through the global, the table costs an addressor call per key).
    @inlinable @inline(__always)
    package static func classify(_ bytes: UnsafeRawBufferPointer, in table: [[(name: ShortName, value: TraceKey)]] = byLength) -> TraceKey? {
        ShortName.lookup(bytes, in: table)
    }

    package var isSessionField: Bool { rawValue >= TraceKey.app.rawValue }

    /// The key whose value is the event's `other` controller (see `EventKind.otherKey`).
    @inlinable package static func other(for kind: EventKind) -> TraceKey? {
        switch kind {
        case .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent: return .parent
        case .viewAttached, .viewDetached: return .host
        case .present: return .presented
        case .push, .pop: return .child
        default: return nil
        }
    }

    /// The key whose string goes to `detail` (see `EventKind.detailKey`).
    @inlinable package static func detail(for kind: EventKind) -> TraceKey? {
        switch kind {
        case .present: return .style
        case .mark: return .name
        case .sessionEnd: return .reason
        default: return kind.isSceneEvent ? .scene : nil
        }
    }
}


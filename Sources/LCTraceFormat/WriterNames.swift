/// Names of trace format v1 that a writer needs and that `TraceKey` and `EventKind` do not
/// have: the (1.2) additions, which the decoder keeps as they come (an unknown event name, a
/// key in `attrs`). They live apart on purpose: a new case of `TraceKey` would take the key
/// out of `attrs`, and a new case of `EventKind` would stop counting the event as unknown,
/// which changes what lctrace stores. Moving a name into those enums is the decoder's change.
package enum WriterName {
    /// (1.2) The event of `window.rootViewController = …`: `vc` the new root, `old`, `scene`.
    package static let windowRoot = "windowRoot"
    /// (1.2) Key of `init`: the nearest UIKit superclass.
    package static let uikit = "uikit"
    /// (1.2) Key of `windowRoot`: the root it replaces.
    package static let old = "old"
    /// (1.2) Key of the session record in an app extension: its extension point.
    package static let extensionPoint = "extension"
}

/// The values of `sessionEnd`'s `reason`.
package enum SessionEndReason: String, CaseIterable, Sendable {
    case terminate
    case backgroundKill = "background-kill"
    case stopped
}

/// The values of `present`'s `style`.
package enum PresentationStyleName: String, CaseIterable, Sendable {
    case fullScreen, pageSheet, formSheet, overFullScreen, overCurrentContext, popover, automatic, custom
}

/// The marks lctrace's recorder writes in an app extension for its host's notifications
/// (an extension has no scene and no app-delegate events): lctrace's foreground clock reads
/// them as it reads `appDidEnterBackground` and `appWillEnterForeground`.
package enum ExtensionHostMark: String, CaseIterable, Sendable {
    case willEnterForeground = "extensionHostWillEnterForeground"
    case didBecomeActive = "extensionHostDidBecomeActive"
    case willResignActive = "extensionHostWillResignActive"
    case didEnterBackground = "extensionHostDidEnterBackground"

    /// Whether the host went to the background (false) or came back (true); nil: neither.
    package var inForeground: Bool? {
        switch self {
        case .didEnterBackground: return false
        case .willEnterForeground, .didBecomeActive: return true
        case .willResignActive: return nil
        }
    }
}

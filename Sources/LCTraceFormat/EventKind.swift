/// The event names of trace format v1. Unknown names decode as `.unknown` and are kept.
public enum EventKind: String, CaseIterable, Sendable {
    case session, sessionEnd
    case `init`, loadView, viewDidLoad
    case viewWillAppear, viewIsAppearing, viewDidAppear, viewWillDisappear, viewDidDisappear
    case `deinit`
    case viewWillLayoutSubviews, viewDidLayoutSubviews, traitChange, memoryWarning
    case addChild, willMoveToParent, didMoveToParent, removeFromParent
    case viewAttached, viewDetached
    case present, dismiss, push, pop
    /// (1.2) `window.rootViewController = …`: `vc` the new root (optional), `old` the one it
    /// replaces and `scene` (kept in `attrs`).
    case windowRoot
    case sceneWillConnect, sceneDidBecomeActive, sceneWillResignActive
    case sceneWillEnterForeground, sceneDidEnterBackground, sceneDidDisconnect
    case appDidFinishLaunching, appDidBecomeActive, appWillResignActive
    case appDidEnterBackground, appWillEnterForeground, appWillTerminate
    case mark
    case unknown

    package init(name: String) { self = EventKind(rawValue: name) ?? .unknown }

    /// Known names by length: classifies a raw name without building a String.
    @usableFromInline static let byLength = ShortName.table(EventKind.allCases.filter { $0 != .unknown }) { $0.rawValue }

    @inlinable @inline(__always)
    package static func classify(_ name: UnsafeRawBufferPointer) -> EventKind {
        ShortName.lookup(name, in: byLength) ?? .unknown
    }

    /// The key whose value (another controller id) goes to the `other` column.
    package var otherKey: String? { TraceKey.other(for: self)?.text }

    /// The five appearance callbacks (the steps LC202–LC205 judge).
    package var isAppearanceEvent: Bool {
        switch self {
        case .viewWillAppear, .viewIsAppearing, .viewDidAppear, .viewWillDisappear, .viewDidDisappear: return true
        default: return false
        }
    }

    /// (1.2) Events whose `attrs` the model reads (`init`'s `uikit`, `windowRoot`'s `old`):
    /// every reader of stored events gives these their attrs back; the others go without.
    package var modelReadsAttrs: Bool { self == .`init` || self == .windowRoot }

    /// The key whose string value goes to the `detail` column.
    package var detailKey: String? { TraceKey.detail(for: self)?.text }

    /// Events that describe one controller and so need `vc`.
    @inlinable package var needsVC: Bool {
        switch self {
        case .`init`, .loadView, .viewDidLoad, .viewWillAppear, .viewIsAppearing, .viewDidAppear,
             .viewWillDisappear, .viewDidDisappear, .`deinit`, .viewWillLayoutSubviews, .viewDidLayoutSubviews,
             .traitChange, .addChild, .willMoveToParent, .didMoveToParent, .removeFromParent,
             .viewAttached, .viewDetached, .present, .dismiss, .push, .pop:
            return true
        default:
            return false
        }
    }

    @inlinable package var isSceneEvent: Bool {
        switch self {
        case .sceneWillConnect, .sceneDidBecomeActive, .sceneWillResignActive,
             .sceneWillEnterForeground, .sceneDidEnterBackground, .sceneDidDisconnect: return true
        default: return false
        }
    }

    package var isAppDelegateEvent: Bool {
        switch self {
        case .appDidFinishLaunching, .appWillTerminate: return true
        default: return isDeprecatedAppDelegateEvent
        }
    }

    /// (1.1) The four app-delegate state transitions the iOS 26 SDK deprecates in favour of the
    /// scene ones (LC501). `appDidFinishLaunching` and `appWillTerminate` are not deprecated.
    package var isDeprecatedAppDelegateEvent: Bool {
        switch self {
        case .appDidBecomeActive, .appWillResignActive, .appDidEnterBackground, .appWillEnterForeground: return true
        default: return false
        }
    }
}

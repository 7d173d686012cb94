import LCTraceFormat

/// A controller's id in a trace (`vc`): a fresh number per session, never an address, so an
/// id is never reused while the session lasts (addresses are, after deallocation). Get one
/// from `TraceRecorder.initialized(cls:uikit:)`, which records the instance's `init`.
public struct InstanceID: Hashable, Sendable, CustomStringConvertible {
    /// 1, 2, 3… in the order the session first saw the instances.
    public let number: UInt64

    /// Package only: a simulator's controller that the session never saw initialized (an id
    /// kept from an earlier session, as only an app's manual calls could).
    package init(number: UInt64) { self.number = number }

    /// The id as the trace spells it, e.g. `vc12`.
    public var description: String { "vc\(number)" }
}

/// A view's size in points (`bounds` on `viewIsAppearing`).
public struct ViewSize: Sendable, Equatable {
    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) { self.width = width; self.height = height }
}

/// The traits the format records (`traits` on `viewIsAppearing` and `traitChange`), e.g.
/// `{"h":"compact","v":"regular","style":"dark"}`. Nil fields are left out.
public struct Traits: Sendable, Equatable {
    public enum SizeClass: String, Sendable { case compact, regular, unspecified }
    public enum Style: String, Sendable { case light, dark, unspecified }

    public var horizontal: SizeClass?
    public var vertical: SizeClass?
    public var style: Style?

    public init(horizontal: SizeClass? = nil, vertical: SizeClass? = nil, style: Style? = nil) {
        self.horizontal = horizontal; self.vertical = vertical; self.style = style
    }
}

/// `present`'s `style`: the values trace format v1 defines.
public enum PresentationStyle: Sendable, CaseIterable {
    case fullScreen, pageSheet, formSheet, overFullScreen, overCurrentContext, popover, automatic, custom

    /// The style a trace names (`lctrace-gen --via-recorder` replays traces through the API).
    package init?(name: PresentationStyleName) {
        guard let style = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = style
    }

    var name: PresentationStyleName {
        switch self {
        case .fullScreen: return .fullScreen
        case .pageSheet: return .pageSheet
        case .formSheet: return .formSheet
        case .overFullScreen: return .overFullScreen
        case .overCurrentContext: return .overCurrentContext
        case .popover: return .popover
        case .automatic: return .automatic
        case .custom: return .custom
        }
    }
}

/// The scene life-cycle events (`scene` = the scene session's persistent identifier).
public enum SceneEvent: Sendable, CaseIterable {
    case willConnect, didBecomeActive, willResignActive, willEnterForeground, didEnterBackground, didDisconnect

    var kind: EventKind {
        switch self {
        case .willConnect: return .sceneWillConnect
        case .didBecomeActive: return .sceneDidBecomeActive
        case .willResignActive: return .sceneWillResignActive
        case .willEnterForeground: return .sceneWillEnterForeground
        case .didEnterBackground: return .sceneDidEnterBackground
        case .didDisconnect: return .sceneDidDisconnect
        }
    }
}

/// The app-delegate life-cycle events. The four state transitions are what an app without a
/// scene life cycle gets (deprecated by the iOS 26 SDK: lctrace's LC501).
public enum AppEvent: Sendable, CaseIterable {
    case didFinishLaunching, didBecomeActive, willResignActive, didEnterBackground, willEnterForeground, willTerminate

    var kind: EventKind {
        switch self {
        case .didFinishLaunching: return .appDidFinishLaunching
        case .didBecomeActive: return .appDidBecomeActive
        case .willResignActive: return .appWillResignActive
        case .didEnterBackground: return .appDidEnterBackground
        case .willEnterForeground: return .appWillEnterForeground
        case .willTerminate: return .appWillTerminate
        }
    }
}

/// Why recording ended (`sessionEnd`'s `reason`).
public enum EndReason: Sendable, CaseIterable {
    /// `stop()` was called.
    case stopped
    /// The app is terminating (`applicationWillTerminate`).
    case terminate
    /// The app chose to end the session before the system kills it in the background.
    case backgroundKill

    var name: SessionEndReason {
        switch self {
        case .stopped: return .stopped
        case .terminate: return .terminate
        case .backgroundKill: return .backgroundKill
        }
    }
}

import LCTraceFormat
import LCTraceModel

/// LC501 app-delegate-lifecycle (warning).
///
/// Finds: (1.1) the four app-delegate state transitions the iOS 26 SDK deprecates
/// (appDidBecomeActive, appWillResignActive, appDidEnterBackground, appWillEnterForeground)
/// in a session whose app was built with SDK 26 or later: the UISceneDelegate ones replace
/// them. One finding per deprecated event and session, so that each has its own identity
/// (rules.md: the key names the event).
///
/// Does not flag: (1.1) appDidFinishLaunching and appWillTerminate, which are not deprecated;
/// apps built with an older SDK; sessions with no session record (no SDK known).
enum AppDelegateLifecycleRule: Rule {
    package static let info = RuleInfo(id: "LC501", name: "app-delegate-lifecycle", severity: .warning, family: .scene,
                               summary: "deprecated app-delegate life cycle",
                               explanation: "One of the four app-delegate state transitions the iOS 26 SDK deprecates (appDidBecomeActive, appWillResignActive, appDidEnterBackground, appWillEnterForeground) in a session whose sdk is 26 or later: the UISceneDelegate callbacks replace them. One finding per deprecated event and session, with its count. Not flagged: appDidFinishLaunching and appWillTerminate, which are not deprecated; apps built with an older SDK; sessions with no session record (no SDK known).",
                               help: "Adopt the scene life cycle: move the work to the UISceneDelegate callback named in the message.",
                               report: ReportNeeds(sourcePlace: .appDelegate),
                               keyParts: "the event name",
                               keyExample: "LC501|com.example.news|appDidEnterBackground")
    package static let scope = RuleScope.session

    /// The scene-delegate callback that replaces each deprecated one.
    static let replacements: [EventKind: EventKind] = [
        .appDidBecomeActive: .sceneDidBecomeActive, .appWillResignActive: .sceneWillResignActive,
        .appDidEnterBackground: .sceneDidEnterBackground, .appWillEnterForeground: .sceneWillEnterForeground,
    ]

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard !model.deprecatedAppDelegateEvents.isEmpty, let sdk = SessionMetadata.version(model.metadata.sdk),
              sdk.0 >= 26 else { return [] }
        return model.deprecatedAppDelegateEvents.sorted { $0.value.seqs[0] < $1.value.seqs[0] }.map { kind, seen in
            let times = seen.count == 1 ? "" : " (\(seen.count) times)"
            let instead = replacements[kind].map { ": use \($0.rawValue)" } ?? ""
            return Finding(info, model, t: seen.firstT,
                           "\(kind.rawValue)\(times) with SDK \(model.metadata.sdk!): deprecated app-delegate life cycle\(instead)",
                           evidence: seen.seqs, key: [kind.rawValue], detail: ["event": .text(kind.rawValue), "count": .int(Int64(seen.count))])
        }
    }
}

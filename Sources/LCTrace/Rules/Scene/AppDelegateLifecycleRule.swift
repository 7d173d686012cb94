/// LC501 app-delegate-lifecycle (warning).
///
/// Finds: app-delegate life-cycle events (appDidFinishLaunching, appDidBecomeActive, …) in a
/// session whose app was built with SDK 26 or later, where they are deprecated in favour of
/// the UISceneDelegate ones. One finding per session.
///
/// Does not flag: apps built with an older SDK; sessions with no session record (no SDK known).
enum AppDelegateLifecycleRule: Rule {
    static let info = RuleInfo(id: "LC501", name: "app-delegate-lifecycle", severity: .warning, family: .scene,
                               summary: "deprecated app-delegate life cycle")
    static let scope = RuleScope.session

    static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard model.appDelegateEventCount > 0, let sdk = SessionMetadata.version(model.metadata.sdk), sdk.0 >= 26,
              let first = model.appDelegateEvents.first else { return [] }
        let names = Array(Set(model.appDelegateEvents.map(\.name))).sorted().joined(separator: ", ")
        return [Finding(info, model, t: first.t,
                        "\(model.appDelegateEventCount) app-delegate life-cycle events (\(names)) with SDK \(model.metadata.sdk!): deprecated, use UISceneDelegate",
                        evidence: model.appDelegateEvents.prefix(10).map(\.seq))]
    }
}

import LCTraceModel

/// LC502 no-scene-lifecycle (error).
///
/// Finds: a session of an app built with SDK 27 or later with no scene event at all: such an
/// app has no scene life cycle and fails to launch.
///
/// Does not flag: older SDKs; sessions with no session record; sessions with any scene event;
/// (1.1) app extensions (session record key `extension`: extensions have no scene life cycle);
/// (1.1) sessions whose start (seq 0) is not in the trace (a lost first file may have held
/// the scene events).
enum NoSceneLifecycleRule: Rule {
    package static let info = RuleInfo(id: "LC502", name: "no-scene-lifecycle", severity: .error, family: .scene,
                               summary: "no scene life cycle with SDK 27+",
                               explanation: "A session of an app built with SDK 27 or later with no scene event at all: such an app has no scene life cycle and fails to launch. Not flagged: older SDKs; sessions with no session record; sessions with any scene event; app extensions (a session record with extension: extensions have no scene life cycle); sessions whose start (seq 0) is not in the trace (a lost first file may have held the scene events).",
                               help: "Add a UIApplicationSceneManifest and a UISceneDelegate (or a SwiftUI App): apps built with SDK 27 must use scenes.",
                               report: ReportNeeds(sourcePlace: .appDelegate),
                               keyParts: "nothing more",
                               keyExample: "LC502|com.example.mail")
    package static let scope = RuleScope.session

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard model.sceneEventCount == 0, model.stats.events > 0, model.metadata.extensionPoint == nil,
              model.stats.firstSeq == 0,
              let sdk = SessionMetadata.version(model.metadata.sdk), sdk.0 >= 27 else { return [] }
        return [Finding(info, model, t: model.stats.firstT,
                        "no scene life-cycle event in a session built with SDK \(model.metadata.sdk!): the app has no UIScene life cycle",
                        evidence: model.metadata.recordSeq.map { [$0] } ?? [], detail: ["sdk": .text(model.metadata.sdk!)])]
    }
}

import LCTraceModel

/// LC402 missing-is-appearing (info).
///
/// Finds: viewWillAppear → viewDidAppear with no viewIsAppearing, on an OS that has it
/// (iOS 13 or later, in an app built with the iOS 17 SDK or later). Reported once per
/// instance, with the count of such appearances.
///
/// Does not flag: sessions on older systems or SDKs, or with no session record; appearances
/// that resume a cancelled disappearance (a cancelled sheet swipe or interactive pop brings
/// the controller back with viewWillAppear → viewDidAppear alone).
enum MissingIsAppearingRule: Rule {
    /// iOS, iPadOS, tvOS and Mac Catalyst 13+ when built with SDK 17+; (1.2) visionOS at any
    /// version (its numbering starts at 1, and it has had viewIsAppearing from its first SDK).
    static func hasViewIsAppearing(_ m: SessionMetadata) -> Bool {
        let name = (m.osName ?? "").lowercased().filter { $0.isLetter }
        if name == "visionos" || name == "xros" { return true }
        guard let os = SessionMetadata.version(m.osVersion), os.0 >= 13,
              let sdk = SessionMetadata.version(m.sdk), sdk.0 >= 17 else { return false }
        return true
    }

    package static let info = RuleInfo(id: "LC402", name: "missing-is-appearing", severity: .info, family: .gaps,
                               summary: "appearance without viewIsAppearing",
                               explanation: "viewWillAppear → viewDidAppear with no viewIsAppearing on a system that has it (iOS, (1.2) iPadOS, tvOS or Mac Catalyst 13 or later in an app built with the 17 SDK or later, and visionOS at any version: its numbering starts at 1); once per instance, with the count of such appearances. Not flagged: sessions on older systems or SDKs, or with no session record; an appearance that resumes a cancelled disappearance (a cancelled sheet swipe or interactive pop brings the controller back with viewWillAppear → viewDidAppear alone).",
                               help: "Check for a container that forwards appearance callbacks by hand (it must call viewIsAppearing too), or a recorder that does not hook it.",
                               keyParts: "class, `animated` or `plain`")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard hasViewIsAppearing(model.metadata) else { return [] }
        // The builder counts them per instance as they complete (`Instance.missingIsAppearingCount`),
        // so an instance is judged once even when its cycles left memory in different batches.
        return model.instances.compactMap { x in
            guard let first = x.firstMissingIsAppearing else { return nil }
            let n = x.missingIsAppearingCount
            return Finding(info, model, x.key, t: first.didT,
                           "\(MessageText.cls(model, x.key)) appeared with no viewIsAppearing" + (n > 1 ? " (\(n) times)" : "")
                           + " on \(model.metadata.osName ?? "iOS") \(model.metadata.osVersion ?? "?") built with SDK \(model.metadata.sdk ?? "?")",
                           evidence: [first.willSeq, first.didSeq], key: [first.animated ? "animated" : "plain"],
                           detail: ["count": .int(Int64(n))])
        }
    }
}

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
    static let info = RuleInfo(id: "LC402", name: "missing-is-appearing", severity: .info, family: .gaps,
                               summary: "appearance without viewIsAppearing")

    static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        guard let os = SessionMetadata.version(model.metadata.osVersion), os.0 >= 13,
              let sdk = SessionMetadata.version(model.metadata.sdk), sdk.0 >= 17 else { return [] }
        var first: [InstanceKey: AppearanceCycle] = [:]
        var count: [InstanceKey: Int] = [:]
        var order: [InstanceKey] = []
        for c in model.cycles where c.outcome == .completed && c.isSeq == nil && !c.resumedFromDisappearing {
            if first[c.instance] == nil { first[c.instance] = c; order.append(c.instance) }
            count[c.instance, default: 0] += 1
        }
        return order.map { key in
            let c = first[key]!
            let n = count[key]!
            return Finding(info, model, key, t: c.didT,
                           "\(Say.cls(model, key)) appeared with no viewIsAppearing" + (n > 1 ? " (\(n) times)" : "")
                           + " on iOS \(model.metadata.osVersion ?? "?") built with SDK \(model.metadata.sdk ?? "?")",
                           evidence: [c.willSeq, c.didSeq!], detail: ["count": String(n)])
        }
    }
}

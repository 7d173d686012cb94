import LCTraceModel

/// LC204 disappear-without-appear (warning).
///
/// Finds: `viewWillDisappear` or `viewDidDisappear` while hidden, or `viewDidDisappear`
/// while visible (no viewWillDisappear before it).
///
/// Does not flag: a `viewWillDisappear` while appearing (a cancelled appearance, legal), nor
/// app backgrounding (which sends no disappear callbacks at all).
enum DisappearWithoutAppearRule: Rule {
    package static let info = RuleInfo(id: "LC204", name: "disappear-without-appear", severity: .warning, family: .unbalanced,
                               summary: "disappearance without a matching appearance",
                               explanation: "viewWillDisappear or viewDidDisappear while hidden, or viewDidDisappear while visible (no viewWillDisappear before it). Not flagged: (1.2) an event after lost events of the instance; viewWillDisappear while appearing (a cancelled appearance, legal); app backgrounding.",
                               help: "Look for a container forwarding disappearance callbacks by hand, or calling them on a child that never appeared.",
                               keyParts: "class, the offending event, the state it met (`after-deinit` for an event after deinit; LC203: `viewWillAppear|appearing`)")

    package static func matches(_ a: LifecycleAnomaly) -> Bool {
        guard a.kind == .transition else { return false }
        switch (a.event, a.state) {
        case (.viewWillDisappear, .hidden), (.viewDidDisappear, .hidden), (.viewDidDisappear, .visible): return true
        default: return false
        }
    }

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.anomalies.compactMap { a in
            guard matches(a) else { return nil }
            return Finding(info, model, a.instance, t: a.t,
                           "\(MessageText.cls(model, a.instance)) got \(a.event.rawValue) while \(a.state.rawValue)",
                           evidence: a.evidence, key: [a.event.rawValue, a.state.rawValue],
                           detail: ["event": .text(a.event.rawValue), "state": .text(a.state.rawValue)])
        }
    }
}

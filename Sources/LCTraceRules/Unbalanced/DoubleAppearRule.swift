import LCTraceModel

/// LC202 double-appear (error).
///
/// Finds: `viewWillAppear` while already appearing or visible, or `viewDidAppear` while
/// already visible: usually a container forwarding appearance by hand on top of UIKit's
/// automatic forwarding.
///
/// Does not flag: `viewWillAppear` after a `viewWillDisappear` (a cancelled interactive pop
/// or sheet swipe: disappearing → appearing is legal).
enum DoubleAppearRule: Rule {
    package static let info = RuleInfo(id: "LC202", name: "double-appear", severity: .error, family: .unbalanced,
                               summary: "appearance delivered twice",
                               explanation: "viewWillAppear while already appearing or visible, or viewDidAppear while already visible: usually a container forwarding appearance by hand on top of UIKit's automatic forwarding. Not flagged: (1.2) an event after lost events of the instance (they may have completed the transition; the state resumes from what the event implies); viewWillAppear after viewWillDisappear (a cancelled interactive pop or sheet swipe: disappearing to appearing is legal).",
                               help: "Remove the manual beginAppearanceTransition/viewWillAppear calls, or set shouldAutomaticallyForwardAppearanceMethods to false in the container that makes them.",
                               keyParts: "class, the offending event, the state it met (`after-deinit` for an event after deinit; LC203: `viewWillAppear|appearing`)",
                               keyExample: "LC202|com.example.mail|PromoCardViewController|viewWillAppear|visible")

    package static func matches(_ a: LifecycleAnomaly) -> Bool {
        guard a.kind == .transition else { return false }
        switch (a.event, a.state) {
        case (.viewWillAppear, .appearing), (.viewWillAppear, .visible), (.viewDidAppear, .visible): return true
        default: return false
        }
    }

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.anomalies.compactMap { a in
            guard matches(a) else { return nil }
            return Finding(info, model, a.instance, t: a.t,
                           "\(MessageText.cls(model, a.instance)) got \(a.event.rawValue) while already \(a.state.rawValue)",
                           evidence: a.evidence, key: [a.event.rawValue, a.state.rawValue],
                           detail: ["event": .text(a.event.rawValue), "state": .text(a.state.rawValue)])
        }
    }
}

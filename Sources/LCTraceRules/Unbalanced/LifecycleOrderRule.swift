import LCTraceModel

/// LC205 lifecycle-order (warning).
///
/// Finds: every other break of the lifecycle order: a second `viewDidLoad`, `viewDidAppear`
/// while hidden or disappearing, `viewIsAppearing` outside an appearance or twice in one,
/// `viewDidDisappear` while appearing, a second `viewWillDisappear`, and any event for an id
/// after its `deinit` with no new `init` (reported once per instance).
///
/// Does not flag: what LC201, LC202 and LC204 report; layout callbacks in any order (UIKit
/// does not promise one); a cancelled disappearance (disappearing → appearing is legal).
enum LifecycleOrderRule: Rule {
    package static let info = RuleInfo(id: "LC205", name: "lifecycle-order", severity: .warning, family: .unbalanced,
                               summary: "lifecycle callback out of order",
                               explanation: "Any other break of the lifecycle order: a second viewDidLoad, viewDidAppear while hidden or disappearing, viewIsAppearing outside an appearance or twice in one, viewDidDisappear while appearing, a second viewWillDisappear, and any event for an id after its deinit with no new init (reported once per instance). Not flagged: (1.2) an appearance event after lost events of the instance; what LC201, LC202 and LC204 report; layout callbacks in any order (UIKit does not promise one); a cancelled disappearance.",
                               help: "Look for lifecycle methods called by hand (loadView/viewDidLoad, appearance methods) or a controller used after it was released.",
                               keyParts: "class, the offending event, the state it met (`after-deinit` for an event after deinit; LC203: `viewWillAppear|appearing`)")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.anomalies.compactMap { a in
            let what: String
            switch a.kind {
            case .secondViewDidLoad: what = "a second viewDidLoad"
            case .secondViewIsAppearing: what = "a second viewIsAppearing in one appearance"
            case .afterDeinit:
                let count = model.afterEndCount(of: a.instance) ?? 1
                what = "\(a.event.rawValue) after its deinit" + (count > 1 ? " (and \(count - 1) more events)" : "")
            case .transition:
                if a.event == .deinit || DoubleAppearRule.matches(a) || DisappearWithoutAppearRule.matches(a) { return nil }
                what = "\(a.event.rawValue) while \(a.state.rawValue)"
            }
            // The state it met; an event after deinit met no state at all.
            let state = a.kind == .afterDeinit ? "after-deinit" : a.state.rawValue
            return Finding(info, model, a.instance, t: a.t, "\(MessageText.cls(model, a.instance)) got \(what)",
                           evidence: a.evidence, key: [a.event.rawValue, state], detail: ["event": .text(a.event.rawValue)])
        }
    }
}

import LCTraceModel

/// LC201 deinit-while-visible (error).
///
/// Finds: `deinit` while the instance is appearing, visible or disappearing: it was
/// deallocated without the disappearance UIKit owes every shown controller.
///
/// Does not flag: an instance still visible when the session ends (no deinit), app
/// backgrounding (which sends no disappear callbacks), an id reused with no deinit recorded;
/// (1.1) a controller a dismissal took along up its presentation chain (UIKit removes the
/// intermediate ones without callbacks, so they still look visible when they deinit).
enum DeinitWhileVisibleRule: Rule {
    package static let info = RuleInfo(id: "LC201", name: "deinit-while-visible", severity: .error, family: .unbalanced,
                               summary: "deallocated while on screen",
                               explanation: "deinit while the instance was appearing, visible or disappearing: it was deallocated without the disappearance UIKit owes every shown controller. Not flagged: (1.2) the controllers contained by the ones a dismissal took along (they are hidden from the dismissal's end) and those of a replaced window root; a controller still visible when the session ends (no deinit); an id reused with no deinit recorded; backgrounding; a controller that a dismissal took along up its presentation chain (UIKit removes the intermediate ones without callbacks, so they still look visible when they deinit).",
                               help: "Find who drops the last reference to a controller still on screen (a container that replaces its child without the containment calls, a view kept while its controller is released).",
                               keyParts: "class, the offending event, the state it met (`after-deinit` for an event after deinit; LC203: `viewWillAppear|appearing`)")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.anomalies.compactMap { a in
            guard a.kind == .transition, a.event == .deinit else { return nil }
            return Finding(info, model, a.instance, t: a.t,
                           "\(MessageText.cls(model, a.instance)) deallocated while \(a.state.rawValue)",
                           evidence: a.evidence, key: [a.event.rawValue, a.state.rawValue], detail: ["state": .text(a.state.rawValue)])
        }
    }
}

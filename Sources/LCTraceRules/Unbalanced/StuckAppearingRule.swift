import LCTraceFormat
import LCTraceModel

/// LC203 stuck-appearing (warning).
///
/// Finds: a `viewWillAppear` never completed (`viewDidAppear`) nor cancelled
/// (`viewWillDisappear`): the instance is still appearing when the session ends, and the
/// session went on for at least 2 s of foreground time past it.
///
/// Does not flag: sessions that end within 2 s of the viewWillAppear; time spent in the
/// background (no callbacks arrive there); appearances that did complete, however late
/// (those are LC401's business).
enum StuckAppearingRule: Rule {
    package static let info = RuleInfo(id: "LC203", name: "stuck-appearing", severity: .warning, family: .unbalanced,
                               summary: "viewWillAppear never completed nor cancelled",
                               explanation: "A viewWillAppear never completed (viewDidAppear) nor cancelled (viewWillDisappear): the instance was still appearing when the session ended, and the session went on for at least 2 s of foreground time past it. Not flagged: (1.2) an appearance with lost events after it (its completion may be among them); a session that ends within 2 s of the viewWillAppear; background time (no callbacks arrive there); an appearance that did complete, however late (LC401).",
                               help: "Look for a transition that never finishes: a custom animator that never calls completeTransition, or a container that begins an appearance transition and never ends it.",
                               keyParts: "class, the offending event, the state it met (`after-deinit` for an event after deinit; LC203: `viewWillAppear|appearing`)")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.cycles.compactMap { c in
            guard c.ending == .sessionEnd, c.didSeq == nil, c.willDisappearSeq == nil, !c.acrossHole else { return nil }
            let waited = model.foregroundTime(from: c.willT, to: model.endT)
            guard waited >= settings.stuckAppearing else { return nil }
            return Finding(info, model, c.instance, t: c.willT,
                           "\(MessageText.cls(model, c.instance)) still appearing \(MessageText.foreground(waited, elapsed: model.endT - c.willT)) after viewWillAppear when the session ended",
                           evidence: [c.willSeq] + (c.isSeq.map { [$0] } ?? []),
                           key: [EventKind.viewWillAppear.rawValue, AppearanceState.appearing.rawValue],
                           detail: ["waited_ms": .ms(waited)])
        }
    }
}

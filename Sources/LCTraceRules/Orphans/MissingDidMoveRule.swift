import LCTraceModel

/// LC102 missing-did-move (warning).
///
/// Finds: `addChild` to P with no `didMoveToParent(P)` before the child is removed,
/// deallocated, or the session ends. UIKit calls `willMove(toParent:)` inside addChild, but
/// `didMove(toParent:)` is the container's duty.
///
/// Does not flag: sessions that end within 1 s of the addChild (a transition still running);
/// a duplicate addChild to the same parent (UIKit ignores it).
enum MissingDidMoveRule: Rule {
    package static let info = RuleInfo(id: "LC102", name: "missing-did-move", severity: .warning, family: .orphans,
                               summary: "addChild without didMove(toParent:)",
                               explanation: "addChild to a parent with no didMove(toParent:) before the child was removed, deallocated or the session ended: UIKit calls willMove(toParent:) inside addChild, didMove is the container's duty. Not flagged: (1.2) an edge with lost events after its addChild (the didMove may be among them); the 1 s counts foreground time, so a push frozen by suspension is not late; a session that ends within 1 s of the addChild (a transition still running); a repeated addChild to the same parent (UIKit ignores it).",
                               help: "Call child.didMove(toParent: self) once the child's view is in place.",
                               keyParts: "class, parent class")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.edges.compactMap { edge in
            guard edge.didMoveSeq == nil, !edge.acrossHole else { return nil }
            let when: String
            let t: Int64
            var evidence = [edge.addSeq]
            if let removeSeq = edge.removeSeq, let removeT = edge.removeT {
                when = "before its removal"
                t = removeT
                evidence.append(removeSeq)
            } else if let endSeq = edge.childEndSeq, let endT = edge.childEndT {
                when = "before it was deallocated"
                t = endT
                evidence.append(endSeq)
            } else {
                // (1.2) The slack counts foreground time: a push frozen by suspension is not late.
                if model.foregroundTime(from: edge.addT, to: model.endT) < settings.didMoveEndSlack { return nil }
                when = "by the end of the session"
                t = edge.addT
            }
            return Finding(info, model, edge.child, t: t,
                           "\(MessageText.cls(model, edge.child)) added to \(parentName(model, edge)) with no didMove(toParent:) \(when)",
                           evidence: evidence, key: [parentClass(model, edge)], detail: ["parent": .text(edge.parent)])
        }
    }

    /// The parent's class, for the identity key (nil when the parent was never seen as an instance).
    static func parentClass(_ model: SessionModel, _ edge: ContainmentEdge) -> String? {
        edge.parentSince.flatMap { model.cls(of: InstanceKey(vc: edge.parent, since: $0)) }
    }

    static func parentName(_ model: SessionModel, _ edge: ContainmentEdge) -> String {
        if let since = edge.parentSince, let cls = model.cls(of: InstanceKey(vc: edge.parent, since: since)) {
            return "\(cls) (\(edge.parent))"
        }
        return edge.parent
    }
}

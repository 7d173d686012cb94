import LCTraceModel

/// LC103 missing-will-move (warning).
///
/// Finds: `removeFromParent` with no `willMoveToParent(nil)` since the child was added.
/// removeFromParent calls `didMove(toParent: nil)` itself; `willMove(toParent: nil)` before it
/// is the container's duty, and without it the child never learns it is leaving.
///
/// Does not flag: an implicit removal by addChild to another parent (UIKit does it properly).
enum MissingWillMoveRule: Rule {
    package static let info = RuleInfo(id: "LC103", name: "missing-will-move", severity: .warning, family: .orphans,
                               summary: "removeFromParent without willMove(toParent: nil)",
                               explanation: "removeFromParent with no willMove(toParent: nil) since the child was added: removeFromParent calls didMove(toParent: nil) itself, but willMove before it is the container's duty, and without it the child never learns it is leaving. Not flagged: (1.2) a removal with lost events since the addChild (the willMove may be among them); the implicit removal that an addChild to another parent performs (UIKit does that one properly).",
                               help: "Call child.willMove(toParent: nil) before removing the child's view and calling removeFromParent().",
                               keyParts: "class, parent class",
                               keyExample: "LC103|com.example.news|BannerViewController|InboxViewController")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.edges.compactMap { edge in
            guard let removeSeq = edge.removeSeq, edge.willRemoveSeq == nil, !edge.acrossHole else { return nil }
            return Finding(info, model, edge.child, t: edge.removeT,
                           "\(MessageText.cls(model, edge.child)) removed from \(MissingDidMoveRule.parentName(model, edge)) with no willMove(toParent: nil) first",
                           evidence: [edge.addSeq, removeSeq], key: [MissingDidMoveRule.parentClass(model, edge)],
                           detail: ["parent": .text(edge.parent)])
        }
    }
}

import LCTraceModel

/// LC104 view-left-behind (warning).
///
/// Finds: a child removed with `removeFromParent` while its view is still attached in the old
/// parent's view hierarchy, and the view is never detached afterwards (the controller is
/// gone from the containment tree, its view stays on screen).
///
/// Does not flag: a view detached after the removal (some containers remove the view just
/// after); a child re-added to the same parent while its view was still there.
enum ViewLeftBehindRule: Rule {
    package static let info = RuleInfo(id: "LC104", name: "view-left-behind", severity: .warning, family: .orphans,
                               summary: "child removed but its view left in the parent's hierarchy",
                               explanation: "A child was removed with removeFromParent while its view stayed attached in the old parent's hierarchy, and it was never detached afterwards: the controller left the containment tree while its view stays on screen. Not flagged: (1.2) a removal with lost events after it while the view stayed (the viewDetached may be among them); a view detached after the removal (some containers remove the view just after); a child re-added to the same parent while its view was still there.",
                               help: "Remove the child's view (removeFromSuperview) between willMove(toParent: nil) and removeFromParent().",
                               keyParts: "class, host class",
                               keyExample: "LC104|com.example.news|BannerViewController|InboxViewController")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.edges.compactMap { edge in
            guard let a = edge.attachmentAtRemoval, let removeSeq = edge.removeSeq, edge.readdSeq == nil,
                  !edge.acrossHole else { return nil }
            let attachment = model.attachments[a]
            guard attachment.detachSeq == nil else { return nil }
            return Finding(info, model, edge.child, t: edge.removeT,
                           "\(MessageText.cls(model, edge.child)) removed from \(MissingDidMoveRule.parentName(model, edge)) but its view stays in \(attachment.hostClass ?? attachment.host ?? "the parent")",
                           evidence: [attachment.attachSeq, removeSeq], key: [attachment.hostClass], detail: ["parent": .text(edge.parent)])
        }
    }
}

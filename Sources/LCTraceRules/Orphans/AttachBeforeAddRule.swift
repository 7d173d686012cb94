import LCTraceModel

/// LC105 attach-before-add (info).
///
/// Finds: a view attached into host H first, with the `addChild` to H following while it is
/// still attached: the wrong order (addChild, addSubview, didMove is the protocol), but the
/// controller does end up a proper child, so it is not an orphan.
///
/// Does not flag: attachments after addChild (the right order); views that never become the
/// host's child (that is LC101).
enum AttachBeforeAddRule: Rule {
    package static let info = RuleInfo(id: "LC105", name: "attach-before-add", severity: .info, family: .orphans,
                               summary: "view attached before addChild",
                               explanation: "A view was attached into its host first and the addChild to that host followed while it was attached: the wrong order (addChild, addSubview, didMove is the protocol), though the controller does end up a proper child, so it is not an orphan. Not flagged: (1.2) an attachment with lost events before or during it; an attachment after the addChild (the right order); a view that never becomes the host's child (LC101).",
                               help: "Call addChild(_:) before adding the child's view to the hierarchy.",
                               keyParts: "class, host class")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.attachments.compactMap { a in
            guard let host = a.host, !a.childOfHostAtAttach, let added = a.becameChildSeq, !a.acrossHole else { return nil }
            return Finding(info, model, a.instance, t: a.attachT,
                           "\(MessageText.cls(model, a.instance))'s view attached into \(a.hostClass ?? host) before addChild (seq \(a.attachSeq) then \(added))",
                           evidence: [a.attachSeq, added], key: [a.hostClass], detail: ["host": .text(host)])
        }
    }
}

import LCTraceModel

/// LC101 orphan-view (error).
///
/// Finds: a controller's root view attached (`viewAttached`) into host H while the controller
/// is not H's child (no addChild to H, or to a controller whose hierarchy holds H, in force),
/// and it does not become H's child while attached. Such a controller gets no appearance or
/// trait callbacks from UIKit.
///
/// Does not flag: attachments into a window or transition container (`host: null`, where
/// presented controllers live); (1.1) a controller presented and not yet dismissed, whatever
/// `host` says (an `.overCurrentContext` presentation sits inside the context controller's
/// view); children of navigation, tab and split controllers (UIKit adds them with a recorded
/// addChild); a view attached first and adopted by addChild while still attached (that is
/// LC105, info); (1.1) in a session with lost events, an instance whose `init` was not
/// recorded (its containment history is incomplete; see `RuleCatalog.settle`).
enum OrphanViewRule: Rule {
    package static let info = RuleInfo(id: "LC101", name: "orphan-view", severity: .error, family: .orphans,
                               summary: "view attached into a controller that is not its parent",
                               explanation: "A controller's root view attached (viewAttached) into host H while the controller is not H's child (no addChild to H, or to a controller whose hierarchy holds H, still in force), and it does not become H's child while attached: such an orphan gets no appearance or trait callbacks from UIKit. Not flagged: (1.2) an attachment with lost events before it (since the controller's previous event) or during it: the addChild may be among them; a view attached into a window or a transition container (host null, where presented controllers live); a controller that a present names as presented and that is not yet dismissed, whatever host its view reports (an over-current-context presentation puts it inside the context controller's view); the children of navigation, tab and split controllers (UIKit adds them with a recorded addChild); a view attached first and adopted by addChild while still attached (LC105).",
                               help: "Call addChild(_:) on the host before adding the child's view, then didMove(toParent:) after it; or present the controller instead of adding its view.",
                               keyParts: "class, host class",
                               keyExample: "LC101|com.example.shop|MiniPlayerViewController|ProductListViewController")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.attachments.compactMap { a in
            guard let host = a.host, !a.childOfHostAtAttach, a.becameChildSeq == nil, !a.presented,
                  !a.acrossHole else { return nil }
            let hostName = a.hostClass.map { "\($0) (\(host))" } ?? host
            let end = a.detachSeq.map { " until seq \($0)" } ?? a.endSeq.map { " until its deinit at seq \($0)" } ?? ""
            let evidence = [a.attachSeq] + [a.detachSeq ?? a.endSeq].compactMap { $0 }
            // (1.2) A child of another container is not "without addChild": it is in the wrong place.
            let why = a.parentAtAttach.map { parent in
                "while it is the child of \(a.parentClassAtAttach ?? parent), not of \(a.hostClass ?? host): it gets no appearance callbacks from it"
            } ?? "without addChild: it gets no appearance callbacks"
            return Finding(info, model, a.instance, t: a.attachT,
                           "\(MessageText.cls(model, a.instance))'s view sits in \(hostName)\(end) \(why)",
                           evidence: evidence, key: [a.hostClass], detail: ["host": .text(host)])
        }
    }
}

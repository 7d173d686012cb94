import LCTraceModel

/// LC301 leaked-controller (error).
///
/// Finds: a controller released (rules.md: `viewDidDisappear` with isMovingFromParent or
/// isBeingDismissed, `removeFromParent`, the release of a controller that contained it, or
/// (1.1) the end of a dismissal that took it along up a presentation chain, `how` = `chain`)
/// with no `deinit` within the grace period (default 5 s, `--grace`) of foreground time, in a
/// session that went on past release + grace, and never shown again. A deinit that comes
/// after the grace period is reported too (held too long), with the delay.
///
/// Does not flag: a deinit inside the grace period; a released controller shown again (a
/// `viewWillAppear` cancels the release: a kept, reused controller) or (1.1) adopted again
/// (an `addChild` after its removal, a `present` naming it); a cancelled interactive pop or
/// sheet swipe (no release happens); background time (the grace clock only runs in the
/// foreground; a session that ends in the background inside the grace is LC302); a
/// controller whose id was reused (it must have been freed); sessions that end inside the
/// grace period (LC302).
enum LeakedControllerRule: Rule {
    package static let info = RuleInfo(id: "LC301", name: "leaked-controller", severity: .error, family: .leaks,
                               summary: "released controller not deallocated",
                               explanation: "A released controller (popped, dismissed, removed from its parent, taken along by a released container or by a dismissal further down its presentation chain, including what a controller inside the dismissed one presented (1.2), or replaced as a window's root (1.2)) with no deinit within the grace period (default 5 s of foreground time, --grace; (1.2) the app is in the foreground while any of its scenes is), in a session that went on past release + grace, and never shown again. A deinit that comes after the grace period is reported too (held too long), with the delay. detail.how says how it left: pop, dismiss, removeFromParent, ancestor (its container was released) or chain (a dismissal further down its presentation chain took it along); held_by names the container or the dismissed controller. Not flagged: (1.2) a controller UIKit keeps by design: a UISearchController (by class, or by the uikit class of its init) and what it contains, which navigationItem.searchController keeps and presents again; a deinit inside the grace period; a released controller shown again (a kept, reused controller) or adopted again (an addChild after its removal, a present naming it); a cancelled interactive pop or sheet swipe (no release happens); background time; a controller whose id was reused (it must have been freed); a session that ends inside the grace period (LC302).",
                               help: "Find what still holds the controller: a closure capturing self strongly, a delegate or notification observer that is not weak, a timer, or a cache. Xcode's memory graph debugger shows the path.",
                               report: ReportNeeds(worstFirstBy: "retained_ms", worstFirstTitle: "longest retained first",
                                                   groupBy: "how", groupByTitle: "left via", heldByKeys: ["held_by", "held_by_since"]),
                               keyParts: "class, how it left (`pop`, `dismiss`, `removeFromParent`, `ancestor`, `chain`, (1.2) `root` for a replaced window root), and for `ancestor` / `chain` the class of the controller whose release took it along",
                               keyExample: "LC301|com.example.shop|LoginViewController|ancestor|UINavigationController")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.instances.compactMap { x in
            guard let release = x.release, !x.keptByUIKit else { return nil }
            let delay: Int64
            var evidence: [Int64] = []
            if let s = x.initSeq { evidence.append(s) }
            if let call = release.callSeq, call != release.seq { evidence.append(call) }
            evidence.append(release.seq)
            switch x.end {
            case .reused?:
                return nil
            case .deinit?:
                delay = model.foregroundTime(from: release.t, to: x.endT ?? release.t)
                guard delay > settings.leakGrace else { return nil }
                evidence.append(x.endSeq!)
            case nil:
                delay = model.foregroundTime(from: release.t, to: model.endT)
                guard delay > settings.leakGrace else { return nil }
            }
            let elapsed = (x.end == .deinit ? x.endT ?? release.t : model.endT) - release.t
            let time = MessageText.foreground(delay, elapsed: elapsed)
            let what = x.end == .deinit ? "deallocated only \(time) after" : "not deallocated \(time) after"
            return Finding(info, model, x.key, t: release.t,
                           "\(x.cls ?? x.key.vc) \(what) \(LeakedControllerRule.describe(release, model)) (grace \(MessageText.seconds(settings.leakGrace)))",
                           evidence: evidence, key: LeakedControllerRule.key(release, model),
                           detail: LeakedControllerRule.detail(release, delay: delay))
        }
    }

    package static func describe(_ release: Release, _ model: SessionModel) -> String {
        switch release.how {
        case .pop: return "its pop"
        case .dismiss: return "its dismissal"
        case .removeFromParent: return "removeFromParent"
        case .ancestor:
            let parent = release.ancestor.map { model.cls(of: $0) ?? $0.vc } ?? "its container"
            return "its container \(parent) was released"
        case .chain:
            let root = release.ancestor.map { model.cls(of: $0) ?? $0.vc } ?? "a controller below it"
            return "the dismissal of \(root) took it along"
        case .root:
            return "another window root replaced it"
        }
    }

    package static func detail(_ release: Release, delay: Int64) -> [String: DetailValue] {
        var detail: [String: DetailValue] = ["how": .text(release.how.rawValue), "release_seq": .int(release.seq),
                                             "retained_ms": .int(delay / 1_000_000)]
        if let a = release.ancestor { detail["held_by"] = .text(a.vc); detail["held_by_since"] = .int(a.since) }
        return detail
    }

    /// The identity key after the class: how it left and, when a release took it along, the
    /// class of the controller whose release did (rules.md 1.1).
    package static func key(_ release: Release, _ model: SessionModel) -> [String?] {
        switch release.how {
        case .ancestor, .chain: return [release.how.rawValue, release.ancestor.flatMap { model.cls(of: $0) }]
        default: return [release.how.rawValue]
        }
    }
}

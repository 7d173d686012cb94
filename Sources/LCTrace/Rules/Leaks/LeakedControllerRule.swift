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
    static let info = RuleInfo(id: "LC301", name: "leaked-controller", severity: .error, family: .leaks,
                               summary: "released controller not deallocated")

    static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.instances.compactMap { x in
            guard let release = x.release else { return nil }
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
            let what = x.end == .deinit ? "deallocated only \(Say.ms(delay)) after" : "not deallocated \(Say.ms(delay)) after"
            return Finding(info, model, x.key, t: release.t,
                           "\(x.cls ?? x.key.vc) \(what) \(LeakedControllerRule.describe(release, model)) (grace \(Say.seconds(settings.leakGrace)))",
                           evidence: evidence, detail: LeakedControllerRule.detail(release, delay: delay))
        }
    }

    static func describe(_ release: Release, _ model: SessionModel) -> String {
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
        }
    }

    static func detail(_ release: Release, delay: Int64) -> [String: String] {
        var detail = ["how": release.how.rawValue, "release_seq": String(release.seq),
                      "retained_ms": String(delay / 1_000_000)]
        if let a = release.ancestor { detail["held_by"] = a.vc; detail["held_by_since"] = String(a.since) }
        return detail
    }
}

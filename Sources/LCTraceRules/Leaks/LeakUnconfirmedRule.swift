import LCTraceModel

/// LC302 leak-unconfirmed (info).
///
/// Finds: a released controller with no `deinit` when the session ended before release +
/// grace of foreground time: it may have been on its way out, or leaked; the trace cannot
/// tell. (1.1) That includes a session that ended in the background (suspended or killed
/// there) before the grace had run in the foreground: a suspended app runs no deinit.
///
/// Does not flag: anything LC301 reports; controllers shown again after their release.
enum LeakUnconfirmedRule: Rule {
    package static let info = RuleInfo(id: "LC302", name: "leak-unconfirmed", severity: .info, family: .leaks,
                               summary: "released, session ended inside the grace period",
                               explanation: "A released controller with no deinit when the session ended before release + grace of foreground time: it may have been on its way out, or leaked; the trace cannot tell. That includes a session that ended in the background (suspended or killed there) before the grace had run in the foreground. Not flagged: (1.2) a controller UIKit keeps by design (a UISearchController and its results controller); anything LC301 reports; a controller shown again after its release.",
                               help: "Usually nothing to do; if the same identity shows up often, or as LC301 in longer sessions, treat it as a leak.",
                               report: ReportNeeds(worstFirstBy: "retained_ms", worstFirstTitle: "longest retained first"),
                               keyParts: "class, how it left (`pop`, `dismiss`, `removeFromParent`, `ancestor`, `chain`, (1.2) `root` for a replaced window root), and for `ancestor` / `chain` the class of the controller whose release took it along")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.instances.compactMap { x in
            guard let release = x.release, x.end == nil, !x.keptByUIKit else { return nil }
            let waited = model.foregroundTime(from: release.t, to: model.endT)
            guard waited <= settings.leakGrace else { return nil }
            let elapsed = model.endT - release.t
            // (1.2) Elapsed time as elapsed, and the foreground part as such.
            let when = elapsed == waited ? MessageText.ms(elapsed)
                : "\(MessageText.ms(elapsed)) (\(MessageText.ms(waited)) of it in the foreground)"
            return Finding(info, model, x.key, t: release.t,
                           "\(x.cls ?? x.key.vc) not deallocated when the session ended \(when) after \(LeakedControllerRule.describe(release, model))",
                           evidence: (x.initSeq.map { [$0] } ?? []) + [release.seq],
                           key: LeakedControllerRule.key(release, model),
                           detail: LeakedControllerRule.detail(release, delay: waited))
        }
    }
}

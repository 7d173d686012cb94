import LCTraceModel

/// LC902 unknown-instance (warning).
///
/// Finds: events for a controller id that had no `init` in the session (the recorder started
/// late, or lost it). The events are kept and modelled from the first one.
///
/// Does not flag: ids only named as a parent, host or presenter; events after a deinit (LC205).
enum UnknownInstanceRule: Rule {
    package static let info = RuleInfo(id: "LC902", name: "unknown-instance", severity: .warning, family: .quality,
                               summary: "events for an id with no init",
                               explanation: "Events for a controller id that had no init in the session (the recorder started late, or lost it); the events are kept and modelled from the first one. Not flagged: ids only named as a parent, host or presenter; events after a deinit (LC205).",
                               help: "Make sure the recorder hooks init of every controller class before the first one is created.",
                               report: ReportNeeds(sourcePlace: .none),
                               keyParts: "class, or `?` when none is known",
                               keyExample: "LC902|com.example.shop|?")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.instances.compactMap { x in
            guard x.initSeq == nil else { return nil }
            return Finding(info, model, x.key, t: x.firstT,
                           "events for \(x.key.vc)\(x.cls.map { " (\($0))" } ?? "") with no init, first \(x.firstEventName ?? "event") at seq \(x.key.since)",
                           evidence: x.unknownEventSeqs)
        }
    }
}

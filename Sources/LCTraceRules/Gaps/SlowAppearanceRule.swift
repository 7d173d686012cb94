import LCTraceModel

/// LC401 slow-appearance (warning).
///
/// Finds: a completed appearance whose gap viewIsAppearing → viewDidAppear exceeds the
/// threshold: 1000 ms when animated, 250 ms when not (`--gap-threshold`). The gap is the
/// transition after the view was laid out; a long one is main-thread work or a stalled
/// animation. The viewWillAppear → viewIsAppearing time is reported beside it.
///
/// Does not flag: appearances inside an interactive push/pop or (1.1) an interactive
/// `present`/`dismiss` still in progress (the finger decides how long they take; the
/// transition ends when a controller it moves completes or cancels its appearance);
/// appearances during which the app went to the background; cancelled appearances (no
/// viewDidAppear); appearances without viewIsAppearing (LC402).
enum SlowAppearanceRule: Rule {
    package static let info = RuleInfo(id: "LC401", name: "slow-appearance", severity: .warning, family: .gaps,
                               summary: "slow viewIsAppearing → viewDidAppear",
                               explanation: "A completed appearance whose viewIsAppearing → viewDidAppear gap exceeds the threshold: 1000 ms when animated, 250 ms when not (--gap-threshold animated=1000ms,plain=250ms). The gap is the transition after the view was laid out; a long one is main-thread work or a stalled animation. Not flagged: an appearance of a controller an interactive transition in progress moves (the finger decides how long it takes): (1.2) the pushed or popped, presented or dismissed controller, the one it reveals or covers, and what they contain, or one whose viewWillAppear (or, for the controller it covers, viewWillDisappear) carries interactive: true, with or without push/pop events; other appearances at the same time are judged; an appearance during which the app went to the background ((1.2) every scene: one window in the background beside an active one stops nothing); a cancelled appearance (no viewDidAppear); an appearance without viewIsAppearing (LC402).",
                               help: "Move work out of viewIsAppearing/viewWillAppear and the first layout pass (data loading, image decoding) and profile the transition with Instruments.",
                               report: ReportNeeds(worstFirstBy: "gap_ms", worstFirstTitle: "slowest first"),
                               keyParts: "class, `animated` or `plain`",
                               keyExample: "LC401|com.example.shop|OrderDetailViewController|animated")

    package static func check(_ model: SessionModel, _ settings: RuleSettings) -> [Finding] {
        model.cycles.compactMap { c in
            guard c.outcome == .completed, let isT = c.isT, let isSeq = c.isSeq, let didT = c.didT, let didSeq = c.didSeq,
                  !c.interactive, !c.backgrounded else { return nil }
            let animated = c.animated ?? false
            let threshold = animated ? settings.gapAnimated : settings.gapPlain
            let gap = didT - isT
            guard gap > threshold else { return nil }
            let before = isT - c.willT
            return Finding(info, model, c.instance, t: didT,
                           "\(MessageText.cls(model, c.instance)) took \(MessageText.ms(gap)) from viewIsAppearing to viewDidAppear (\(animated ? "animated" : "not animated"), threshold \(MessageText.ms(threshold)); viewWillAppear → viewIsAppearing \(MessageText.ms(before)))",
                           evidence: [c.willSeq, isSeq, didSeq], key: [animated ? "animated" : "plain"],
                           detail: ["gap_ms": .ms(gap), "will_to_is_ms": .ms(before),
                                    "threshold_ms": .int(threshold / 1_000_000), "animated": .bool(animated)])
        }
    }
}

import LCTraceCLI
import LCTraceModel

/// Simulates one app launch and writes its trace-format-v1 lines in the callback orders UIKit
/// really delivers (shared/reference/uikit-callback-orders.md): a tab bar of navigation
/// stacks, pushes and pops (animated, interactive, cancelled), sheets and full-screen
/// modals, presented navigation stacks, tab switches, custom containers, backgrounding and
/// address reuse. Planted bugs and legitimate look-alikes are labelled as they are written,
/// so a corpus carries its own answer key.

/// One controller in the simulated app.
package final class SimVC {
    let id: String
    let cls: String
    let since: Int64
    weak var parent: SimVC?
    var children: [SimVC] = []
    var loaded = false
    var alive = true
    init(id: String, cls: String, since: Int64) { self.id = id; self.cls = cls; self.since = since }
}

/// What a session is built to contain.
package enum Plant: String, CaseIterable, Sendable {
    // bugs
    case orphanView, missingDidMove, missingWillMove, viewLeftBehind, attachBeforeAdd
    case deinitWhileVisible, doubleAppear, stuckAppearing, disappearWithoutAppear, lifecycleOrder
    case leakPop, leakDismiss, leakWithChildren, leakUnconfirmed, instanceGrowth
    case slowAppearance, missingIsAppearing
    case appDelegate, noScene, lostEvents, unknownInstance, clockBackwards
    /// (rules 1.1) A presentation chain dismissed from its bottom: the intermediate controller,
    /// which gets no callbacks, is never freed.
    case leakInChain
    // (rules 1.2) bugs
    /// An iPad session with a second window (scene-2) sent to the background while scene-1
    /// stays active: a controller popped in the active window and never freed is LC301, not
    /// LC302 (one window in the background stops no clock).
    case leakBesideBackgroundWindow
    /// At launch, `window.rootViewController` replaced (`windowRoot`) while the old root, an
    /// onboarding navigation controller with two screens, still presents a sheet; nothing of it
    /// is ever freed: LC301 for the old root (release `root`), its screens (`ancestor`) and the
    /// sheet (`chain`).
    case leakRootSwapWithSheet
    /// A presented navigation controller AN whose root child A1 presents a sheet BN (a
    /// navigation controller with root B1); AN is dismissed (BN goes with it, UIKit makes the
    /// container the presenter) and AN and A1 are freed, BN and B1 never: LC301 for both.
    case leakInChildChain
    /// While a form sheet is dragged down (an interactive dismissal in progress; let go or
    /// completed afterwards), a programmatic push in the navigation controller under it takes
    /// more than 1 s animated: LC401 (the finger drives the sheet, not the push).
    case slowPushUnderDraggedSheet
    // look-alikes that must not be flagged
    case cancelledInteractivePop, completedInteractivePop, cancelledSheetSwipe, sheetPresenter
    case backgrounding, visibleAtEnd, cachedReshow, lateDeinitInGrace, reusedAddress, quickEndAfterAdd
    // (rules 1.1) look-alikes
    /// A chain of three presentations dismissed from its bottom, all freed in time.
    case chainDismissal
    /// A child moved to another container (removeFromParent, then addChild), kept alive.
    case containerMove
    /// An `.overCurrentContext` presentation whose view sits in the presenter's view.
    case overCurrentContext
    /// A full-screen modal dismissed by an interactive swipe (sometimes let go first).
    case interactiveDismiss
    /// The session of an app extension: no scene life cycle, as extensions have none.
    case appExtension
    // (rules 1.2) look-alikes
    /// A controller freed 2–4 s after its pop in the active window while an iPad's second
    /// window is in the background: in time (the clock runs while any scene is in the foreground).
    case deinitInGraceBesideBackgroundWindow
    /// A cancelled search: a `UISearchController` (or a subclass with `"uikit":"UISearchController"`
    /// on its init) with a results controller as its child, presented and dismissed, once or
    /// twice, and kept (by `navigationItem.searchController`) until its owner goes: never a leak.
    case cancelledSearch
    /// At launch, an onboarding root (a navigation controller, sometimes with a sheet open)
    /// replaced by `windowRoot` and freed right after, all of it: no LC201 for what was visible
    /// (no disappear callbacks come), no LC301.
    case rootSwapFreed
    /// A push whose end is lost (a seq hole over B's viewIsAppearing … viewDidAppear …
    /// didMove, A's viewDetached), then B popped and freed: no LC202–LC205, LC101–LC105 (LC901
    /// for the session, as for every hole).
    case pushAcrossLostEvents
    /// A back swipe held 3–5 s recorded without push/pop events, known only from
    /// `"interactive":true` on the popped controller's viewWillDisappear and/or the revealed
    /// one's viewWillAppear: the revealed controller and its child are not LC401.
    case interactiveSwipeWithoutPop
}

/// The answer key of a corpus.
package struct Labels: Sendable {
    package struct Item: Sendable, Hashable {
        package var rule: String
        package var session: String
        package var vc: String?
        package var since: Int64?
        /// The scenario that planted it (nil: the session as a whole). Not in the JSON key.
        package var plant: Plant? = nil
    }
    package struct LookAlike: Sendable, Hashable {
        package var session: String
        package var vc: String
        package var since: Int64
        package var why: String
        /// The scenario that planted it (nil: the session as a whole). Not in the JSON key.
        package var plant: Plant? = nil
    }
    package var expected: [Item] = []
    /// Findings that are also right (a child held by a leaked parent).
    package var alsoAcceptable: [Item] = []
    package var mustNotFlag: [LookAlike] = []
    /// Findings expected only with `--max-live ImageCellController=10` (LC303).
    package var expectedWithMaxLive: [Item] = []
    /// Rules whose findings are scored against `expected` (the ones a default report produces).
    package var scoredRules: Set<String> = []

    package mutating func merge(_ other: Labels) {
        expected += other.expected
        alsoAcceptable += other.alsoAcceptable
        expectedWithMaxLive += other.expectedWithMaxLive
        mustNotFlag += other.mustNotFlag
        scoredRules.formUnion(other.scoredRules)
    }
}

/// Session-level settings.
package struct SessionPlan: Sendable {
    package var sid: String
    package var plants: [Plant]
    /// Ordinary scenarios (push, pop, modal, tab switch, …) around the planted ones.
    package var scenarios: Int
    package var app = "com.example.shop"
    package var appVersion = "5.2.1"
    package var build = "812"
    package var osVersion = "27.1"
    package var sdk = "27.0"
    package var device = "iPhone16,2"
    package var wall = "2026-11-02T10:15:03.120Z"
    /// A session record is repeated (new segment) about every this many events; 0: never.
    package var rotateEvery = 0
    /// End with sessionEnd (else the trace just stops, as after a crash).
    package var cleanEnd = true
    /// Written as a Codable recorder writes: nil values (`"parent":null`, `"host":null`) and
    /// false flags omitted (trace format 1.1, "Keys that are absent").
    package var omitsNil = false
    /// (`lctrace-gen --plant`) Plants performed once each after the drawn scenarios, on
    /// classes of their own (`New…`) and from a random stream of their own: a build's
    /// regression, found as new beside a build of the same seed without it, whose sessions
    /// are otherwise drawn the same.
    package var regressions: [Plant] = []
    package init(sid: String, plants: [Plant], scenarios: Int) {
        self.sid = sid; self.plants = plants; self.scenarios = scenarios
    }
}

package final class SessionSimulator {
    private var rng: SplitMix64
    private let plan: SessionPlan
    private(set) var lines: [String] = []
    /// Line indexes where a repeated session record starts a new segment.
    private(set) var segmentStarts: [Int] = [0]
    package private(set) var labels = Labels()
    private var seq: Int64 = 0
    private var t: Int64
    private var nextAddress: UInt64
    private var freed: [String] = []
    private var sinceRotation = 0
    private var droppedSeqs = Set<Int64>()
    private let scenes: Bool
    private let appDelegate: Bool

    private var tab: SimVC!
    private var navs: [SimVC] = []
    private var stacks: [[SimVC]] = []
    private var selected = 0
    private var visibleChildren: [SimVC] = []   // custom children of the top controller
    private var cached: SimVC?                   // a popped controller kept for reuse

    /// The classes scenarios pick from: a regression's (`SessionPlan.regressions`) are its own.
    private var regressionClasses = false
    private var screenPool: [String] { regressionClasses ? Self.screenClasses.map { "New" + $0 } : Self.screenClasses }
    private var childPool: [String] { regressionClasses ? Self.childClasses.map { "New" + $0 } : Self.childClasses }
    private let seed: UInt64

    static let screenClasses = ["ProductDetailViewController", "ReviewsViewController", "CheckoutViewController",
                                "ArticleViewController", "ThreadViewController", "OrderDetailViewController",
                                "ProfileViewController", "SettingsViewController"]
    static let childClasses = ["BannerViewController", "PromoCardViewController", "CarouselViewController",
                               "MiniPlayerViewController"]
    static let rootClasses = ["ProductListViewController", "FeedViewController", "InboxViewController"]

    package init(plan: SessionPlan, seed: UInt64) {
        self.plan = plan
        self.seed = seed
        rng = SplitMix64(seed: seed)
        t = Int64(rng.int(1...40)) * 1_000_000
        nextAddress = 0x6000_0300_0000 + UInt64(rng.int(0...0xfff)) * 0x10_0000
        scenes = !plan.plants.contains(.noScene) && !plan.plants.contains(.appExtension)
        appDelegate = plan.plants.contains(.appDelegate) || plan.plants.contains(.noScene)
        labels.scoredRules = ["LC101", "LC102", "LC103", "LC104", "LC105", "LC201", "LC202", "LC203", "LC204",
                              "LC205", "LC301", "LC302", "LC401", "LC402", "LC501", "LC502", "LC901", "LC902", "LC903"]
    }

    // MARK: Writing

    private func emit(_ ev: String, _ vc: SimVC? = nil, _ fields: String = "") {
        var line = "{\"v\":1,\"sid\":\"\(plan.sid)\",\"seq\":\(seq),\"t\":\(t),\"ev\":\"\(ev)\""
        if let vc { line += ",\"vc\":\"\(vc.id)\"" }
        let kept = plan.omitsNil ? Self.omittingNil(fields) : fields
        if !kept.isEmpty { line += "," + kept }
        line += "}"
        if !droppedSeqs.contains(seq) { lines.append(line) }
        seq += 1
        sinceRotation += 1
    }

    /// `fields` without the members a Codable recorder leaves out (null ids, false flags).
    static func omittingNil(_ fields: String) -> String {
        guard fields.contains(":null") || fields.contains(":false") else { return fields }
        var members: [Substring] = []
        var depth = 0, start = fields.startIndex
        for i in fields.indices {
            switch fields[i] {
            case "{", "[": depth += 1
            case "}", "]": depth -= 1
            case "," where depth == 0:
                members.append(fields[start..<i])
                start = fields.index(after: i)
            default: break
            }
        }
        members.append(fields[start...])
        return members.filter { !$0.hasSuffix(":null") && !$0.hasSuffix(":false") }.joined(separator: ",")
    }

    private func advance(_ range: ClosedRange<Int>) { t += rng.ms(range) }
    private func advanceNs(_ ns: Int64) { t += ns }

    /// The extension point of an `appExtension` session.
    static let extensionPoint = "com.apple.share-services"

    private func sessionRecord() {
        let extensionPoint = plan.plants.contains(.appExtension) ? ",\"extension\":\"\(Self.extensionPoint)\"" : ""
        emit("session", nil, "\"wall\":\"\(plan.wall)\",\"app\":\"\(plan.app)\",\"appVersion\":\"\(plan.appVersion)\",\"build\":\"\(plan.build)\",\"os\":\"iOS\",\"osVersion\":\"\(plan.osVersion)\",\"sdk\":\"\(plan.sdk)\",\"device\":\"\(plan.device)\",\"recorder\":\"lctrace-gen/1\"" + extensionPoint)
        sinceRotation = 0
    }

    /// Starts a new rotated segment (the session record again) when due, between scenarios.
    private func maybeRotate() {
        guard plan.rotateEvery > 0, sinceRotation >= plan.rotateEvery else { return }
        segmentStarts.append(lines.count)
        sessionRecord()
    }

    private func flags(animated: Bool? = nil, toParent: Bool? = nil, presented: Bool? = nil,
                       fromParent: Bool? = nil, dismissed: Bool? = nil, interactive: Bool? = nil) -> String {
        var parts: [String] = []
        if let animated { parts.append("\"animated\":\(animated)") }
        if let toParent { parts.append("\"isMovingToParent\":\(toParent)") }
        if let presented { parts.append("\"isBeingPresented\":\(presented)") }
        if let fromParent { parts.append("\"isMovingFromParent\":\(fromParent)") }
        if let dismissed { parts.append("\"isBeingDismissed\":\(dismissed)") }
        // (1.2) The transition coordinator's isInteractive, on viewWillAppear/viewWillDisappear.
        if let interactive { parts.append("\"interactive\":\(interactive)") }
        return parts.joined(separator: ",")
    }

    /// `uikit`: its nearest UIKit superclass, written on the init (trace format 1.2).
    private func newVC(_ cls: String, reuse: Bool = false, address: String? = nil, uikit: String? = nil) -> SimVC {
        let id: String
        if let address {
            id = address
            freed.removeAll { $0 == address }
        } else if reuse, let address = freed.popLast() {
            id = address
        } else {
            id = "0x" + String(nextAddress, radix: 16)
            nextAddress += 0x200
        }
        let vc = SimVC(id: id, cls: cls, since: seq)
        emit("init", vc, "\"cls\":\"\(cls)\"" + (uikit.map { ",\"uikit\":\"\($0)\"" } ?? ""))
        return vc
    }

    private func load(_ vc: SimVC) {
        guard !vc.loaded else { return }
        vc.loaded = true
        emit("loadView", vc)
        advance(0...2)
        emit("viewDidLoad", vc)
    }

    private func free(_ vc: SimVC) {
        emit("deinit", vc)
        vc.alive = false
        freed.append(vc.id)
    }

    /// The plant being performed: the labels written meanwhile are its own.
    private var currentPlant: Plant?

    private func expect(_ rule: String, _ vc: SimVC?, plant: Plant? = nil) {
        labels.expected.append(Labels.Item(rule: rule, session: plan.sid, vc: vc?.id, since: vc?.since, plant: plant ?? currentPlant))
    }

    private func acceptable(_ rule: String, _ vc: SimVC) {
        labels.alsoAcceptable.append(Labels.Item(rule: rule, session: plan.sid, vc: vc.id, since: vc.since, plant: currentPlant))
    }

    private func lookAlike(_ vc: SimVC, _ why: String, plant: Plant? = nil) {
        labels.mustNotFlag.append(Labels.LookAlike(session: plan.sid, vc: vc.id, since: vc.since, why: why, plant: plant ?? currentPlant))
    }

    private func layout(_ vc: SimVC) {
        if rng.chance(0.5) {
            emit("viewWillLayoutSubviews", vc)
            emit("viewDidLayoutSubviews", vc)
        }
    }

    // MARK: The session

    /// Runs the plan and returns the lines (rotated segments start at `segmentStarts`).
    package func run() -> [String] {
        sessionRecord()
        launch()
        var pending = plan.plants.filter { !Self.terminal.contains($0) && !Self.global.contains($0) && !Self.atLaunch.contains($0) }
        let total = max(plan.scenarios, pending.count * 2)
        for step in 0..<total {
            maybeRotate()
            advance(300...2500)
            // Spread the planted scenarios through the session.
            if !pending.isEmpty && (rng.chance(0.45) || total - step <= pending.count) {
                let plant = pending.removeFirst()
                perform(plant)
            } else {
                ordinaryScenario()
            }
        }
        for plant in pending { perform(plant) }
        if !plan.regressions.isEmpty {
            var own = SplitMix64(seed: seed ^ 0x5265_6772_6573_7369)
            swap(&rng, &own)
            regressionClasses = true
            for plant in plan.regressions {
                advance(300...2500)
                perform(plant)
            }
            regressionClasses = false
            swap(&rng, &own)
        }
        // Leaks need the session to go on past the grace period.
        advance(6000...9000)
        ordinaryScenario(safe: true)
        advance(500...1500)
        for plant in Self.terminalOrder where plan.plants.contains(plant) { perform(plant) }
        if plan.plants.contains(.visibleAtEnd), let top = stacks[selected].last {
            lookAlike(top, "still visible when the session ends", plant: .visibleAtEnd)
        }
        if plan.cleanEnd {
            advance(100...500)
            emit("sessionEnd", nil, "\"reason\":\"\(rng.pick(["terminate", "background-kill", "stopped"]))\"")
        }
        if plan.plants.contains(.lostEvents) || plan.plants.contains(.pushAcrossLostEvents) {
            expect("LC901", nil, plant: plan.plants.contains(.lostEvents) ? .lostEvents : .pushAcrossLostEvents)
        }
        if plan.plants.contains(.clockBackwards) { expect("LC903", nil, plant: .clockBackwards) }
        return lines
    }

    /// Plants that run at the very end (they need the session to stop soon after).
    static let terminalOrder: [Plant] = [.stuckAppearing, .leakUnconfirmed, .quickEndAfterAdd]
    static let terminal = Set(terminalOrder)
    /// Plants that shape the whole session rather than one scenario.
    static let global: Set<Plant> = [.appDelegate, .noScene, .visibleAtEnd, .appExtension]
    /// (1.2) Plants that run at launch, before the main tab bar becomes the window's root, in
    /// this order: each is an onboarding root that the next root replaces.
    /// Plants a regression (`SessionPlan.regressions`) may be: those of one scenario inside the
    /// session (not at its launch or end, not shaping the whole session or its device, not
    /// needing a setting such as --max-live).
    package static let regressionCandidates: [Plant] = Plant.allCases.filter {
        !terminal.contains($0) && !global.contains($0) && !atLaunch.contains($0) && !CorpusWriter.multiWindow.contains($0)
            && ![.lostEvents, .pushAcrossLostEvents, .clockBackwards, .instanceGrowth].contains($0)
    }
    static let launchOrder: [Plant] = [.rootSwapFreed, .leakRootSwapWithSheet]
    static let atLaunch = Set(launchOrder)

    private func launch() {
        advance(1...3)
        if scenes { emit("sceneWillConnect", nil, "\"scene\":\"scene-1\"") }
        if appDelegate {
            emit("appDidFinishLaunching")
            expectAppDelegateOnce()
        }
        advance(1...4)
        // (1.2) Onboarding roots shown first, each replaced by the next root.
        for plant in Self.launchOrder where plan.plants.contains(plant) { perform(plant) }
        let replaced = oldRoot
        oldRoot = nil
        navs = []
        stacks = []
        tab = newVC("MainTabBarController")
        load(tab)
        for (i, rootClass) in Self.rootClasses.enumerated() {
            let nav = newVC("UINavigationController")
            let root = newVC(rootClass)
            contain(root, in: nav, didMove: true)
            contain(nav, in: tab, didMove: true)
            navs.append(nav)
            stacks.append([root])
            if i == 0 { load(nav); load(root) }
        }
        selected = 0
        if let replaced { emitWindowRoot(tab, replacing: replaced.nav) }
        let shown = [tab!, navs[0], stacks[0][0]]
        showAsWindowRoot(shown)
        if let replaced {
            finishReplacedRoot(replaced)
        } else {
            enterForegroundAtLaunch()
        }
    }

    /// The first appearance of a window's root and what it shows (reference §1), not animated.
    private func showAsWindowRoot(_ shown: [SimVC]) {
        for vc in shown { emit("viewWillAppear", vc, flags(animated: false, toParent: false, presented: false)) }
        emit("viewAttached", shown[0], "\"host\":null")
        for (host, vc) in zip(shown, shown.dropFirst()) { emit("viewAttached", vc, "\"host\":\"\(host.id)\"") }
        advance(2...6)
        for vc in shown { emit("viewIsAppearing", vc, flags(animated: false) + ",\"bounds\":[393,852]") }
        for vc in shown { layout(vc) }
        advance(10...30)
        for vc in shown { emit("viewDidAppear", vc, flags(animated: false, toParent: false, presented: false)) }
    }

    private func enterForegroundAtLaunch() {
        if scenes {
            emit("sceneWillEnterForeground", nil, "\"scene\":\"scene-1\"")
            advance(1...3)
            emit("sceneDidBecomeActive", nil, "\"scene\":\"scene-1\"")
        }
        if appDelegate { emit("appDidBecomeActive") }
    }

    // MARK: Window roots (1.2)

    /// An onboarding root the window shows before the main tab bar: a navigation controller
    /// with its screens, and the sheet it still presents when it is replaced (or nil).
    private struct OnboardingRoot {
        let nav: SimVC
        let screens: [SimVC]
        let sheet: SimVC?
        let leaks: Bool
    }
    /// The window's root while it is an onboarding root (at launch).
    private var oldRoot: OnboardingRoot?

    /// `window.rootViewController = new` (trace format 1.2): `old` is the root it replaces.
    private func emitWindowRoot(_ new: SimVC, replacing old: SimVC?) {
        var fields = old.map { "\"old\":\"\($0.id)\"" } ?? ""
        if scenes { fields += (fields.isEmpty ? "" : ",") + "\"scene\":\"scene-1\"" }
        emit("windowRoot", new, fields)
    }

    /// An onboarding flow becomes the window's root (replacing the one before, if any): a
    /// navigation controller with a first screen, then a second screen pushed and, for the
    /// leak always, otherwise half the time, a sheet presented by the navigation controller
    /// or its top screen, still open when the next root replaces it.
    private func onboardingRoot(leaks: Bool) {
        let previous = oldRoot
        let nav = newVC("UINavigationController")
        let first = newVC(previous == nil ? "WelcomeViewController" : "SignInViewController")
        contain(first, in: nav, didMove: true)
        load(nav)
        load(first)
        emitWindowRoot(nav, replacing: previous?.nav)
        navs = [nav]
        stacks = [[first]]
        selected = 0
        showAsWindowRoot([nav, first])
        if let previous { finishReplacedRoot(previous) } else { enterForegroundAtLaunch() }
        advance(1000...4000)
        let second = push(previous == nil ? "OnboardingPageViewController" : "AccountSetupViewController")
        advance(800...2500)
        var sheet: SimVC?
        if leaks || rng.chance(0.5) {
            sheet = presentModal(style: rng.pick(["pageSheet", "formSheet"]), inNavigation: false,
                                 cls: rng.pick(["TermsSheetViewController", "CountryPickerViewController"]),
                                 by: rng.chance(0.5) ? nav : second)
            advance(800...2500)
        }
        oldRoot = OnboardingRoot(nav: nav, screens: [first, second], sheet: sheet, leaks: leaks)
    }

    /// The replaced root's view leaves the window (no disappear callbacks: rules.md 1.2, its
    /// controllers are hidden from the replacement). Either nothing of it is ever freed (a
    /// sheet left open keeps it: LC301 for the root, its screens and the sheet), or all of it is
    /// freed right after.
    private func finishReplacedRoot(_ old: OnboardingRoot) {
        emit("viewDetached", old.nav, "\"host\":null")
        let all = [old.nav] + old.screens + (old.sheet.map { [$0] } ?? [])
        let plant: Plant = old.leaks ? .leakRootSwapWithSheet : .rootSwapFreed
        if old.leaks {
            expect("LC301", old.nav, plant: plant)       // release `root`
            for screen in old.screens { expect("LC301", screen, plant: plant) }   // `ancestor`
            if let sheet = old.sheet { expect("LC301", sheet, plant: plant) }    // `chain`
            return
        }
        advance(5...40)
        if let sheet = old.sheet { free(sheet) }
        deinitTree(old.nav)
        lookAlike(old.nav, "replaced window root, visible, freed right after", plant: plant)
        for vc in all.dropFirst() { lookAlike(vc, "in a replaced window root (or its sheet), freed right after", plant: plant) }
    }

    private var appDelegateLabelled = false
    private func expectAppDelegateOnce() {
        guard !appDelegateLabelled else { return }
        appDelegateLabelled = true
        if (Int(plan.sdk.split(separator: ".").first ?? "") ?? 0) >= 26 { expect("LC501", nil, plant: .appDelegate) }
        if plan.plants.contains(.noScene), (Int(plan.sdk.split(separator: ".").first ?? "") ?? 0) >= 27 { expect("LC502", nil, plant: .noScene) }
    }

    /// addChild + willMove (+ didMove), as UIKit's containers record them.
    private func contain(_ child: SimVC, in parent: SimVC, didMove: Bool) {
        emit("addChild", child, "\"parent\":\"\(parent.id)\"")
        emit("willMoveToParent", child, "\"parent\":\"\(parent.id)\"")
        if didMove { emit("didMoveToParent", child, "\"parent\":\"\(parent.id)\"") }
        child.parent = parent
        parent.children.append(child)
    }

    private var nav: SimVC { navs[selected] }
    private var top: SimVC { stacks[selected].last! }

    // MARK: Ordinary scenarios

    private func ordinaryScenario(safe: Bool = false) {
        let depth = stacks[selected].count
        let roll = rng.int(0...99)
        switch roll {
        case 0..<30 where depth < 5:
            push(rng.pick(screenPool))
        case 0..<55 where depth > 1:
            pop()
        case 55..<65:
            switchTab()
        case 65..<75 where !safe:
            let vc = presentModal(style: rng.pick(["fullScreen", "pageSheet", "formSheet"]), inNavigation: rng.chance(0.3))
            advance(800...3000)
            dismissModal(vc, leak: false)
        case 75..<85:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(500...2500)
            removeCustomChild(child)
        case 85..<92:
            emit("traitChange", top, "\"traits\":{\"h\":\"compact\",\"v\":\"regular\",\"style\":\"\(rng.pick(["dark", "light"]))\"}")
        case 92..<96:
            emit("mark", nil, "\"name\":\"qa-step-\(rng.int(1...40))\"")
        default:
            layout(top)
        }
    }

    /// Push B onto the selected stack: UIKit's order (reference §2).
    @discardableResult
    /// `coveredChildren`: children of A whose views are in A's: UIKit forwards A's disappearance to them.
    private func push(_ cls: String, animated: Bool = true, isAppearing: Bool = true, gap: Int64? = nil,
                      reuse: SimVC? = nil, interactive: Bool = false, coveredChildren: [SimVC] = []) -> SimVC {
        let a = top
        let b = reuse ?? newVC(cls, reuse: rng.chance(0.3))
        advance(1...3)
        emit("push", nav, "\"child\":\"\(b.id)\",\"animated\":\(animated),\"interactive\":\(interactive)")
        contain(b, in: nav, didMove: false)
        load(b)
        emit("viewWillDisappear", a, flags(animated: animated, fromParent: false, dismissed: false))
        for c in coveredChildren { emit("viewWillDisappear", c, flags(animated: animated, fromParent: false, dismissed: false)) }
        emit("viewWillAppear", b, flags(animated: animated, toParent: true, presented: false))
        emit("viewAttached", b, "\"host\":\"\(nav.id)\"")
        advance(2...8)
        if isAppearing { emit("viewIsAppearing", b, flags(animated: animated) + ",\"bounds\":[393,852]") }
        layout(b)
        advanceNs(gap ?? (animated ? rng.ms(330...520) : rng.ms(8...30)))
        emit("viewDidDisappear", a, flags(animated: animated, fromParent: false, dismissed: false))
        for c in coveredChildren { emit("viewDidDisappear", c, flags(animated: animated, fromParent: false, dismissed: false)) }
        emit("viewDidAppear", b, flags(animated: animated, toParent: true, presented: false))
        emit("didMoveToParent", b, "\"parent\":\"\(nav.id)\"")
        emit("viewDetached", a, "\"host\":\"\(nav.id)\"")
        stacks[selected].append(b)
        return b
    }

    /// `lateBy`: deinit that many ms after the pop (a capture released by a completion block).
    enum PopEnd { case free, leak, lateInGrace, lateBy(ClosedRange<Int>), keep }

    /// Pop B from the selected stack (reference §2); `end` says what happens to B after.
    @discardableResult
    private func pop(end: PopEnd = .free, fingerTime: Int64? = nil) -> SimVC {
        let b = stacks[selected].removeLast()
        let a = top
        let interactive = fingerTime != nil
        emit("pop", nav, "\"child\":\"\(b.id)\",\"animated\":true,\"interactive\":\(interactive)")
        emit("willMoveToParent", b, "\"parent\":null")
        emit("viewWillDisappear", b, flags(animated: true, fromParent: true, dismissed: false))
        advance(0...1)
        emit("viewWillAppear", a, flags(animated: true, toParent: false, presented: false))
        emit("viewAttached", a, "\"host\":\"\(nav.id)\"")
        advance(2...8)
        emit("viewIsAppearing", a, flags(animated: true) + ",\"bounds\":[393,852]")
        advanceNs(fingerTime ?? rng.ms(300...480))
        emit("viewDidDisappear", b, flags(animated: true, fromParent: true, dismissed: false))
        emit("viewDidAppear", a, flags(animated: true, toParent: false, presented: false))
        emit("viewDetached", b, "\"host\":\"\(nav.id)\"")
        emit("removeFromParent", b, "\"parent\":\"\(nav.id)\"")
        emit("didMoveToParent", b, "\"parent\":null")
        b.parent = nil
        nav.children.removeAll { $0 === b }
        switch end {
        case .free:
            advance(10...80)
            deinitTree(b)
        case .lateInGrace, .lateBy:
            // Deinit 1.5–3.5 s later (a capture released by a completion block): inside the grace.
            var late = 1500...3500
            if case .lateBy(let range) = end { late = range }
            let when = t + rng.ms(late)
            advance(300...900)
            emit("mark", nil, "\"name\":\"waiting\"")
            t = max(t, when)
            deinitTree(b)
        case .leak, .keep:
            break
        }
        return b
    }

    private func deinitTree(_ vc: SimVC) {
        for child in vc.children { deinitTree(child) }
        free(vc)
        // What it owned without containment (its navigationItem's search controller) goes with it.
        for owned in ownedBy.removeValue(forKey: vc.id) ?? [] where owned.alive { deinitTree(owned) }
    }

    /// Controller id → controllers it keeps without containment (a search controller).
    private var ownedBy: [String: [SimVC]] = [:]

    private func switchTab() {
        let next = (selected + 1 + rng.int(0...1)) % navs.count
        guard next != selected else { return }
        let oldNav = nav, oldTop = top
        let newNav = navs[next], newTop = stacks[next].last!
        load(newNav)
        load(newTop)
        // Reference §5: B.willAppear before A.willDisappear.
        emit("viewWillAppear", newNav, flags(animated: false, toParent: false, presented: false))
        emit("viewWillAppear", newTop, flags(animated: false, toParent: false, presented: false))
        emit("viewAttached", newNav, "\"host\":\"\(tab.id)\"")
        emit("viewAttached", newTop, "\"host\":\"\(newNav.id)\"")
        advance(1...3)
        emit("viewIsAppearing", newNav, flags(animated: false) + ",\"bounds\":[393,852]")
        emit("viewIsAppearing", newTop, flags(animated: false) + ",\"bounds\":[393,852]")
        emit("viewWillDisappear", oldNav, flags(animated: false, fromParent: false, dismissed: false))
        emit("viewWillDisappear", oldTop, flags(animated: false, fromParent: false, dismissed: false))
        advance(8...25)
        emit("viewDidDisappear", oldNav, flags(animated: false, fromParent: false, dismissed: false))
        emit("viewDidDisappear", oldTop, flags(animated: false, fromParent: false, dismissed: false))
        emit("viewDetached", oldNav, "\"host\":\"\(tab.id)\"")
        emit("viewDidAppear", newNav, flags(animated: false, toParent: false, presented: false))
        emit("viewDidAppear", newTop, flags(animated: false, toParent: false, presented: false))
        selected = next
    }

    /// Presents a modal (reference §4). Sheets give the presenter no callbacks. Full screen
    /// only from the top of the selected stack (its view is detached from the navigation view).
    private func presentModal(style: String, inNavigation: Bool, cls: String? = nil, by: SimVC? = nil) -> SimVC {
        let presenter = by ?? top
        let content = newVC(cls ?? rng.pick(["LoginViewController", "ShareViewController", "FilterSheetViewController", "ImagePreviewViewController"]))
        var presented = content
        if inNavigation {
            let modalNav = newVC("UINavigationController")
            contain(content, in: modalNav, didMove: true)
            presented = modalNav
        }
        emit("present", presenter, "\"presented\":\"\(presented.id)\",\"style\":\"\(style)\",\"animated\":true")
        load(presented)
        if inNavigation { load(content) }
        let fullScreen = style == "fullScreen"
        if fullScreen { emit("viewWillDisappear", presenter, flags(animated: true, fromParent: false, dismissed: false)) }
        let shown = inNavigation ? [presented, content] : [presented]
        for vc in shown { emit("viewWillAppear", vc, flags(animated: true, toParent: false, presented: vc === presented)) }
        emit("viewAttached", presented, "\"host\":null")
        if inNavigation { emit("viewAttached", content, "\"host\":\"\(presented.id)\"") }
        advance(2...6)
        for vc in shown { emit("viewIsAppearing", vc, flags(animated: true) + ",\"bounds\":[393,852]") }
        advance(350...520)
        for vc in shown { emit("viewDidAppear", vc, flags(animated: true, toParent: false, presented: vc === presented)) }
        if fullScreen {
            emit("viewDidDisappear", presenter, flags(animated: true, fromParent: false, dismissed: false))
            emit("viewDetached", presenter, "\"host\":\"\(nav.id)\"")
        }
        presentedStyle[presented.id] = style
        presentedBy[presented.id] = presenter
        return presented
    }

    /// X presented full screen, Y a sheet over X, Z a sheet over Y; `dismiss` of X removes all
    /// three (UIKit's dismiss(animated:) documentation): only the top one (Z) animates and gets
    /// callbacks, the presenter below X appears again. With `leak`, Y is never freed.
    private func chainDismissal(leak: Bool) {
        let x = presentModal(style: "fullScreen", inNavigation: false)
        advance(800...2000)
        let y = presentModal(style: "pageSheet", inNavigation: false, by: x)
        advance(800...2000)
        let z = presentModal(style: "formSheet", inNavigation: false, cls: "ConfirmViewController", by: y)
        advance(800...2000)
        let presenter = presentedBy[x.id]!
        emit("dismiss", x, "\"animated\":true")
        emit("viewWillDisappear", z, flags(animated: true, fromParent: false, dismissed: true))
        emit("viewWillAppear", presenter, flags(animated: true, toParent: false, presented: false))
        emit("viewAttached", presenter, "\"host\":\"\(nav.id)\"")
        advance(2...5)
        emit("viewIsAppearing", presenter, flags(animated: true) + ",\"bounds\":[393,852]")
        advance(300...450)
        emit("viewDidDisappear", z, flags(animated: true, fromParent: false, dismissed: true))
        for vc in [z, y, x] { emit("viewDetached", vc, "\"host\":null") }
        emit("viewDidAppear", presenter, flags(animated: true, toParent: false, presented: false))
        advance(10...60)
        free(z)
        if !leak { free(y) }
        free(x)
        if leak { expect("LC301", y) } else { lookAlike(y, "removed without callbacks by a dismissal below it, freed in time") }
        lookAlike(x, "dismissed at the bottom of a chain, freed in time (no disappearance callbacks)")
    }

    /// A full-screen modal dismissed by an interactive swipe: the presenter's appearance lasts
    /// as long as the finger stays down. Half the time the swipe is let go first (cancelled).
    private func interactiveDismissal() {
        let modal = presentModal(style: "fullScreen", inNavigation: false)
        let presenter = presentedBy[modal.id]!
        advance(1000...3000)
        func swipe(completes: Bool) {
            emit("dismiss", modal, "\"animated\":true,\"interactive\":true")
            emit("viewWillDisappear", modal, flags(animated: true, fromParent: false, dismissed: true))
            emit("viewWillAppear", presenter, flags(animated: true, toParent: false, presented: false))
            emit("viewAttached", presenter, "\"host\":\"\(nav.id)\"")
            advance(2...5)
            emit("viewIsAppearing", presenter, flags(animated: true) + ",\"bounds\":[393,852]")
            advance(1500...4000)  // the finger stays down
            if completes {
                emit("viewDidDisappear", modal, flags(animated: true, fromParent: false, dismissed: true))
                emit("viewDetached", modal, "\"host\":null")
                emit("viewDidAppear", presenter, flags(animated: true, toParent: false, presented: false))
            } else {
                emit("viewWillDisappear", presenter, flags(animated: true, fromParent: false, dismissed: false))
                advance(50...150)
                emit("viewDidDisappear", presenter, flags(animated: true, fromParent: false, dismissed: false))
                emit("viewDetached", presenter, "\"host\":\"\(nav.id)\"")
                emit("viewWillAppear", modal, flags(animated: true, toParent: false, presented: false))
                advance(100...300)
                emit("viewDidAppear", modal, flags(animated: true, toParent: false, presented: false))
            }
        }
        if rng.chance(0.5) {
            swipe(completes: false)
            advance(500...1500)
        }
        swipe(completes: true)
        advance(10...60)
        deinitTree(modal)
        lookAlike(presenter, "revealed by an interactive dismissal (finger time is not a slow appearance)")
        lookAlike(modal, "dismissed interactively, deallocated")
    }

    private var presentedStyle: [String: String] = [:]
    private var presentedBy: [String: SimVC] = [:]

    private func dismissModal(_ presented: SimVC, leak: Bool, leakContentOnly: Bool = false) {
        let presenter = presentedBy[presented.id]!
        let fullScreen = presentedStyle[presented.id] == "fullScreen"
        let shown = [presented] + presented.children
        emit("dismiss", presented, "\"animated\":true")
        for vc in shown { emit("viewWillDisappear", vc, flags(animated: true, fromParent: false, dismissed: vc === presented)) }
        if fullScreen {
            emit("viewWillAppear", presenter, flags(animated: true, toParent: false, presented: false))
            emit("viewAttached", presenter, "\"host\":\"\(nav.id)\"")
            advance(2...5)
            emit("viewIsAppearing", presenter, flags(animated: true) + ",\"bounds\":[393,852]")
        }
        advance(300...450)
        for vc in shown { emit("viewDidDisappear", vc, flags(animated: true, fromParent: false, dismissed: vc === presented)) }
        emit("viewDetached", presented, "\"host\":null")
        if fullScreen { emit("viewDidAppear", presenter, flags(animated: true, toParent: false, presented: false)) }
        if leak { return }
        advance(10...60)
        if leakContentOnly {
            for child in presented.children { child.alive = true }
            free(presented)
            return
        }
        deinitTree(presented)
    }

    /// A custom container adds a child while visible (reference §6).
    private func addCustomChild(_ cls: String, toParent parent: SimVC, didMove: Bool = true, attachFirst: Bool = false,
                                isAppearing: Bool = true, address: String? = nil) -> SimVC {
        let child = newVC(cls, reuse: rng.chance(0.3), address: address)
        if attachFirst {
            load(child)
            emit("viewAttached", child, "\"host\":\"\(parent.id)\"")
            advance(0...2)
            contain(child, in: parent, didMove: false)
        } else {
            contain(child, in: parent, didMove: false)
            load(child)
            emit("viewAttached", child, "\"host\":\"\(parent.id)\"")
        }
        emit("viewWillAppear", child, flags(animated: false, toParent: true, presented: false))
        advance(1...3)
        if isAppearing { emit("viewIsAppearing", child, flags(animated: false) + ",\"bounds\":[393,120]") }
        advance(3...15)
        emit("viewDidAppear", child, flags(animated: false, toParent: true, presented: false))
        if didMove { emit("didMoveToParent", child, "\"parent\":\"\(parent.id)\"") }
        return child
    }

    /// The container removes a child properly: willMove(nil), disappear, detach, removeFromParent.
    private func removeCustomChild(_ child: SimVC, willMove: Bool = true, detach: Bool = true, free freeIt: Bool = true) {
        guard let parent = child.parent else { return }
        if willMove { emit("willMoveToParent", child, "\"parent\":null") }
        emit("viewWillDisappear", child, flags(animated: false, fromParent: true, dismissed: false))
        advance(1...3)
        emit("viewDidDisappear", child, flags(animated: false, fromParent: true, dismissed: false))
        if detach { emit("viewDetached", child, "\"host\":\"\(parent.id)\"") }
        emit("removeFromParent", child, "\"parent\":\"\(parent.id)\"")
        emit("didMoveToParent", child, "\"parent\":null")
        child.parent = nil
        parent.children.removeAll { $0 === child }
        if freeIt {
            advance(5...40)
            free(child)
        }
    }

    // MARK: Scenarios of rules 1.2

    private var secondWindow: SimVC?

    /// (1.2) An iPad's second window (scene-2), connected once with a root of its own, then sent
    /// to the background (swiped into the app switcher) while scene-1 stays active; it stays
    /// there to the session's end. Its root, visible when it went, gets no disappear callbacks.
    private func secondWindowInBackground() {
        guard scenes, secondWindow == nil else { return }
        emit("sceneWillConnect", nil, "\"scene\":\"scene-2\"")
        advance(1...4)
        let root = newVC(rng.pick(["DocumentViewController", "ComposeViewController", "MapViewController"]))
        secondWindow = root
        load(root)
        emit("windowRoot", root, "\"scene\":\"scene-2\"")
        emit("viewWillAppear", root, flags(animated: false, toParent: false, presented: false))
        emit("viewAttached", root, "\"host\":null")
        advance(2...6)
        emit("viewIsAppearing", root, flags(animated: false) + ",\"bounds\":[507,1180]")
        advance(10...30)
        emit("viewDidAppear", root, flags(animated: false, toParent: false, presented: false))
        emit("sceneWillEnterForeground", nil, "\"scene\":\"scene-2\"")
        advance(1...3)
        emit("sceneDidBecomeActive", nil, "\"scene\":\"scene-2\"")
        advance(2000...8000)   // both windows side by side
        emit("sceneWillResignActive", nil, "\"scene\":\"scene-2\"")
        emit("sceneDidEnterBackground", nil, "\"scene\":\"scene-2\"")
        lookAlike(root, "root of a second window sent to the background (no disappear callbacks)")
        advance(300...1500)
    }

    /// (1.2) A search bar in the top screen's navigationItem: a `UISearchController` (or a
    /// subclass that says so with `uikit`) with its results controller as a child, presented
    /// when the user taps the bar and dismissed when the search is cancelled, once or twice.
    /// UIKit keeps both for the next search: they are freed only with the screen that owns them.
    private func cancelledSearch() {
        let owner = top
        let results = newVC(rng.pick(["SearchResultsViewController", "ProductSearchResultsController"]))
        let subclass = rng.chance(0.5)
        let search = newVC(subclass ? "ProductSearchController" : "UISearchController",
                           uikit: subclass ? "UISearchController" : nil)
        contain(results, in: search, didMove: true)
        ownedBy[owner.id, default: []].append(search)
        for round in 0..<rng.int(1...2) {
            advance(800...3000)
            emit("present", owner, "\"presented\":\"\(search.id)\",\"style\":\"custom\",\"animated\":true")
            load(search)
            load(results)
            emit("viewWillAppear", search, flags(animated: true, toParent: false, presented: true))
            emit("viewWillAppear", results, flags(animated: true, toParent: false, presented: false))
            emit("viewAttached", search, "\"host\":null")
            if round == 0 { emit("viewAttached", results, "\"host\":\"\(search.id)\"") }
            advance(2...6)
            emit("viewIsAppearing", search, flags(animated: true) + ",\"bounds\":[393,852]")
            emit("viewIsAppearing", results, flags(animated: true) + ",\"bounds\":[393,852]")
            advance(250...400)
            emit("viewDidAppear", search, flags(animated: true, toParent: false, presented: true))
            emit("viewDidAppear", results, flags(animated: true, toParent: false, presented: false))
            advance(1000...4000)   // typing, then Cancel
            emit("dismiss", search, "\"animated\":true")
            emit("viewWillDisappear", search, flags(animated: true, fromParent: false, dismissed: true))
            emit("viewWillDisappear", results, flags(animated: true, fromParent: false, dismissed: false))
            advance(250...400)
            emit("viewDidDisappear", results, flags(animated: true, fromParent: false, dismissed: false))
            emit("viewDidDisappear", search, flags(animated: true, fromParent: false, dismissed: true))
            emit("viewDetached", search, "\"host\":null")
        }
        let known = subclass ? "a UISearchController subclass known by its uikit key" : "a UISearchController"
        lookAlike(search, "\(known), dismissed (a cancelled search): UIKit keeps it for the next one")
        lookAlike(results, "results controller of \(known), dismissed: kept with it")
    }

    /// (1.2) A push whose middle the recorder lost (a file lost mid-push): one seq hole that
    /// always holds B's viewDidAppear (so no appearance is seen to complete without its
    /// viewIsAppearing), from anywhere between the push event and it (half the time from B's
    /// viewIsAppearing or later; earlier, it may take B's addChild, willMove, loads and
    /// viewWillAppear and A's viewWillDisappear) to anywhere up to A's viewDetached (B's didMove
    /// among them). B is then popped and freed: nothing to judge across the hole (A's
    /// viewWillAppear may follow its lost disappearance; B's first events may be lost).
    private func pushAcrossLostEvents() {
        let a = top
        let before = lines.count
        let b = push(rng.pick(screenPool))
        func index(_ ev: String, _ vc: SimVC) -> Int {
            lines[before...].firstIndex { $0.contains("\"ev\":\"\(ev)\",\"vc\":\"\(vc.id)\"") }!
        }
        let push = index("push", nav), isAppearing = index("viewIsAppearing", b), didAppear = index("viewDidAppear", b)
        let last = index("viewDetached", a)
        let first = rng.chance(0.5) ? rng.int(isAppearing...didAppear) : rng.int(push...didAppear)
        let hole = first...rng.int(didAppear...last)
        for line in lines[hole] {
            let digits = line.split(separator: ",").first { $0.hasPrefix("\"seq\":") }!.dropFirst(6)
            droppedSeqs.insert(Int64(digits)!)
        }
        // Its appearance event lost, and an event of its own recorded after the hole before its
        // next appearance event: A's viewDetached; B's didMove, or else the pop's willMove(nil).
        let aAfter = hole.contains(index("viewWillDisappear", a)) && !hole.contains(last)
        let bAfter = hole.contains(index("viewWillAppear", b))
        lines.removeSubrange(hole)
        lookAlike(a, "covered by a push whose middle fell in a seq hole"
                  + (aAfter ? " (its viewWillDisappear lost, its viewDetached recorded after the hole)" : ""))
        lookAlike(b, "pushed across a seq hole (lost events), popped and freed"
                  + (bAfter ? " (its viewWillAppear lost, its didMove or the pop's willMove recorded after the hole)" : ""))
        advance(800...2500)
        pop()
    }

    /// (1.2) A back swipe held 3–5 s, recorded without push/pop events: the transition is known
    /// only from `interactive: true` on B's viewWillDisappear, A's viewWillAppear or both. A has
    /// a child whose view is in A's (it disappears and appears with A).
    private func interactiveSwipeWithoutPop() {
        let a = top
        let child = addCustomChild(rng.pick(childPool), toParent: a)
        advance(300...1200)
        let b = push(rng.pick(screenPool), coveredChildren: [child])
        advance(800...2500)
        let marks = rng.int(0...2)   // 0: both, 1: B's viewWillDisappear only, 2: A's viewWillAppear only
        stacks[selected].removeLast()
        emit("willMoveToParent", b, "\"parent\":null")
        emit("viewWillDisappear", b, flags(animated: true, fromParent: true, dismissed: false, interactive: marks != 2 ? true : nil))
        advance(0...1)
        emit("viewWillAppear", a, flags(animated: true, toParent: false, presented: false, interactive: marks != 1 ? true : nil))
        emit("viewWillAppear", child, flags(animated: true, toParent: false, presented: false))
        emit("viewAttached", a, "\"host\":\"\(nav.id)\"")
        advance(2...8)
        emit("viewIsAppearing", a, flags(animated: true) + ",\"bounds\":[393,852]")
        emit("viewIsAppearing", child, flags(animated: true) + ",\"bounds\":[393,120]")
        advanceNs(rng.ms(3000...5000))   // the finger stays down
        emit("viewDidDisappear", b, flags(animated: true, fromParent: true, dismissed: false))
        emit("viewDidAppear", a, flags(animated: true, toParent: false, presented: false))
        emit("viewDidAppear", child, flags(animated: true, toParent: false, presented: false))
        emit("viewDetached", b, "\"host\":\"\(nav.id)\"")
        emit("removeFromParent", b, "\"parent\":\"\(nav.id)\"")
        emit("didMoveToParent", b, "\"parent\":null")
        b.parent = nil
        nav.children.removeAll { $0 === b }
        advance(10...80)
        deinitTree(b)
        lookAlike(a, "revealed by a 3-5 s back swipe known from interactive keys alone (no push/pop events)")
        lookAlike(child, "child of the controller a back swipe revealed (finger time)")
        lookAlike(b, "popped by a back swipe recorded without pop events, freed")
        advance(500...1500)
        removeCustomChild(child)
    }

    /// (1.2) A presented navigation controller AN (root A1); A1 presents a sheet BN (a navigation
    /// controller, root B1); AN is dismissed: UIKit removes BN with it (only the top animates and
    /// gets callbacks; A1's present made AN's chain). AN and A1 are freed, BN and B1 never.
    private func leakInChildChain() {
        let an = presentModal(style: rng.pick(["fullScreen", "pageSheet"]), inNavigation: true)
        let a1 = an.children[0]
        let presenter = presentedBy[an.id]!
        let fullScreen = presentedStyle[an.id] == "fullScreen"
        advance(800...2500)
        let bn = presentModal(style: "pageSheet", inNavigation: true, cls: "BillingViewController", by: a1)
        let b1 = bn.children[0]
        advance(800...2500)
        emit("dismiss", an, "\"animated\":true")
        emit("viewWillDisappear", bn, flags(animated: true, fromParent: false, dismissed: true))
        emit("viewWillDisappear", b1, flags(animated: true, fromParent: false, dismissed: false))
        if fullScreen {
            emit("viewWillAppear", presenter, flags(animated: true, toParent: false, presented: false))
            emit("viewAttached", presenter, "\"host\":\"\(nav.id)\"")
            advance(2...5)
            emit("viewIsAppearing", presenter, flags(animated: true) + ",\"bounds\":[393,852]")
        }
        advance(300...450)
        emit("viewDidDisappear", bn, flags(animated: true, fromParent: false, dismissed: true))
        emit("viewDidDisappear", b1, flags(animated: true, fromParent: false, dismissed: false))
        for vc in [bn, an] { emit("viewDetached", vc, "\"host\":null") }
        if fullScreen { emit("viewDidAppear", presenter, flags(animated: true, toParent: false, presented: false)) }
        advance(10...60)
        deinitTree(an)
        expect("LC301", bn)   // `chain`, held by AN
        expect("LC301", b1)   // `ancestor`, held by BN
        lookAlike(an, "dismissed at the bottom of a chain its child presented, freed in time")
        lookAlike(a1, "removed without callbacks by its container's dismissal, freed in time")
    }

    /// (1.2) A form sheet dragged down (an interactive dismissal, held); meanwhile a completion
    /// pushes a screen in the navigation controller under it, programmatically, with a slow
    /// appearance (LC401: the finger drives the sheet, not the push). Then the sheet is let go
    /// (it comes back and is dismissed later) or goes.
    private func slowPushUnderDraggedSheet() {
        let sheet = presentModal(style: "formSheet", inNavigation: false, cls: "FilterSheetViewController")
        advance(800...2000)
        emit("dismiss", sheet, "\"animated\":true,\"interactive\":true")
        emit("viewWillDisappear", sheet, flags(animated: true, fromParent: false, dismissed: true, interactive: true))
        advance(200...600)
        let d = push(rng.pick(screenPool), gap: rng.ms(1300...3200))
        expect("LC401", d)
        advance(200...1200)
        lookAlike(sheet, "dragged down while a push runs under it")
        if rng.chance(0.5) {
            // Let go: the sheet comes back (reference §4, a cancelled swipe).
            emit("viewWillAppear", sheet, flags(animated: true, toParent: false, presented: false))
            advance(100...300)
            emit("viewDidAppear", sheet, flags(animated: true, toParent: false, presented: false))
            advance(500...1500)
            dismissModal(sheet, leak: false)
        } else {
            advance(100...300)
            emit("viewDidDisappear", sheet, flags(animated: true, fromParent: false, dismissed: true))
            emit("viewDetached", sheet, "\"host\":null")
            advance(10...60)
            free(sheet)
        }
        advance(800...2000)
        pop()
    }

    // MARK: Planted scenarios

    private func perform(_ plant: Plant) {
        currentPlant = plant
        defer { currentPlant = nil }
        switch plant {
        case .orphanView:
            let host = top
            let orphan = newVC(rng.pick(childPool))
            load(orphan)
            emit("viewAttached", orphan, "\"host\":\"\(host.id)\"")
            expect("LC101", orphan)
            advance(800...3000)
            emit("viewDetached", orphan, "\"host\":\"\(host.id)\"")
            advance(5...30)
            free(orphan)
        case .missingDidMove:
            let child = addCustomChild(rng.pick(childPool), toParent: top, didMove: false)
            expect("LC102", child)
            advance(800...2500)
            removeCustomChild(child)
        case .missingWillMove:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(800...2500)
            expect("LC103", child)
            removeCustomChild(child, willMove: false)
        case .viewLeftBehind:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(800...2500)
            expect("LC104", child)
            removeCustomChild(child, detach: false)
        case .attachBeforeAdd:
            let child = addCustomChild(rng.pick(childPool), toParent: top, attachFirst: true)
            expect("LC105", child)
            lookAlike(child, "attached just before addChild (LC105 info at most)")
            advance(800...2500)
            removeCustomChild(child)
        case .deinitWhileVisible:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(800...2500)
            // The container drops the child without forwarding the disappearance.
            emit("willMoveToParent", child, "\"parent\":null")
            emit("viewDetached", child, "\"host\":\"\(child.parent!.id)\"")
            emit("removeFromParent", child, "\"parent\":\"\(child.parent!.id)\"")
            emit("didMoveToParent", child, "\"parent\":null")
            child.parent?.children.removeAll { $0 === child }
            child.parent = nil
            advance(5...30)
            expect("LC201", child)
            free(child)
        case .doubleAppear:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(50...300)
            // A container forwarding appearance by hand on top of UIKit's automatic forwarding.
            emit("viewWillAppear", child, flags(animated: false, toParent: false, presented: false))
            emit("viewIsAppearing", child, flags(animated: false) + ",\"bounds\":[393,120]")
            advance(3...10)
            emit("viewDidAppear", child, flags(animated: false, toParent: false, presented: false))
            expect("LC202", child)
            advance(800...2000)
            removeCustomChild(child)
        case .disappearWithoutAppear:
            let child = newVC(rng.pick(childPool))
            contain(child, in: top, didMove: true)
            load(child)
            advance(200...900)
            emit("viewWillDisappear", child, flags(animated: false, fromParent: false, dismissed: false))
            emit("viewDidDisappear", child, flags(animated: false, fromParent: false, dismissed: false))
            expect("LC204", child)
            advance(200...900)
            emit("willMoveToParent", child, "\"parent\":null")
            emit("removeFromParent", child, "\"parent\":\"\(top.id)\"")
            emit("didMoveToParent", child, "\"parent\":null")
            top.children.removeAll { $0 === child }
            child.parent = nil
            advance(5...30)
            free(child)
        case .lifecycleOrder:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(100...500)
            emit("viewDidLoad", child)  // a second viewDidLoad
            expect("LC205", child)
            advance(500...1500)
            removeCustomChild(child)
        case .leakPop:
            let b = push(rng.pick(screenPool))
            advance(1500...5000)
            pop(end: .leak)
            expect("LC301", b)
        case .leakDismiss:
            let vc = presentModal(style: rng.pick(["fullScreen", "pageSheet"]), inNavigation: false)
            advance(1000...4000)
            dismissModal(vc, leak: true)
            expect("LC301", vc)
        case .leakWithChildren:
            // A presented navigation stack dismissed and never freed: the stack goes with it.
            let modalNav = presentModal(style: "fullScreen", inNavigation: true)
            advance(1000...3000)
            let content = modalNav.children[0]
            dismissModal(modalNav, leak: true)
            expect("LC301", modalNav)
            acceptable("LC301", content)
        case .leakUnconfirmed:
            push(rng.pick(screenPool))
            advance(500...1500)
            let b = pop(end: .leak)
            expect("LC302", b)
            advance(500...2000)
            emit("mark", nil, "\"name\":\"last-step\"")
        case .instanceGrowth:
            // Twelve live cells of one class: flagged only with --max-live ImageCellController=10.
            for i in 0..<12 {
                let cell = newVC("ImageCellController")
                contain(cell, in: stacks[selected][0], didMove: true)
                if i == 10 {
                    labels.expectedWithMaxLive.append(Labels.Item(rule: "LC303", session: plan.sid, vc: cell.id, since: cell.since))
                }
                advance(5...20)
            }
        case .stuckAppearing:
            let child = newVC(rng.pick(childPool))
            contain(child, in: top, didMove: false)
            load(child)
            emit("viewAttached", child, "\"host\":\"\(top.id)\"")
            emit("viewWillAppear", child, flags(animated: false, toParent: true, presented: false))
            emit("viewIsAppearing", child, flags(animated: false) + ",\"bounds\":[393,120]")
            expect("LC203", child)
            expect("LC102", child)  // no didMove either: the container never finished adding it
            advance(2500...4000)
            emit("mark", nil, "\"name\":\"still-waiting\"")
        case .slowAppearance:
            let b = push(rng.pick(screenPool), gap: rng.ms(1300...3200))
            expect("LC401", b)
            advance(800...2000)
            pop()
        case .missingIsAppearing:
            let b = push(rng.pick(screenPool), isAppearing: false)
            expect("LC402", b)
            advance(800...2000)
            pop()
        case .lostEvents:
            // The recorder's buffer overflowed: a few layout events never reached the file.
            let first = seq
            for _ in 0..<4 { emit("viewWillLayoutSubviews", top); emit("viewDidLayoutSubviews", top) }
            for s in (first + 2)...(first + 4) { droppedSeqs.insert(s) }
            lines.removeAll { line in droppedSeqs.contains { line.contains("\"seq\":\($0),") } }
        case .unknownInstance:
            // A controller created before the recorder started: events, never an init.
            let ghost = SimVC(id: "0x" + String(nextAddress, radix: 16), cls: "LegacyViewController", since: seq)
            nextAddress += 0x200
            emit("viewWillAppear", ghost, flags(animated: false, toParent: false, presented: false))
            emit("viewIsAppearing", ghost, flags(animated: false) + ",\"bounds\":[393,852]")
            advance(5...20)
            emit("viewDidAppear", ghost, flags(animated: false, toParent: false, presented: false))
            advance(300...900)
            emit("viewWillDisappear", ghost, flags(animated: false, fromParent: false, dismissed: false))
            emit("viewDidDisappear", ghost, flags(animated: false, fromParent: false, dismissed: false))
            expect("LC902", ghost)
        case .clockBackwards:
            emit("mark", nil, "\"name\":\"before-glitch\"")
            let saved = t
            t -= 40_000_000
            emit("mark", nil, "\"name\":\"clock-glitch\"")
            t = saved + 1_000_000
        case .cancelledInteractivePop:
            if stacks[selected].count < 2 { push(rng.pick(screenPool)); advance(800...2000) }
            let b = top, a = stacks[selected][stacks[selected].count - 2]
            // Reference §3: no B.viewDidDisappear, no A.viewDidAppear, no deinit.
            emit("pop", nav, "\"child\":\"\(b.id)\",\"animated\":true,\"interactive\":true")
            emit("viewWillDisappear", b, flags(animated: true, fromParent: true, dismissed: false))
            emit("viewWillAppear", a, flags(animated: true, toParent: false, presented: false))
            emit("viewAttached", a, "\"host\":\"\(nav.id)\"")
            emit("viewIsAppearing", a, flags(animated: true) + ",\"bounds\":[393,852]")
            advance(400...6000)  // the finger stays down
            emit("viewWillDisappear", a, flags(animated: true, fromParent: false, dismissed: false))
            advance(100...250)
            emit("viewDidDisappear", a, flags(animated: true, fromParent: false, dismissed: false))
            emit("viewDetached", a, "\"host\":\"\(nav.id)\"")
            emit("viewWillAppear", b, flags(animated: true, toParent: false, presented: false))
            emit("viewIsAppearing", b, flags(animated: true) + ",\"bounds\":[393,852]")
            advance(20...80)
            emit("viewDidAppear", b, flags(animated: true, toParent: false, presented: false))
            lookAlike(b, "top controller of a cancelled interactive pop")
            lookAlike(a, "revealed controller of a cancelled interactive pop")
        case .completedInteractivePop:
            if stacks[selected].count < 2 { push(rng.pick(screenPool)); advance(800...2000) }
            let a = stacks[selected][stacks[selected].count - 2]
            let b = pop(end: .free, fingerTime: rng.ms(1500...4000))
            lookAlike(a, "revealed by a slow interactive pop (finger time is not a slow appearance)")
            lookAlike(b, "popped interactively, deallocated")
        case .cancelledSheetSwipe:
            let sheet = presentModal(style: "pageSheet", inNavigation: false)
            advance(800...2000)
            // Reference §4: willDisappear, then willAppear/didAppear again, no didDisappear.
            emit("viewWillDisappear", sheet, flags(animated: true, fromParent: false, dismissed: true))
            advance(300...1500)
            emit("viewWillAppear", sheet, flags(animated: true, toParent: false, presented: false))
            advance(100...300)
            emit("viewDidAppear", sheet, flags(animated: true, toParent: false, presented: false))
            lookAlike(sheet, "cancelled sheet swipe")
            advance(500...1500)
            dismissModal(sheet, leak: false)
        case .sheetPresenter:
            let presenter = top
            let sheet = presentModal(style: rng.pick(["pageSheet", "formSheet"]), inNavigation: false)
            advance(1000...3000)
            dismissModal(sheet, leak: false)
            lookAlike(presenter, "presenter of a sheet gets no appearance callbacks")
        case .backgrounding:
            let visible = top
            if scenes {
                emit("sceneWillResignActive", nil, "\"scene\":\"scene-1\"")
                emit("sceneDidEnterBackground", nil, "\"scene\":\"scene-1\"")
            }
            if appDelegate { emit("appWillResignActive"); emit("appDidEnterBackground") }
            advance(3000...60000)
            if scenes {
                emit("sceneWillEnterForeground", nil, "\"scene\":\"scene-1\"")
                emit("sceneDidBecomeActive", nil, "\"scene\":\"scene-1\"")
            }
            if appDelegate { emit("appWillEnterForeground"); emit("appDidBecomeActive") }
            lookAlike(visible, "visible through backgrounding (no disappear callbacks)")
        case .cachedReshow:
            let b = push(rng.pick(screenPool))
            advance(800...2000)
            pop(end: .keep)
            advance(6000...9000)  // longer than the grace period: it is kept, not leaked
            push(b.cls, reuse: b)
            lookAlike(b, "cached controller shown again")
            advance(800...2000)
            pop()
        case .lateDeinitInGrace:
            let b = push(rng.pick(screenPool))
            advance(800...2000)
            pop(end: .lateInGrace)
            lookAlike(b, "deinit 1.5-3.5 s after pop, inside grace")
        case .reusedAddress:
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(300...900)
            removeCustomChild(child)
            advance(100...400)
            let again = addCustomChild(rng.pick(childPool), toParent: top, address: child.id)
            lookAlike(child, "address reused after deinit")
            lookAlike(again, "new instance at a reused address")
            advance(300...900)
            removeCustomChild(again)
        case .quickEndAfterAdd:
            let child = newVC(rng.pick(childPool))
            contain(child, in: top, didMove: false)
            lookAlike(child, "session ended within 1 s of addChild")
            advance(50...400)
        case .leakInChain, .chainDismissal:
            chainDismissal(leak: plant == .leakInChain)
        case .containerMove:
            let card = addCustomChild("CardStackViewController", toParent: top)
            let child = addCustomChild(rng.pick(childPool), toParent: top)
            advance(500...1500)
            // Moved within the window: the view changes superview, no appearance callbacks.
            let old = top
            emit("willMoveToParent", child, "\"parent\":null")
            emit("removeFromParent", child, "\"parent\":\"\(old.id)\"")
            emit("didMoveToParent", child, "\"parent\":null")
            old.children.removeAll { $0 === child }
            contain(child, in: card, didMove: false)
            emit("viewDetached", child, "\"host\":\"\(old.id)\"")
            emit("viewAttached", child, "\"host\":\"\(card.id)\"")
            emit("didMoveToParent", child, "\"parent\":\"\(card.id)\"")
            lookAlike(child, "moved to another container (removeFromParent, then addChild): adopted, not leaked")
            advance(6000...9000)  // past the grace period, alive and in use
            removeCustomChild(child)
            removeCustomChild(card)
        case .overCurrentContext:
            let presenter = top
            let overlay = newVC("FilterOverlayViewController")
            emit("present", presenter, "\"presented\":\"\(overlay.id)\",\"style\":\"overCurrentContext\",\"animated\":true")
            load(overlay)
            emit("viewWillAppear", overlay, flags(animated: true, toParent: false, presented: true))
            emit("viewAttached", overlay, "\"host\":\"\(presenter.id)\"")
            advance(2...6)
            emit("viewIsAppearing", overlay, flags(animated: true) + ",\"bounds\":[393,852]")
            advance(300...450)
            emit("viewDidAppear", overlay, flags(animated: true, toParent: false, presented: true))
            lookAlike(overlay, "over-current-context presentation: its view sits in the presenter's view")
            advance(800...3000)
            emit("dismiss", overlay, "\"animated\":true")
            emit("viewWillDisappear", overlay, flags(animated: true, fromParent: false, dismissed: true))
            advance(300...450)
            emit("viewDidDisappear", overlay, flags(animated: true, fromParent: false, dismissed: true))
            emit("viewDetached", overlay, "\"host\":\"\(presenter.id)\"")
            advance(10...60)
            free(overlay)
        case .interactiveDismiss:
            interactiveDismissal()
        case .leakBesideBackgroundWindow:
            secondWindowInBackground()
            let b = push(rng.pick(screenPool))
            advance(1500...4000)
            pop(end: .leak)
            expect("LC301", b)
        case .deinitInGraceBesideBackgroundWindow:
            secondWindowInBackground()
            let b = push(rng.pick(screenPool))
            advance(800...2000)
            pop(end: .lateBy(2000...4000))
            lookAlike(b, "freed 2-4 s after its pop in the active window, a second window in the background")
        case .cancelledSearch:
            cancelledSearch()
        case .rootSwapFreed, .leakRootSwapWithSheet:
            onboardingRoot(leaks: plant == .leakRootSwapWithSheet)
        case .pushAcrossLostEvents:
            pushAcrossLostEvents()
        case .interactiveSwipeWithoutPop:
            interactiveSwipeWithoutPop()
        case .leakInChildChain:
            leakInChildChain()
        case .slowPushUnderDraggedSheet:
            slowPushUnderDraggedSheet()
        case .appDelegate, .noScene, .visibleAtEnd, .appExtension:
            break
        }
    }
}

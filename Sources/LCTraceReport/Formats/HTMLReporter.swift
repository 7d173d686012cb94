import Foundation
import LCTraceModel
import LCTraceRules

/// `--format html`: one self-contained page for a CI artifact or an e-mail (it loads nothing:
/// style, script and plots are inline, and its Content-Security-Policy forbids any fetch): a
/// summary, findings per 100 sessions and appearance times per build, and the findings grouped
/// as in the text report, filterable, each group opening onto its examples with the timeline of
/// their session, the controllers that held them and their raw events.
enum HTMLReporter: Reporter {
    package static let id = "html"
    package static let summary = "one self-contained page with timelines and charts, for -o report.html"
    package static let inputs: ReportInputs = [.gapsBySession, .exhibits]

    package static func render(_ view: ReportView) -> String { HTMLPage(view: view).render() }
}

/// The page of one view.
struct HTMLPage {
    package let view: ReportView
    /// Identity → its key.
    package let keys: [String: String]
    /// The builds charted (indices into `view.builds`, oldest first): every one, or the
    /// `chartedBuilds` with the most sessions.
    let charted: [Int]
    /// Builds charted at most: a campaign over hundreds of builds keeps the busiest.
    static let chartedBuilds = 30

    package init(view: ReportView) {
        self.view = view
        keys = Dictionary(view.identities.map { ($0.identity, $0.identityKey) }, uniquingKeysWith: { a, _ in a })
        charted = BuildSummary.busiest(view.builds, limit: Self.chartedBuilds)
    }
    /// Classes charted at most (those with the most appearances); the table lists them all.
    static let chartedClasses = 24
    /// Identities named in a group at most.
    static let identitiesShown = 6

    func esc(_ s: String) -> String { MarkupText.escape(s) }
    package func n(_ v: Int) -> String { NumberFormat.thousands(v) }
    func plural(_ v: Int, _ word: String, _ words: String? = nil) -> String { "\(n(v)) \(v == 1 ? word : words ?? word + "s")" }

    package func render() -> String {
        var body = "<a class=\"skip\" href=\"#findings\">Skip to the findings</a>\n"
        body += header()
        body += "<main>\n"
        body += summary()
        // What to act on first; the charts of the campaign after it.
        body += findingsSection()
        body += fixedSection()
        body += buildsSection()
        body += gapsSection()
        body += "</main>\n"
        body += "<footer><p>Made by \(esc(view.tool)). This page is one file that loads nothing: open it from a CI artifact or an e-mail. "
        body += "A timeline in a terminal: <code>lctrace timeline</code>; a session in Perfetto UI: <code>lctrace export</code>.</p></footer>\n"
        let script = HTMLAssets.script
        var page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        // Nothing may be fetched, whatever a trace managed to put in the page; only this script runs.
        page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-\(Self.base64SHA256(script))'; base-uri 'none'; form-action 'none'\">\n"
        page += "<meta name=\"color-scheme\" content=\"light dark\">\n<meta name=\"generator\" content=\"\(esc(view.tool))\">\n"
        page += "<title>\(esc(title()))</title>\n"
        page += "<style>\n\(HTMLAssets.style)\(SVGTimeline.style)</style>\n</head>\n<body>\n"
        page += body
        page += "<script>\(script)</script>\n</body>\n</html>\n"
        return page
    }

    package func title() -> String {
        "lctrace report · \(plural(view.data.sessions.count, "session")) · \(plural(view.findings.count, "finding"))"
    }

    // MARK: Header and summary

    package func header() -> String {
        var out = "<header>\n<h1>lctrace report</h1>\n<p class=\"muted\">"
        var parts: [String] = []
        if let db = view.options.followUp.database { parts.append("database <code>\(esc(db))</code>") }
        let scope = view.options.followUp.conditions.map { "\($0.0) <code>\(esc($0.1))</code>" }
        parts.append(scope.isEmpty ? "every session" : scope.joined(separator: ", "))
        if view.options.families.count < RuleFamily.allCases.count {
            parts.append("families " + RuleFamily.allCases.filter(view.options.families.contains).map(\.rawValue).joined(separator: ", "))
        }
        if view.data.minSeverity > .info { parts.append("severity \(view.data.minSeverity.rawValue) and above") }
        out += parts.joined(separator: " · ") + "</p>\n"
        if view.data.recomputed {
            out += "<p class=\"muted\">Findings recomputed for this report: tuning other than the stored findings', or sessions changed since their analysis.</p>\n"
        }
        return out + "</header>\n"
    }

    package func summary() -> String {
        let data = view.data
        var out = "<section id=\"summary\" aria-labelledby=\"summary-h\">\n<h2 id=\"summary-h\">Summary</h2>\n<dl class=\"cards\">"
        let apps = data.sessions.apps.count
        let cards: [(String, Int)] = [("sessions", data.sessions.count), ("events", data.events), ("builds", view.builds.count),
                                      ("devices", view.devices), ("apps", apps), ("findings", view.findings.count),
                                      ("identities", view.identities.count)]
        for (name, value) in cards { out += "<div><dt>\(name)</dt><dd>\(n(value))</dd></div>" }
        out += "</dl>\n<p>Findings by severity: "
        out += Severity.allCases.reversed().map { s in
            let count = view.count(s)
            return "<span class=\"sev \(s.rawValue)\">\(n(count)) \(s == .info ? "info" : s.rawValue + (count == 1 ? "" : "s"))</span>"
        }.joined(separator: " ") + "</p>\n"
        if let baseline = view.options.baseline {
            let newIdentities = view.identities.filter { $0.state == .new }.count
            out += "<p>Against the baseline <code>\(esc(baseline.file))</code>: <span class=\"badge new\">\(plural(view.newFindings, "new finding")) (\(plural(newIdentities, "identity", "identities")))</span>, "
            out += "\(n(view.knownFindings)) known, \(plural(view.fixed.count, "baseline entry", "baseline entries")) not seen (fixed).</p>\n"
        }
        if let failOn = view.options.failOn {
            let failing = view.identities.filter(\.failing)
            let which = view.options.baseline == nil ? "" : "new "
            out += failing.isEmpty
                ? "<p class=\"gate pass\">Gate passes: no \(which)finding at or above \(failOn.rawValue) (--fail-on \(failOn.rawValue)).</p>\n"
                : "<p class=\"gate fail\">Gate fails: \(plural(failing.count, "\(which)identity", "\(which)identities")) at or above \(failOn.rawValue) (--fail-on \(failOn.rawValue)).</p>\n"
        } else {
            out += "<p class=\"muted\">Gate off (--fail-on never).</p>\n"
        }
        return out + "</section>\n"
    }

    // MARK: Plots

    func buildsSection() -> String {
        guard !view.builds.isEmpty else { return "" }
        var out = "<section id=\"builds\" aria-labelledby=\"builds-h\">\n<h2 id=\"builds-h\">Findings per 100 sessions, by build</h2>\n"
        out += "<p class=\"muted\">Builds oldest first (app version, then build number); each bar is the findings of the build's sessions, per 100 of them.</p>\n"
        out += buildsLeftOut()
        out += "<figure class=\"chart\"><div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"Findings per 100 sessions by build (scrolls sideways)\">"
        out += HTMLCharts.findingsPerBuild(charted.map { view.builds[$0] }, id: "per-build") + "</div></figure>\n"
        out += "<details class=\"about\"><summary>The numbers</summary><div class=\"table-scroll\"><table><thead><tr><th>build</th><th class=\"n\">sessions</th><th class=\"n\">devices</th><th class=\"n\">events</th><th class=\"n\">errors</th><th class=\"n\">warnings</th><th class=\"n\">info</th><th class=\"n\">per 100 sessions</th></tr></thead><tbody>"
        for b in charted.map({ view.builds[$0] }) {
            out += "<tr><td>\(esc(b.name))</td><td class=\"n\">\(n(b.sessions))</td><td class=\"n\">\(n(b.devices))</td><td class=\"n\">\(n(b.events))</td><td class=\"n\">\(n(b.errors))</td><td class=\"n\">\(n(b.warnings))</td><td class=\"n\">\(n(b.infos))</td><td class=\"n\">\(HTMLCharts.per100(b.perHundredSessions()))</td></tr>"
        }
        return out + "</tbody></table></div></details>\n</section>\n"
    }

    /// When not every build is charted: how many are not, and the query that lists them all.
    func buildsLeftOut() -> String {
        let rest = view.builds.count - charted.count
        guard rest > 0 else { return "" }
        let families = view.options.families
        let rules = families.count == RuleFamily.allCases.count ? nil : RuleCatalog.all.filter { families.contains($0.family) }.map(\.id)
        return "<p class=\"omitted\">Charted here and below: the \(n(charted.count)) builds with the most sessions; \(plural(rest, "build")) with fewer are not. Every build:</p>"
            + "<p class=\"cmd\"><code>\(esc(view.options.followUp.findingsPerBuildQuery(rules: rules)))</code></p>\n"
    }

    func gapsSection() -> String {
        guard view.options.families.contains(.gaps), !view.gapStats.isEmpty else { return "" }
        var out = "<section id=\"gaps\" aria-labelledby=\"gaps-h\">\n<h2 id=\"gaps-h\">viewIsAppearing → viewDidAppear, by class and build</h2>\n"
        out += "<p class=\"muted\">Completed, non-interactive, foreground appearances. Each column is a build (oldest first): the stronger a cell, the more of its appearances took that long (log scale); the line is the p50, the dashed line the p90.</p>\n"
        let columns = Set(charted)
        let classes = view.gapsByBuild.prefix(Self.chartedClasses).map { c -> ClassGapsByBuild in
            var c = c
            c.builds = c.builds.filter { columns.contains($0.build) }
            return c
        }.filter { !$0.builds.isEmpty }
        out += "<div class=\"charts\">"
        for (i, c) in classes.enumerated() {
            out += "<figure class=\"chart\"><figcaption>\(esc(c.cls)) <span class=\"muted\">· \(plural(c.all.count, "appearance"))</span></figcaption>"
            out += "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"\(esc(c.cls)) by build (scrolls sideways)\">"
            out += HTMLCharts.gapsByBuild(c, builds: view.builds, id: "gap-\(i)") + "</div>"
            out += "<details class=\"about\"><summary>Per build</summary><div class=\"table-scroll\"><table><thead><tr><th>build</th><th class=\"n\">count</th><th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">max</th></tr></thead><tbody>"
            for b in c.builds {
                out += "<tr><td>\(esc(view.builds[b.build].name))</td><td class=\"n\">\(n(b.stats.count))</td><td class=\"n\">\(TextReport.ms(b.stats.p50))</td><td class=\"n\">\(TextReport.ms(b.stats.p90))</td><td class=\"n\">\(TextReport.ms(b.stats.max))</td></tr>"
            }
            out += "</tbody></table></div></details></figure>"
        }
        out += "</div>\n"
        let rest = view.gapStats.count - classes.count
        if rest > 0 {
            var command = ["lctrace", "report"]
            if let db = view.options.followUp.database { command += ["--db", Shell.word(db)] }
            for (column, value) in view.options.followUp.conditions where column != "class" { command += ["--\(column)", Shell.word(value)] }
            command += ["--gaps", "--class", "CLASS", "--format", "html", "-o", "gaps.html"]
            out += "<p class=\"omitted\">\(plural(rest, "class", "classes")) with fewer appearances not charted; all \(n(view.gapStats.count)) are in the table below. One class by build:</p>"
            out += "<p class=\"cmd\"><code>\(esc(command.joined(separator: " ")))</code></p>\n"
        }
        out += "<details class=\"about\"><summary>Every class, all builds together</summary><div class=\"table-scroll\"><table><thead><tr><th>class</th><th class=\"n\">count</th><th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th><th class=\"n\">max</th></tr></thead><tbody>"
        for g in view.gapStats {
            out += "<tr><td>\(esc(g.cls))</td><td class=\"n\">\(n(g.count))</td><td class=\"n\">\(TextReport.ms(g.p50))</td><td class=\"n\">\(TextReport.ms(g.p90))</td><td class=\"n\">\(TextReport.ms(g.p99))</td><td class=\"n\">\(TextReport.ms(g.max))</td></tr>"
        }
        return out + "</tbody></table></div></details>\n</section>\n"
    }

    // MARK: Findings

    func findingsSection() -> String {
        var out = "<section id=\"findings\" aria-labelledby=\"findings-h\">\n<h2 id=\"findings-h\">Findings</h2>\n"
        if view.findings.isEmpty { return out + "<p>No findings.</p>\n</section>\n" }
        out += "<p class=\"muted\">Grouped by rule and class (leaks also by how the controller left), most findings first; open a group for its examples.</p>\n"
        if let x = view.exhibits {
            out += "<p class=\"muted\">Leaks and orphans: the first \(plural(x.limits.perGroup, "example")) of each group are drawn (timeline 10 s around the decisive event, the controllers that held it, its raw events), \(plural(x.drawn.count, "example")) on this page"
            out += x.leftOut > 0 ? "; \(plural(x.leftOut, "more example")) past the page's limit of \(n(x.limits.total)) carry the <code>lctrace timeline</code> command that draws them.</p>\n" : ".</p>\n"
        }
        out += filters()
        var groupNumber = 0
        for family in view.sections where !family.rules.isEmpty {
            out += "<section class=\"family\" aria-labelledby=\"family-\(family.family.rawValue)\">\n<h3 id=\"family-\(family.family.rawValue)\">\(esc(family.family.title))</h3>\n"
            for section in family.rules {
                out += ruleSection(section, family: family.family, groupNumber: &groupNumber)
            }
            out += "</section>\n"
        }
        return out + "</section>\n"
    }

    func filters() -> String {
        var out = "<form id=\"filters\" class=\"filters\" role=\"search\" aria-label=\"Filter the findings\" hidden>"
        out += "<label for=\"f-q\">Search<input id=\"f-q\" name=\"q\" type=\"search\" placeholder=\"class, rule, message…\" autocomplete=\"off\"></label>"
        let rules = view.sections.flatMap(\.rules).map(\.rule)
        out += select("rule", "Rule", rules.map { ($0.id, "\($0.id) \($0.name)") })
        let classes = Set(view.sections.flatMap(\.rules).flatMap(\.groups).map(\.label)).sorted()
        out += select("class", "Class", classes.map { ($0, $0) })
        out += select("build", "Build", view.builds.enumerated().map { (String($0.offset), $0.element.name) })
        out += select("severity", "Severity", Severity.allCases.reversed().map { ($0.rawValue, $0.rawValue) })
        if view.options.baseline != nil { out += select("state", "Baseline", [("new", "new"), ("known", "known")]) }
        out += "<button type=\"reset\">Clear</button><button type=\"button\" id=\"expand\">Open all</button><button type=\"button\" id=\"collapse\">Close all</button>"
        out += "<output id=\"shown\" aria-live=\"polite\"></output></form>\n"
        return out
    }

    func select(_ name: String, _ label: String, _ options: [(String, String)]) -> String {
        var out = "<label for=\"f-\(name)\">\(label)<select id=\"f-\(name)\" name=\"\(name)\"><option value=\"\">all</option>"
        for (value, text) in options { out += "<option value=\"\(esc(value))\">\(esc(text))</option>" }
        return out + "</select></label>"
    }

    func ruleSection(_ section: RuleSection, family: RuleFamily, groupNumber: inout Int) -> String {
        let rule = section.rule
        var out = "<section class=\"rule\" id=\"rule-\(esc(rule.id))\" aria-labelledby=\"rule-\(esc(rule.id))-h\">\n"
        out += "<h4 id=\"rule-\(esc(rule.id))-h\">\(esc(rule.id)) \(esc(rule.name)) <span class=\"sev \(rule.severity.rawValue)\">\(rule.severity.rawValue)</span> "
        out += "<span class=\"muted\">· \(plural(section.count, "finding"))"
        if section.sessions > 0 { out += " in \(plural(section.sessions, "session"))" }
        out += "</span></h4>\n<p class=\"about\">\(esc(rule.summary))</p>\n"
        if !rule.explanation.isEmpty {
            out += "<details class=\"about\"><summary>About \(esc(rule.id))</summary><p>\(esc(rule.explanation))</p>"
            if !rule.help.isEmpty { out += "<p><strong>Fix:</strong> \(esc(rule.help))</p>" }
            out += "</details>\n"
        }
        for g in section.groups {
            out += group(g, section, family: family, number: groupNumber)
            groupNumber += 1
        }
        return out + "</section>\n"
    }

    func group(_ g: FindingGroup, _ section: RuleSection, family: RuleFamily, number: Int) -> String {
        let rule = section.rule
        var states: [String] = []
        if view.options.baseline != nil {
            if g.newFindings > 0 { states.append("new") }
            if g.newFindings < g.count { states.append("known") }
        }
        var search = [rule.id, rule.name, g.label, g.value ?? ""]
        search += g.firstFindings.prefix(3).map { view.findings[$0].message }
        search += g.identities.prefix(10).compactMap { keys[$0] }
        var out = "<details class=\"group\" id=\"group-\(number)\" data-rule=\"\(esc(rule.id))\" data-class=\"\(esc(g.label))\" "
        out += "data-builds=\"\(g.builds.map(String.init).joined(separator: " "))\" data-severity=\"\(rule.severity.rawValue)\" "
        out += "data-state=\"\(states.joined(separator: " "))\" data-search=\"\(esc(search.joined(separator: " ").lowercased()))\">\n"
        out += "<summary><span class=\"cls\">\(esc(g.label))</span>"
        if let value = g.value { out += " <span>\(esc(rule.report.groupByTitle ?? "by")) \(esc(value))</span>" }
        var stats = [plural(g.count, "finding")]
        if g.sessions > 0 {
            stats += [plural(g.sessions, "session"), plural(g.devices, "device"), plural(g.builds.count, "build")]
            if let first = g.firstBuild { stats.append("first in \(first)") }
        }
        out += " <span class=\"stats\">\(esc(stats.joined(separator: " · ")))</span>"
        if g.newFindings > 0 { out += " <span class=\"badge new\">\(n(g.newFindings)) new</span>" }
        out += "</summary>\n<div class=\"body\">\n"
        if !g.held.isEmpty {
            out += "<p>Held by it: \(esc(g.held.map { "\($0.cls) ×\($0.count)" }.joined(separator: ", "))) <span class=\"muted\">(released with a leaked container; counted here, not as groups of their own)</span></p>\n"
        }
        let identities = g.identities.prefix(Self.identitiesShown).map { id -> String in
            let key = keys[id] ?? ""
            return "<code>\(esc(id))</code> <code>\(esc(key))</code>"
        }
        out += "<p class=\"meta\">\(g.identities.count == 1 ? "Identity" : "Identities"): \(identities.joined(separator: "; "))"
        if g.identities.count > Self.identitiesShown { out += "; and \(n(g.identities.count - Self.identitiesShown)) more" }
        out += "</p>\n"
        let shown = g.examples.prefix(view.options.examples)
        for i in shown { out += example(i, family: family) }
        let left = g.count - shown.count
        out += "<p class=\"omitted\">"
        out += left > 0 ? "Showing \(n(shown.count)) of \(plural(g.count, "example"))\(rule.report.worstFirstTitle.map { " (\($0))" } ?? ""). Every one of them:"
            : "\(shown.count == 1 ? "The example" : "All \(n(shown.count)) examples") listed. As a table:"
        out += "</p><p class=\"cmd\"><code>\(esc(findingsCommand(g, rule)))</code></p>\n"
        if left > 0 && g.sessions > 0 {
            out += "<p class=\"omitted\">Draw any of them:</p><p class=\"cmd\"><code>\(esc(view.options.followUp.timelineCommand(sid: "SESSION", vc: "VC", since: nil, around: nil).replacingOccurrences(of: "--vc VC", with: "--vc VC#SINCE")))</code></p>\n"
        }
        return out + "</div></details>\n"
    }

    /// Every finding of a group: by its identities (a handful), else by rule.
    func findingsCommand(_ g: FindingGroup, _ rule: RuleInfo) -> String {
        g.identities.count <= 20 ? view.options.followUp.findingsQuery(identities: g.identities)
            : view.options.followUp.findingsQuery(rule: rule.id)
    }

    func example(_ i: Int, family: RuleFamily) -> String {
        let f = view.findings[i]
        let s = view.session(f.session)
        var out = "<article class=\"example\">\n<p class=\"meta\">"
        if view.state(ofFinding: i) == .new { out += "<span class=\"badge new\">NEW</span> " }
        var parts: [String] = []
        if let sid = f.session { parts.append("session <code>\(esc(sid))</code>") }
        if let vc = f.vc { parts.append("<code>\(esc(vc))#\(f.since ?? 0)</code>") }
        if let t = f.t { parts.append(String(format: "at %.2f s", Double(t) / 1e9)) }
        if let s { parts.append(esc(BuildOrder.name(s))); if let d = s.device { parts.append(esc(d)) } }
        if let file = f.file { parts.append("file <code>\(esc(file))</code>") }
        out += parts.joined(separator: " · ") + "</p>\n<p class=\"msg\">\(esc(f.message))</p>\n"
        if f.confidence == "low" { out += "<p class=\"muted\">Low confidence: the session lost events.</p>\n" }
        if let x = view.exhibits?.drawn[i] {
            out += exhibit(x, f, number: i)
        } else if ReportExhibits.families.contains(family), f.session != nil, let limits = view.exhibits?.limits {
            out += "<p class=\"omitted\">Not drawn here (at most \(plural(limits.perGroup, "example")) per group and \(n(limits.total)) on the page); its timeline:</p>\n"
        }
        if let sid = f.session, f.t != nil {
            let command = view.options.followUp.timelineCommand(sid: sid, vc: f.vc, since: f.since, around: view.exhibits?.decisiveSeq[i] ?? f.evidence.last)
            out += "<p class=\"cmd\"><code>\(esc(command))</code></p>\n"
        }
        return out + "</article>\n"
    }

    func exhibit(_ x: FindingExhibit, _ f: Finding, number: Int) -> String {
        var out = ""
        if let t = x.timeline {
            var svg = SVGTimeline(t)
            svg.standalone = false
            svg.includeStyle = false
            svg.idPrefix = "ex\(number)"
            out += "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"\(esc("Timeline of session \(t.session.sid) (scrolls sideways)"))\">\(svg.render())</div>\n"
            out += omissions(t)
        } else if let why = x.missing {
            out += "<p class=\"omitted\">No timeline: \(esc(why)).</p>\n"
        }
        out += "<div class=\"exhibit\">\n<div><h5>Controllers that held it</h5>"
        if x.holders.isEmpty {
            out += "<p class=\"muted\">None in the window: no container, presenter or caller drawn.</p>"
        } else {
            out += "<ul class=\"holders\">" + x.holders.map { "<li><span class=\"rel\">\(esc($0.relation))</span> \(esc($0.label))</li>" }.joined() + "</ul>"
        }
        out += "</div>\n<div><h5>Raw events</h5>"
        if x.events.isEmpty {
            out += "<p class=\"muted\">No events recorded.</p>"
        } else {
            out += "<div class=\"table-scroll\"><table><caption class=\"omitted\">\(x.eventsTotal > x.events.count ? "\(n(x.events.count)) of \(n(x.eventsTotal)) events of the instance, nearest the decisive one" : plural(x.events.count, "event")); ★ the finding's evidence</caption>"
            out += "<thead><tr><th class=\"n\">seq</th><th class=\"n\">t</th><th>event</th><th>controller</th><th>names</th><th>flags</th></tr></thead><tbody>"
            for e in x.events {
                out += "<tr\(x.evidence.contains(e.seq) ? " class=\"evidence\"" : "")><td class=\"n\">\(e.seq)</td><td class=\"n\">\(String(format: "%.3f s", Double(e.t) / 1e9))</td>"
                out += "<td>\(esc(e.name))</td><td><code>\(esc(e.vc ?? ""))</code>\(e.cls.map { " " + esc($0) } ?? "")</td>"
                out += "<td>\(esc(names(e)))</td><td>\(esc(flags(e)))</td></tr>"
            }
            out += "</tbody></table></div>"
            if x.eventsTotal > x.events.count, let command = x.eventsCommand {
                out += "<p class=\"omitted\">\(plural(x.eventsTotal - x.events.count, "more event")) of the instance:</p><p class=\"cmd\"><code>\(esc(command))</code></p>"
            }
        }
        return out + "</div>\n</div>\n"
    }

    /// What the timeline's window and lane limit left out, as `lctrace timeline` says it.
    func omissions(_ t: Timeline) -> String {
        let o = t.omitted
        var out: [String] = []
        if !o.instanceParts.isEmpty { out.append("Left out: " + o.instanceParts.joined(separator: ", ") + ".") }
        if !o.findings.isEmpty { out.append("Findings outside the window: " + o.findingParts(6).joined(separator: ", ") + ".") }
        return out.isEmpty ? "" : "<p class=\"omitted\">\(esc(out.joined(separator: " ")))</p>\n"
    }

    /// The other controller an event names, under its key (`parent 0x…`), and its detail.
    func names(_ e: TraceEvent) -> String {
        var parts: [String] = []
        if let other = e.other { parts.append("\(e.kind.otherKey ?? "other") \(other)") }
        if let detail = e.detail { parts.append("\(e.kind.detailKey ?? "detail") \(detail)") }
        return parts.joined(separator: ", ")
    }

    /// The flags the event carried, as `animated` (true) or `!animated` (false).
    func flags(_ e: TraceEvent) -> String {
        let all: [(EventFlags, String)] = [(.animated, "animated"), (.isMovingToParent, "isMovingToParent"),
                                            (.isBeingPresented, "isBeingPresented"), (.isMovingFromParent, "isMovingFromParent"),
                                            (.isBeingDismissed, "isBeingDismissed"), (.interactive, "interactive")]
        return all.filter { e.flags.contains(EventFlags.present($0.0)) }
            .map { e.flags.contains($0.0) ? $0.1 : "!" + $0.1 }.joined(separator: " ")
    }

    func fixedSection() -> String {
        guard view.options.baseline != nil, !view.fixed.isEmpty else { return "" }
        var out = "<section id=\"fixed\" aria-labelledby=\"fixed-h\">\n<h2 id=\"fixed-h\">In the baseline, not seen (fixed)</h2>\n<div class=\"table-scroll\"><table><thead><tr><th>rule</th><th>class</th><th>identity</th><th>key</th><th>note</th></tr></thead><tbody>"
        for e in view.fixed {
            out += "<tr><td>\(esc(e.rule))</td><td>\(esc(e.cls ?? "-"))</td><td><code>\(esc(e.identity))</code></td><td><code>\(esc(e.identityKey))</code></td><td>\(esc(e.note))</td></tr>"
        }
        return out + "</tbody></table></div>\n</section>\n"
    }

    /// The base64 SHA-256 of the script, which the page's Content-Security-Policy names.
    static func base64SHA256(_ text: String) -> String {
        var digest = SHA256()
        digest.update(Array(text.utf8))
        let hex = Array(digest.finalizeHex().utf8)
        var bytes: [UInt8] = []
        var i = 0
        while i + 1 < hex.count {
            bytes.append(UInt8(String(decoding: hex[i...i + 1], as: UTF8.self), radix: 16)!)
            i += 2
        }
        return Data(bytes).base64EncodedString()
    }
}

// Runs on an iOS simulator (`xcodebuild test -scheme lctrace-Package -destination
// 'platform=iOS Simulator,name=iPhone 16'`); compiles to nothing elsewhere. Never run by
// this repository's CI, which is Linux.
#if canImport(UIKit) && !os(watchOS)
import Foundation
import LCTraceAnalysis
import LCTraceFormat
import LCTraceIngest
import LCTraceModel
import LCTraceRecorder
import LCTraceRules
import UIKit
import XCTest

final class ListViewController: UIViewController {}
final class DetailViewController: UIViewController {}
final class LeakyDetailViewController: UIViewController {}
final class ModalViewController: UIViewController {}
final class BannerViewController: UIViewController {}

/// Real UIKit, real swizzling: the files the hooks write, read by lctrace's decoder and
/// model without a database (LCTraceIngest and LCTraceAnalysis link no SQLite or libpq).
@MainActor
final class UIKitRecordingTests: XCTestCase {
    private var directory: URL!
    private var window: UIWindow!

    override func setUp() async throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("lctrace-uikit-\(UUID().uuidString)")
        var config = RecorderConfiguration(session: SessionInfo(app: "com.example.uikit-tests", appVersion: "1", build: "1", os: "iOS",
                                                                osVersion: UIDevice.current.systemVersion, sdk: "17.0",
                                                                device: "simulator"),
                                           directory: directory)
        config.flushInterval = 0.05
        _ = try UIKitRecording.startHooksOnly(config)
        window = UIWindow(frame: CGRect(x: 0, y: 0, width: 390, height: 844))
    }

    override func tearDown() async throws {
        UIKitRecording.stop()
        window = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// Lets UIKit deliver what it queued (appearance, transitions, autorelease pools).
    private func spin(_ seconds: Double = 0.3) {
        RunLoop.current.run(until: Date().addingTimeInterval(seconds))
    }

    private func stopAndRead() throws -> [TraceEvent] {
        UIKitRecording.stop()
        var events: [TraceEvent] = []
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jsonl.gz") }.sorted()
        let decoder = EventDecoder()
        for name in names {
            let input = try TraceInput(location: .file(directory.appendingPathComponent(name).path))
            LineReader(input: input).forEachLine { line in
                guard !line.bytes.isEmpty else { return true }
                switch decoder.decode(line.bytes) {
                case .success(let e): events.append(e)
                case .failure(let reason): XCTFail("\(name) line \(line.number): \(reason)")
                }
                return true
            }
            XCTAssertNil(input.damage)
        }
        return events.sorted { $0.seq < $1.seq }
    }

    private func findings(_ events: [TraceEvent], grace: Double = 1) throws -> [Finding] {
        let sid = try XCTUnwrap(events.first?.sid)
        var meta = SessionMetadata(sid: sid)
        meta.sdk = "17.0"
        meta.osName = "iOS"
        meta.recordSeq = 0
        var settings = RuleSettings()
        settings.leakGrace = Int64(grace * 1e9)
        return try SessionAnalysis(settings: settings).build(sid: sid, metadata: meta) { consume in
            for e in events { try consume(e) }
        }.findings
    }

    private func id(_ vc: UIViewController) -> String? { UIKitRecording.instanceID(of: vc)?.description }

    /// Push, pop, present, dismiss, a child added and removed: recorded, and no finding.
    func testPushPopPresentDismissAndChildGiveNoFindings() throws {
        var ids: [String: String] = [:]
        autoreleasepool {
            let list = ListViewController()
            let nav = UINavigationController(rootViewController: list)
            window.rootViewController = nav
            window.makeKeyAndVisible()
            spin()
            autoreleasepool {
                let detail = DetailViewController()
                nav.pushViewController(detail, animated: false)
                spin()
                ids["detail"] = id(detail)
                nav.popViewController(animated: false)
            }
            spin()
            autoreleasepool {
                let modal = ModalViewController()
                modal.modalPresentationStyle = .fullScreen
                nav.present(modal, animated: false)
                spin()
                ids["modal"] = id(modal)
                nav.dismiss(animated: false)
            }
            spin()
            autoreleasepool {
                let banner = BannerViewController()
                list.addChild(banner)
                list.view.addSubview(banner.view)
                banner.didMove(toParent: list)
                spin()
                ids["banner"] = id(banner)
                banner.willMove(toParent: nil)
                banner.view.removeFromSuperview()
                banner.removeFromParent()
            }
            spin()
            ids["nav"] = id(nav)
            ids["list"] = id(list)
        }
        spin(1.5)  // past the grace period, so a missing deinit would show
        let events = try stopAndRead()
        XCTAssertEqual(try findings(events).map { "\($0.rule) \($0.cls ?? "") \($0.message)" }, [])

        func has(_ kind: EventKind, _ vc: String?, other: String? = nil) -> Bool {
            events.contains { $0.kind == kind && $0.vc == vc && (other == nil || $0.other == other) }
        }
        let (nav, list, detail, modal, banner) = (ids["nav"], ids["list"], ids["detail"], ids["modal"], ids["banner"])
        XCTAssertTrue(has(.push, nav, other: detail))
        XCTAssertTrue(has(.pop, nav, other: detail))
        XCTAssertTrue(has(.present, nav, other: modal))
        XCTAssertTrue(has(.dismiss, modal))
        XCTAssertTrue(has(.addChild, banner, other: list))
        XCTAssertTrue(has(.removeFromParent, banner, other: list))
        XCTAssertTrue(has(.viewAttached, banner, other: list))
        for gone in [detail, modal, banner] { XCTAssertTrue(has(.`deinit`, gone), "no deinit for \(gone ?? "?")") }
        XCTAssertTrue(events.contains { $0.name == "windowRoot" && $0.vc == nav })
        let inits = events.filter { $0.kind == .`init` }
        XCTAssertEqual(inits.first { $0.vc == nav }?.attrs, #"{"uikit":"UINavigationController"}"#)
        XCTAssertEqual(inits.first { $0.vc == detail }?.cls, "DetailViewController")
        XCTAssertTrue(events.contains { $0.kind == .viewIsAppearing && $0.vc == detail } || !UIViewController.instancesRespond(to: NSSelectorFromString("viewIsAppearing:")))
    }

    private var kept: UIViewController?

    /// A controller still held after its pop is LC301.
    func testControllerRetainedAfterPopIsLC301() throws {
        let nav = UINavigationController(rootViewController: ListViewController())
        window.rootViewController = nav
        window.makeKeyAndVisible()
        spin()
        let leaky = LeakyDetailViewController()
        kept = leaky
        nav.pushViewController(leaky, animated: false)
        spin()
        nav.popViewController(animated: false)
        spin(2)
        UIKitRecording.current?.mark("the session goes on past the grace period")
        let events = try stopAndRead()
        let leaks = try findings(events).filter { $0.rule == "LC301" }
        XCTAssertEqual(leaks.map(\.cls), ["LeakyDetailViewController"])
        kept = nil
    }
}
#endif

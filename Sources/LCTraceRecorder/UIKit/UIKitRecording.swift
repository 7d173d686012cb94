#if canImport(UIKit) && !os(watchOS)
import UIKit
import LCTraceFormat

/// Recording on iOS: UIKit's controller callbacks, the scenes' and the app's life cycle,
/// into a `TraceRecorder`. For DEBUG and QA builds:
///
///     // application(_:didFinishLaunchingWithOptions:), before any window
///     try UIKitRecording.start()
@MainActor
public enum UIKitRecording {
    private static var recorder: TraceRecorder?
    private static var observers: [NSObjectProtocol] = []
    /// Scene ids whose `sceneWillConnect` is recorded (a scene seen at start and then notified counts once).
    private static var connected = Set<String>()

    /// Starts a session and installs the hooks (once per process; they stay). While a
    /// session runs, returns its recorder. Start before the first scene connects.
    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    @discardableResult
    public static func start(_ configuration: RecorderConfiguration = RecorderConfiguration()) throws -> TraceRecorder {
        try begin(configuration) { recorder in
            observeApplication(recorder)
            // A recorder started from a scene delegate: the scenes already there, as they are now.
            for scene in UIApplication.shared.connectedScenes {
                let id = scene.session.persistentIdentifier
                if connected.insert(id).inserted { recorder.scene(.willConnect, scene: id) }
                if scene.activationState == .foregroundActive { recorder.scene(.didBecomeActive, scene: id) }
                if scene.activationState == .background { recorder.scene(.didEnterBackground, scene: id) }
            }
        }
    }

    /// `start` in an app extension: no `UIApplication`, no scenes (the session record says
    /// `extension`); the host's notifications are marks, and backgrounding flushes.
    @discardableResult
    public static func startInAppExtension(_ configuration: RecorderConfiguration = RecorderConfiguration()) throws -> TraceRecorder {
        try begin(configuration) { recorder in
            let host: [(Notification.Name, ExtensionHostMark)] = [
                (.NSExtensionHostWillEnterForeground, .willEnterForeground),
                (.NSExtensionHostDidBecomeActive, .didBecomeActive),
                (.NSExtensionHostWillResignActive, .willResignActive),
                (.NSExtensionHostDidEnterBackground, .didEnterBackground),
            ]
            for (name, mark) in host { observe(name) { _ in recorder.mark(mark.rawValue) } }
            observe(.NSExtensionHostDidEnterBackground) { _ in
                ProcessInfo.processInfo.performExpiringActivity(withReason: "lctrace-recorder flush") { expired in
                    if !expired { recorder.flush(timeout: 2) }
                }
            }
            observe(UIApplication.didReceiveMemoryWarningNotification) { _ in recorder.memoryWarning() }
        }
    }

    /// Ends the session (`sessionEnd` `stopped`); the hooks stay installed and record nothing.
    public static func stop() {
        UIKitHooks.active.tracker = nil
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        observers = []
        connected = []
        recorder?.stop()
        recorder = nil
    }

    /// The recorder running now: `mark(_:)` for QA steps, `finishedFiles()` for upload, the manual API.
    public static var current: TraceRecorder? { recorder }

    /// A controller's id (its `init` recorded if this is its first sight), to name it in the
    /// manual API; nil when not recording or when its class is left out.
    public static func instanceID(of controller: UIViewController) -> InstanceID? {
        UIKitHooks.active.tracker?.instanceID(of: controller)
    }

    /// The hooks without any notification or `UIApplication` (the iOS-simulator tests, which
    /// run without an app).
    package static func startHooksOnly(_ configuration: RecorderConfiguration) throws -> TraceRecorder {
        try begin(configuration) { _ in }
    }

    private static func begin(_ configuration: RecorderConfiguration, observing: (TraceRecorder) -> Void) throws -> TraceRecorder {
        if let recorder { return recorder }
        let started = try TraceRecorder(configuration: configuration)
        recorder = started
        UIKitHooks.active.tracker = ControllerTracker(recorder: started, storage: AssociatedSentinels(), naming: RuntimeNaming())
        UIKitHooks.install(layout: configuration.recordsLayout)
        observing(started)
        return started
    }

    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    private static func observeApplication(_ recorder: TraceRecorder) {
        let scenes: [(Notification.Name, SceneEvent)] = [
            (UIScene.willConnectNotification, .willConnect), (UIScene.didActivateNotification, .didBecomeActive),
            (UIScene.willDeactivateNotification, .willResignActive), (UIScene.willEnterForegroundNotification, .willEnterForeground),
            (UIScene.didEnterBackgroundNotification, .didEnterBackground), (UIScene.didDisconnectNotification, .didDisconnect),
        ]
        for (name, event) in scenes {
            observe(name) { scene in
                guard let id = scene?.session.persistentIdentifier else { return }
                if event == .willConnect && !connected.insert(id).inserted { return }
                if event == .didDisconnect { connected.remove(id) }
                recorder.scene(event, scene: id)
            }
        }
        // The delegate's four state transitions are called only without a scene life cycle
        // (and deprecated by the iOS 26 SDK: LC501); their notifications come either way, so
        // they are recorded only then.
        var app: [(Notification.Name, AppEvent)] = [(UIApplication.didFinishLaunchingNotification, .didFinishLaunching)]
        if Bundle.main.object(forInfoDictionaryKey: "UIApplicationSceneManifest") == nil {
            app += [(UIApplication.didBecomeActiveNotification, .didBecomeActive), (UIApplication.willResignActiveNotification, .willResignActive),
                    (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
                    (UIApplication.willEnterForegroundNotification, .willEnterForeground)]
        }
        for (name, event) in app { observe(name) { _ in recorder.app(event) } }
        observe(UIApplication.didReceiveMemoryWarningNotification) { _ in recorder.memoryWarning() }
        // Backgrounded: write what waits inside a background task (the app may be killed
        // suspended; willTerminate and didDisconnect may never come).
        observe(UIApplication.didEnterBackgroundNotification) { _ in
            let task = BackgroundTask()
            task.id = UIApplication.shared.beginBackgroundTask(withName: "lctrace-recorder flush") { task.end() }
            recorder.flush { Task { @MainActor in task.end() } }
        }
        observe(UIApplication.willTerminateNotification) { _ in
            recorder.app(.willTerminate)
            UIKitHooks.active.tracker = nil
            recorder.stop(reason: .terminate, timeout: 2)
        }
    }

    /// `body` on the main thread for each `name` (UIKit posts these there), with the scene
    /// the notification is about, if any.
    private static func observe(_ name: Notification.Name, _ body: @escaping @MainActor @Sendable (UIScene?) -> Void) {
        observers.append(NotificationCenter.default.addObserver(forName: name, object: nil, queue: .main) { note in
            let scene = note.object as? UIScene
            guard Thread.isMainThread else { return }
            MainActor.assumeIsolated { body(scene) }
        })
    }
}

/// A background task's id, ended once from whichever side finishes first.
@MainActor
private final class BackgroundTask {
    var id = UIBackgroundTaskIdentifier.invalid

    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    func end() {
        guard id != .invalid else { return }
        UIApplication.shared.endBackgroundTask(id)
        id = .invalid
    }
}
#endif

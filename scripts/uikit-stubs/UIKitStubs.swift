// Stand-ins for the UIKit and Objective-C runtime API that LCTraceRecorder's UIKit adapter
// and its simulator tests use, so that scripts/check-uikit-adapter can compile them on Linux
// in Swift 6 mode: main-actor isolation and Sendable checked against declarations shaped
// like UIKit's (UIKit's classes are @MainActor). Not checked: Objective-C representability,
// selectors, the real signatures (read those against Apple's documentation).
import Foundation

public struct Selector: Hashable, Sendable { let name: String }
public func NSSelectorFromString(_ s: String) -> Selector { Selector(name: s) }
public typealias OpaqueMethod = OpaquePointer
public typealias Method = OpaquePointer
public typealias IMP = OpaquePointer
public func class_copyMethodList(_ c: AnyClass?, _ count: UnsafeMutablePointer<UInt32>?) -> UnsafeMutablePointer<Method>? { nil }
public func method_getName(_ m: Method) -> Selector { Selector(name: "") }
public func method_getImplementation(_ m: Method) -> IMP { m }
@discardableResult public func method_setImplementation(_ m: Method, _ i: IMP) -> IMP { i }
public func imp_implementationWithBlock(_ block: Any) -> IMP { OpaquePointer(bitPattern: 1)! }
public func class_getSuperclass(_ c: AnyClass?) -> AnyClass? { nil }
public func objc_getAssociatedObject(_ o: Any, _ k: UnsafeRawPointer) -> Any? { nil }
public enum objc_AssociationPolicy { case OBJC_ASSOCIATION_RETAIN }
public func objc_setAssociatedObject(_ o: Any, _ k: UnsafeRawPointer, _ v: Any?, _ p: objc_AssociationPolicy) {}
public func NSStringFromClass(_ c: AnyClass) -> String { String(describing: c) }
extension NSObject { public var classForCoder: AnyClass { type(of: self) } }
extension Bundle { public convenience init(for: AnyClass) { self.init(path: "/")! } }

@MainActor open class UIResponder: NSObject { open var next: UIResponder? { nil } }
public enum UIUserInterfaceSizeClass: Int, Hashable { case unspecified, compact, regular }
public enum UIUserInterfaceStyle: Int, Hashable { case unspecified, light, dark }
public final class UITraitCollection: NSObject, @unchecked Sendable {
    public var horizontalSizeClass: UIUserInterfaceSizeClass { .compact }
    public var verticalSizeClass: UIUserInterfaceSizeClass { .regular }
    public var userInterfaceStyle: UIUserInterfaceStyle { .light }
}
public struct CGSize { public var width: Double; public var height: Double }
public struct CGRect { public var size: CGSize; public var width: Double { size.width }; public var height: Double { size.height } }
@MainActor open class UIView: UIResponder {
    open var superview: UIView? { nil }
    open var bounds: CGRect { CGRect(size: CGSize(width: 1, height: 1)) }
    open var window: UIWindow? { nil }
}
public protocol UIViewControllerTransitionCoordinator { var isInteractive: Bool { get } }
public enum UIModalPresentationStyle: Int { case fullScreen, pageSheet, formSheet, currentContext, custom, overFullScreen, overCurrentContext, popover, none, automatic }
@MainActor open class UIPresentationController: NSObject { open var presentationStyle: UIModalPresentationStyle { .automatic } }
@MainActor open class UIViewController: UIResponder {
    open var isMovingToParent: Bool { false }
    open var isMovingFromParent: Bool { false }
    open var isBeingPresented: Bool { false }
    open var isBeingDismissed: Bool { false }
    open var isViewLoaded: Bool { false }
    open var viewIfLoaded: UIView? { nil }
    open var parent: UIViewController? { nil }
    open var presentedViewController: UIViewController? { nil }
    open var presentingViewController: UIViewController? { nil }
    open var presentationController: UIPresentationController? { nil }
    open var modalPresentationStyle: UIModalPresentationStyle = .automatic
    open var transitionCoordinator: (any UIViewControllerTransitionCoordinator)? { nil }
    open var traitCollection: UITraitCollection { UITraitCollection() }
}
@MainActor open class UIGestureRecognizer: NSObject {
    public enum State: Int { case possible, began, changed, ended }
    open var state: State { .possible }
}
@MainActor open class UINavigationController: UIViewController {
    open var viewControllers: [UIViewController] = []
    open var interactivePopGestureRecognizer: UIGestureRecognizer? { nil }
}
@MainActor open class UISceneSession: NSObject { open var persistentIdentifier: String { "" } }
@MainActor open class UIScene: UIResponder {
    public enum ActivationState: Int { case unattached, foregroundActive, foregroundInactive, background }
    open var session: UISceneSession { UISceneSession() }
    open var activationState: ActivationState { .unattached }
    nonisolated public static let willConnectNotification = Notification.Name("a")
    nonisolated public static let didActivateNotification = Notification.Name("b")
    nonisolated public static let willDeactivateNotification = Notification.Name("c")
    nonisolated public static let willEnterForegroundNotification = Notification.Name("d")
    nonisolated public static let didEnterBackgroundNotification = Notification.Name("e")
    nonisolated public static let didDisconnectNotification = Notification.Name("f")
}
@MainActor open class UIWindowScene: UIScene {}
@MainActor open class UIWindow: UIView {
    open var rootViewController: UIViewController?
    open var windowScene: UIWindowScene? { nil }
}
public struct UIBackgroundTaskIdentifier: Equatable, Sendable { public static let invalid = UIBackgroundTaskIdentifier(); }
@MainActor open class UIApplication: UIResponder {
    public static var shared: UIApplication { UIApplication() }
    open var connectedScenes: Set<UIScene> { [] }
    open func beginBackgroundTask(withName: String?, expirationHandler: (@MainActor @Sendable () -> Void)?) -> UIBackgroundTaskIdentifier { .invalid }
    open func endBackgroundTask(_ id: UIBackgroundTaskIdentifier) {}
    nonisolated public static let didFinishLaunchingNotification = Notification.Name("g")
    nonisolated public static let didBecomeActiveNotification = Notification.Name("h")
    nonisolated public static let willResignActiveNotification = Notification.Name("i")
    nonisolated public static let didEnterBackgroundNotification = Notification.Name("j")
    nonisolated public static let willEnterForegroundNotification = Notification.Name("k")
    nonisolated public static let willTerminateNotification = Notification.Name("l")
    nonisolated public static let didReceiveMemoryWarningNotification = Notification.Name("m")
}
extension Notification.Name {
    public static let NSExtensionHostWillEnterForeground = Notification.Name("n")
    public static let NSExtensionHostDidBecomeActive = Notification.Name("o")
    public static let NSExtensionHostWillResignActive = Notification.Name("p")
    public static let NSExtensionHostDidEnterBackground = Notification.Name("q")
}
extension ProcessInfo { public func performExpiringActivity(withReason: String, using block: @escaping @Sendable (Bool) -> Void) {} }
extension CGRect { public init(x: Double, y: Double, width: Double, height: Double) { self.init(size: CGSize(width: width, height: height)) } }
@MainActor public final class UIDevice { public static var current: UIDevice { UIDevice() }; public var systemVersion: String { "17.0" } }
extension UIView { public func addSubview(_ v: UIView) {}; public func removeFromSuperview() {} }
extension UIWindow { public convenience init(frame: CGRect) { self.init() }; public func makeKeyAndVisible() {} }
extension UIViewController {
    public var view: UIView! { UIView() }
    public func addChild(_ c: UIViewController) {}
    public func willMove(toParent: UIViewController?) {}
    public func didMove(toParent: UIViewController?) {}
    public func removeFromParent() {}
    public func present(_ vc: UIViewController, animated: Bool, completion: (() -> Void)? = nil) {}
    public func dismiss(animated: Bool, completion: (() -> Void)? = nil) {}
    nonisolated public static func instancesRespond(to: Selector) -> Bool { true }
}
extension UINavigationController {
    public convenience init(rootViewController: UIViewController) { self.init() }
    public func pushViewController(_ vc: UIViewController, animated: Bool) {}
    @discardableResult public func popViewController(animated: Bool) -> UIViewController? { nil }
}
public func autoreleasepool<R>(invoking body: () throws -> R) rethrows -> R { try body() }

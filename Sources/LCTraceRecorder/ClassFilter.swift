/// Which controller classes are left out of the trace, by their runtime name
/// (`NSStringFromClass`): a name list, not an image or bundle test (those break under Xcode
/// 16's debug dylib), and a `_` prefix that spares Swift's mangled `_Tt…` app classes.
public struct ClassFilter: Sendable {
    /// UIKit's input-system and other plumbing controllers (the lists Splunk and GrowingIO
    /// publish): they come and go with the keyboard and say nothing about the app.
    public static let inputSystemClasses: Set<String> = [
        "UIInputWindowController", "UICompatibilityInputViewController", "UISystemKeyboardDockController",
        "UIEditingOverlayViewController", "UIPredictionViewController", "UISystemInputAssistantViewController",
        "UIApplicationRotationFollowingController", "UITrackingElementWindowController",
        "UIKBSystemLayoutViewController", "UIActivityGroupViewController", "UIKeyboardHiddenViewController",
        "UICandidateViewController", "UIKeyboardCameraViewController",
    ]

    /// Exact runtime names left out.
    public var excludedNames: Set<String> = ClassFilter.inputSystemClasses
    /// Names that are recorded whatever else says (an app's own class that looks private).
    public var includedNames: Set<String> = []
    /// Leaves out `_`-prefixed (private) classes, but not Swift's mangled `_Tt…` names
    /// unless their module is SwiftUI.
    public var excludesPrivateClasses = true
    /// Leaves out SwiftUI's own controllers (`UIHostingController<…>` and its containers).
    /// An app's own hosting subclass lives in the app's module and is kept.
    public var excludesSwiftUIControllers = true

    public init() {}

    public func excludes(runtimeName name: String) -> Bool {
        if includedNames.contains(name) { return false }
        if excludedNames.contains(name) { return true }
        if excludesSwiftUIControllers && ClassFilter.isSwiftUI(name) { return true }
        if excludesPrivateClasses && name.hasPrefix("_") && !name.hasPrefix("_Tt") { return true }
        return false
    }

    /// `SwiftUI.X`, or a mangled `_Tt…` name whose first module is SwiftUI (`_TtGC7SwiftUI19UIHostingController…`).
    static func isSwiftUI(_ name: String) -> Bool {
        if name.hasPrefix("SwiftUI.") || name.hasPrefix("SwiftUICore.") { return true }
        guard let module = mangledModule(name) else { return false }
        return module == "SwiftUI" || module == "SwiftUICore"
    }

    /// The first module of a mangled Swift class name: after `_Tt` and the kind letters, a
    /// length and that many characters. Nil for anything else.
    static func mangledModule(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.count > 3, bytes[0] == 0x5f, bytes[1] == 0x54, bytes[2] == 0x74 else { return nil }
        var i = 3
        while i < bytes.count, bytes[i] >= 0x41, bytes[i] <= 0x5a { i += 1 }  // C, G, V, …
        var length = 0
        let digitsStart = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, length < 1000 {
            length = length * 10 + Int(bytes[i] - 0x30)
            i += 1
        }
        guard i > digitsStart, length > 0, i + length <= bytes.count else { return nil }
        return String(decoding: bytes[i..<(i + length)], as: UTF8.self)
    }
}

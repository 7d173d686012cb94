import XCTest
@testable import LCTraceRecorder

/// The default class filter: UIKit's private and input-system controllers and SwiftUI's own
/// out; app classes in, whatever Swift's runtime names look like.
final class ClassFilterTests: XCTestCase {
    func testDefaultFilter() {
        let filter = ClassFilter()
        let out = ["UIInputWindowController", "UICompatibilityInputViewController", "_UIAlertControllerTextFieldViewController",
                   "_UIRemoteViewController", "SwiftUI.PresentationHostingController", "_TtGC7SwiftUI19UIHostingControllerV5MyApp11ContentView_",
                   "_TtC7SwiftUI32NavigationStackHostingController"]
        let kept = ["MyApp.ProductListViewController", "UINavigationController", "UIAlertController", "UIViewController",
                    // An app's private, nested and generic Swift classes have mangled `_Tt` names; its own
                    // hosting subclass lives in the app's module.
                    "_TtC5MyAppP33_0123456789ABCDEF0123456789ABCDEF14PrivateListVC", "_TtCC5MyApp5Outer5Inner",
                    "_TtGC5MyApp12ListOfThingsSS_", "MyApp.SettingsHostingController"]
        for name in out { XCTAssertTrue(filter.excludes(runtimeName: name), name) }
        for name in kept { XCTAssertFalse(filter.excludes(runtimeName: name), name) }
    }

    func testMangledModule() {
        XCTAssertEqual(ClassFilter.mangledModule("_TtGC7SwiftUI19UIHostingControllerV5MyApp11ContentView_"), "SwiftUI")
        XCTAssertEqual(ClassFilter.mangledModule("_TtCC5MyApp5Outer5Inner"), "MyApp")
        XCTAssertNil(ClassFilter.mangledModule("_TtC"))
        XCTAssertNil(ClassFilter.mangledModule("_TtC99Short"))
        XCTAssertNil(ClassFilter.mangledModule("MyApp.Thing"))
    }

    func testConfigurable() {
        var filter = ClassFilter()
        filter.includedNames = ["_MyOwnController"]
        filter.excludedNames.insert("MyApp.DebugOverlayController")
        filter.excludesSwiftUIControllers = false
        XCTAssertFalse(filter.excludes(runtimeName: "_MyOwnController"))
        XCTAssertTrue(filter.excludes(runtimeName: "MyApp.DebugOverlayController"))
        XCTAssertFalse(filter.excludes(runtimeName: "_TtGC7SwiftUI19UIHostingControllerV5MyApp11ContentView_"))
        filter.excludesPrivateClasses = false
        XCTAssertFalse(filter.excludes(runtimeName: "_UIRemoteViewController"))
    }
}

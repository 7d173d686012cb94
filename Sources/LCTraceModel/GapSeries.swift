/// Appearances of one class, animated or not: a series of viewIsAppearing → viewDidAppear gaps.
package struct GapSeries: Hashable, Sendable {
    package var cls: String
    package var animated: Bool
    package init(cls: String, animated: Bool) { self.cls = cls; self.animated = animated }
}

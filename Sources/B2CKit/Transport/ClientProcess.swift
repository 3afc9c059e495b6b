import NIOCore

/// What the client's program sets for its own process, first thing in its `main`; the library leaves an application's
/// process as the application set it.
package enum ClientProcess {
    /// One event loop instead of one per core: a command makes its requests one after another, on one connection at a
    /// time (`DirectRoutes`), and every loop of the group is a thread started and torn down with every run
    /// (bench/README.md, "A cheaper start"). Must run before anything uses NIO's shared group.
    package static func prepare() {
        NIOSingletons.groupLoopCountSuggestion = 1
    }
}

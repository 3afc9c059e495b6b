import CExecutorHook
import NIOCore
import NIOPosix

/// Runs Swift concurrency's global jobs on NIO's event loops while the tenant serves.
///
/// Hummingbird reads and writes each connection on an event loop, and the handler runs as a task. With the default
/// global executor every request therefore crosses threads twice (event loop → concurrency pool → event loop); with
/// the event loops as the global executor the task runs on the loop that owns its connection. This is what NIO's
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()` does, but that looks the
/// runtime's hook up with `dlsym`, and a static Swift standard library keeps it out of the dynamic symbol table; the C
/// shim reaches it by linking instead. bench/README.md ("emulator throughput") has the measurement.
///
/// A job is run as the global executor's own threads run theirs, isolated to no serial executor, not as a job of the
/// loop's (`ExecutorJob.runSynchronously(on:)` with the loop, what NIO's hook does): on the loop's serial executor,
/// every call of a nonisolated async function is a hop the runtime cannot take in place, and the task went back through
/// the loop's queue about fifty times per token request (bench/README.md, "a job per hop").
enum EventLoopExecutor {
    /// How many event loops the singleton group runs (one per core unless NIO is told otherwise).
    static var loops: Int { NIOSingletons.groupLoopCountSuggestion }

    /// Installs the hook; false when another hook was already set (then jobs stay on the default pool).
    static func install() -> Bool {
        b2c_install_global_enqueue_hook { job, _ in
            // `any()` is the current loop when called on one of the group's threads: a task stays where it runs.
            let job = GlobalJob(pointer: job)
            MultiThreadedEventLoopGroup.singleton.any().execute { b2c_run_global_job(job.pointer) }
        }
    }

    /// A job of the runtime's, handed to the loop that runs it once.
    private struct GlobalJob: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer?
    }
}

import Foundation

/// The descriptors a process of ours needs: libdispatch's event thread (started by the first task) and SwiftNIO's event
/// loops trap (SIGILL) when `epoll_create` or `eventfd` finds none left. Checked by the first line of each program's
/// `main`, before any task or thread: a soft limit below it is raised to the hard limit; a hard limit below it is
/// reported, exit 5.
package enum DescriptorLimit {
    package static let needed: rlim_t = 64

    package static func ensure(program: String) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < needed else { return }
        if limit.rlim_max >= needed {
            limit.rlim_cur = min(limit.rlim_max, 1024)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { return }
        }
        FileHandle.standardError.write(
            Data(
                ("\(program): this shell allows only \(limit.rlim_cur) open files (ulimit -n), and \(program) needs at least \(needed). "
                    + "Raise the limit (ulimit -n 1024) and run it again; nothing was done.\n").utf8))
        exit(ExitStatus.network)
    }
}

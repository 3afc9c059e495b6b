import Foundation
import NIOCore
import NIOHTTPTypes

/// How long a client may take to send a request, and how many clients are served at once: a silent, idle or trickling
/// client (a slow loris) cannot hold the tenant, and connections never use up its descriptors.
public struct ConnectionLimits: Sendable, Equatable {
    /// The time a client has to send a whole request, head and body, counted from when it connected or got its
    /// previous answer; then its connection is closed. An idle keep-alive connection goes the same way. The time the
    /// tenant takes to answer is not counted.
    public var readTimeout: Duration
    /// Connections served at once. Beyond it the tenant stops accepting: new connections wait in the listen backlog
    /// until one closes.
    public var maxConnections: Int

    public static let defaultReadTimeout = Duration.seconds(30)

    /// `maxConnections` nil: what the descriptor limit allows (`connectionsTheDescriptorsAllow()`).
    public init(readTimeout: Duration = defaultReadTimeout, maxConnections: Int? = nil) {
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections ?? Self.connectionsTheDescriptorsAllow()
    }

    /// Three quarters of the descriptors this process has left (its soft limit, `ulimit -n`, less those open now), at
    /// most 10,000 and at least 1. The quarter kept back is for what the tenant opens itself (its database, the calls
    /// it makes), so that `accept` does not run out of descriptors before the cap is reached.
    public static func connectionsTheDescriptorsAllow() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 10_000 }
        let left = Int(clamping: limit.rlim_cur) - openDescriptors()
        return min(10_000, max(1, left * 3 / 4))
    }

    /// What the listening socket needs for these limits: one connection per read, so that the cap holds exactly (SwiftNIO
    /// accepts up to four per read, and the cap is checked between reads), and a pause after a failed `accept`.
    static func prepare(listener channel: any Channel) async {
        try? await channel.eventLoop.submit {
            try channel.syncOptions?.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
            try channel.pipeline.syncOperations.addHandler(AcceptPauseHandler(), position: .first)
        }.get()
    }

    /// The descriptors this process has open (a guess of 32 where the system does not list them).
    static func openDescriptors() -> Int {
        for directory in ["/proc/self/fd", "/dev/fd"] {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) { return names.count }
        }
        return 32
    }
}

/// Closes a connection whose client has not sent a whole request (head and body) within the read timeout, counted from
/// when it connected or got its previous answer. A deadline for the whole request, not an idle timer: a client that
/// trickles a byte at a time is cut off as surely as a silent one. (Hummingbird's `idleTimeout` restarts at every body
/// part, so a trickled body would hold a connection for as long as its client likes.) While a request is being
/// answered, no deadline runs.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    /// When the client's time to send a whole request began; nil while a request is being answered (or after the end).
    private var since: NIODeadline?
    /// The one timer of the connection. It is not moved at every request: when it fires, it closes the connection if the
    /// client's time is up, and otherwise waits for the rest of it. (Cancelling and scheduling a timer at every request
    /// cost a client-credentials grant two operations on the event loop's timer heap and often a `timerfd_settime`.)
    private var timer: Scheduled<Void>?
    /// Requests read whole and not answered yet.
    private var unanswered = 0

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startDeadline(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { stopTimer() }

    func channelActive(context: ChannelHandlerContext) {
        startDeadline(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        since = nil
        stopTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            unanswered += 1
            since = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            if unanswered == 0 { startDeadline(context) }
        }
        context.write(data, promise: promise)
    }

    /// The client's time starts now; the timer is set if none is (it stays set between requests).
    private func startDeadline(_ context: ChannelHandlerContext) {
        guard since == nil else { return }
        let now = NIODeadline.now()
        since = now
        if timer == nil { arm(context, at: now + timeout) }
    }

    private func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            // Answering a request: no time runs; the answer's end starts it again (and sets the timer).
            guard let since = self.since else { return }
            let due = since + self.timeout
            if NIODeadline.now() >= due {
                context.close(promise: nil)
            } else {
                self.arm(context, at: due)
            }
        }
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }
}

/// Stops accepting for a moment when `accept` fails for want of descriptors or memory. SwiftNIO's own
/// `AcceptBackoffHandler` delays the next read, but the failed accept leaves the read pending, so epoll reports the
/// listening socket again at once and the event loop retries `accept` as fast as it can (a core at 100 %). Turning
/// `autoRead` off takes the socket out of epoll until the pause ends.
final class AcceptPauseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    static let pause = TimeAmount.milliseconds(100)
    private var resumption: Scheduled<Void>?

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let io = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(io.errnoCode), resumption == nil,
            let options = context.channel.syncOptions
        {
            try? options.setOption(ChannelOptions.autoRead, value: false)
            resumption = context.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) {
                self.resumption = nil
                try? options.setOption(ChannelOptions.autoRead, value: true)
            }
        }
        context.fireErrorCaught(error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
    }
}

import Foundation
import Hummingbird
import NIOCore

/// Per request: the channel (peer address, injected connection drops), and what the authority-prefix parse found.
struct EmulatorRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// The tenant and policy the path (or `?p=`) named, and the form it used.
    var authority: AuthorityRef?
    /// The endpoint's name for fault injection (`token`, `authorize`, …; `admin` is never faulted).
    var endpoint = "any"
    /// `scheme://host[:port]` as the client addressed us (issuers and URLs mirror it).
    var origin = ""
    /// The path as the client sent it (before the authority prefix was taken off).
    var path = ""

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    var peerIsLoopback: Bool { PeerAddress.isLoopback(channel.remoteAddress) }
    var isHTTPS: Bool { origin.hasPrefix("https:") }
}

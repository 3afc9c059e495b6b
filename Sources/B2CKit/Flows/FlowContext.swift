import Foundation

/// What every flow works with, made once per client (`B2CClient.context`): the configuration, the store, the network (the
/// transport, the token endpoint with the app's credentials, discovery), and the clock. A flow is a small type holding
/// this and what it alone uses (a UI, a prompter), so each flow's fields say what is particular to it.
struct FlowContext: Sendable {
    let config: ClientConfiguration
    let store: TokenStore
    let transport: HTTPTransport
    let endpoint: TokenEndpoint
    let metadata: MetadataProvider
    /// Epoch seconds; tests move it.
    let clock: @Sendable () -> Int

    /// How token sets are made from a token response (the id token checked against discovery's keys).
    var tokenSets: TokenSetBuilder { TokenSetBuilder(config: config, metadata: metadata) }
    /// How long to wait for another process's refresh of the same token: the HTTP timeout.
    var lockTimeoutSeconds: Int { transport.timeoutSeconds }
}

/// A flow: its context's parts read as its own.
protocol Flow: Sendable {
    var context: FlowContext { get }
}

extension Flow {
    var config: ClientConfiguration { context.config }
    var store: TokenStore { context.store }
    var transport: HTTPTransport { context.transport }
    var endpoint: TokenEndpoint { context.endpoint }
    var metadata: MetadataProvider { context.metadata }
    var tokenSets: TokenSetBuilder { context.tokenSets }
    var clock: @Sendable () -> Int { context.clock }
    var lockTimeoutSeconds: Int { context.lockTimeoutSeconds }
}

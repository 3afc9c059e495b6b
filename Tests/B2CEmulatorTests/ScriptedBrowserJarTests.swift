import B2CEmulator
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The scripted browser's cookie jar as the next visit finds it. `b2c signin` opens the resumed sign-in as soon as the
/// reset's answer reaches its listener, and that visit is another process reading the jar: CI once saw it read the jar
/// before the reset's visit had written it, so it chose "Forgot your password?" a second time.
@Suite("The scripted browser's jar")
struct ScriptedBrowserJarTests {
    /// An app's loopback listener that reads the jar file (and how many answers `onAnswer` had seen) before it answers:
    /// what it read is what a visit opened at once would read. A jar written after the answer is seen as missing.
    final class PeekingApp: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let jar: String
        let seen: NIOLockedValueBox<[(jar: String?, announced: Int)]>
        let announced: NIOLockedValueBox<[URL]>

        init(jar: String, seen: NIOLockedValueBox<[(jar: String?, announced: Int)]>, announced: NIOLockedValueBox<[URL]>) {
            self.jar = jar
            self.seen = seen
            self.announced = announced
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            let text = try? String(contentsOfFile: jar, encoding: .utf8)
            let count = announced.withLockedValue { $0.count }
            seen.withLockedValue { $0.append((text, count)) }
            let headers = HTTPHeaders([("Content-Length", "0"), ("Connection", "close")])
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    @Test func theJarIsOnDiskBeforeTheAppHasItsAnswer() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jar = dir.appendingPathComponent("jar.json").path
        let seen = NIOLockedValueBox<[(jar: String?, announced: Int)]>([])
        let announced = NIOLockedValueBox<[URL]>([])
        let app = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(PeekingApp(jar: jar, seen: seen, announced: announced))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(app.localAddress?.port)
        var answers: [URL] = []
        try await TestTenant.with { t in
            // "Forgot your password?" on the sign-in page (the app gets AADB2C90118), then the reset the app opens for it.
            let persona = ScriptedBrowser.Persona(
                email: alice.email, password: alice.password, action: .forgot, newPassword: "Alice-new-2026!")
            let browser = try ScriptedBrowser(caFile: nil, jarPath: jar)
            do {
                for policy in ["B2C_1_susi", "B2C_1_reset"] {
                    let start = t.base + authorizeURL(policy: policy, redirectURI: "http://127.0.0.1:\(port)")
                    answers.append(
                        try await browser.run(URL(string: start)!, as: persona) { url in announced.withLockedValue { $0.append(url) } })
                }
            } catch {
                await browser.shutdown()
                throw error
            }
            await browser.shutdown()
            #expect(answers.count == 2 && answers[0].query?.contains("AADB2C90118") == true, "\(answers)")
            #expect(answers.count == 2 && answers[1].query?.contains("code=") == true, "\(answers)")
        }
        try? await app.close()
        let read = seen.withLockedValue { $0 }
        try #require(read.count == 2, "\(read)")
        // The agent's record of each answer (B2C_AGENT_RECORD) was made before the app had it.
        #expect(read.map(\.announced) == [1, 2] && announced.withLockedValue { $0 } == answers, "\(read)")
        // The reset's visit had written that the password is reset when its answer reached the app, so the sign-in the
        // app resumes at once signs in with the new password rather than asking to reset again.
        let text = try #require(read[1].jar, "the jar was not on disk when the app had the reset's answer")
        #expect(text.contains("reset-done:\(alice.email)"), "\(text)")
    }
}

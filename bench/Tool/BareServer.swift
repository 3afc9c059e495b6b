import B2CEmulator
import B2CProtocol
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import _CryptoExtras

/// `b2c-bench bare-server`: the least an HTTPS server on SwiftNIO can do per token request — TLS, HTTP/1, one RS256
/// signature with the tenant's signer over an access token's claims, a JSON answer — and nothing of the tenant's (no
/// routing, no store, no checks). A measurement, not a tenant: it answers every request the same, and bench/README.md
/// ("the connection's own costs") compares the tenant's grants with it under the same load.
final class BareTokenHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let signer: RS256Signer
    var keepAlive = true
    init(signer: RS256Signer) { self.signer = signer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h): keepAlive = h.isKeepAlive
        case .body: break
        case .end:
            let now = Int(Date().timeIntervalSince1970)
            let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"bench","typ":"JWT"}"#.utf8))
            // An access token's claims, of the size the tenant's client-credentials token has.
            let claims =
                #"{"aud":"00000000-0000-0000-0000-000000000001","#
                + #""iss":"https://contoso.b2clogin.com/11111111-1111-1111-1111-111111111111/v2.0/","#
                + #""iat":\#(now),"nbf":\#(now),"exp":\#(now + 3600),"sub":"22222222-2222-2222-2222-222222222222","#
                + #""tid":"11111111-1111-1111-1111-111111111111","azp":"33333333-3333-3333-3333-333333333333","#
                + #""ver":"1.0","scp":"","roles":["read"],"tfp":"B2C_1_susi"}"#
            let input = header + "." + Base64URL.encode(Array(claims.utf8))
            let jwt = input + "." + ((try? signer.signature(signingInput: input)) ?? "")
            let body = #"{"access_token":""# + jwt + #"","token_type":"Bearer","expires_in":3600,"not_before":\#(now)}"#
            var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
            buffer.writeString(body)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(buffer.readableBytes)")
            headers.add(name: "Cache-Control", value: "no-store")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

func bareServer(_ opts: [String: String]) throws {
    let dir = URL(fileURLWithPath: opts["dir"] ?? NSTemporaryDirectory() + "/bare-server")
    let tls = try EmulatorTLS.loadOrCreate(in: dir)
    let context = try NIOSSLContext(configuration: tls.serverConfiguration)
    let signer = RS256Signer(try _RSA.Signing.PrivateKey(keySize: .bits2048))
    let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandler(BareTokenHandler(signer: signer))
            }
        }
        .bind(host: "127.0.0.1", port: number(opts, "port", default: 0)).wait()
    FileHandle.standardOutput.write(Data("bare-server https://127.0.0.1:\(channel.localAddress?.port ?? 0) ca \(tls.caPath.path)\n".utf8))
    try channel.closeFuture.wait()
}

import AsyncHTTPClient
import B2CProtocol
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// One call the tenant made to the developer's code during a journey (an API connector, an authentication extension):
/// what was sent, what came back, how many attempts and how long — `GET /_admin/callouts` shows them, newest last.
struct CalloutRecord: Sendable {
    var at: Int
    /// `apiConnector` or `authenticationExtension`.
    var kind: String
    /// The connector's step or the extension's event.
    var step: String
    var policy: String
    var url: String
    var request: JSONValue
    var status: Int?
    var response: String?
    var attempts: Int
    var durationMs: Int
    /// What the tenant made of the answer: `continue`, `block`, `validationError`, or the failure's code.
    var outcome: String
    var error: String?
    /// The journey that made the call (the recorder's id).
    var journey: String? = nil

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "at": JSONValue(at), "kind": .string(kind), "step": .string(step), "policy": .string(policy), "url": .string(url),
            "request": request, "attempts": JSONValue(attempts), "durationMs": JSONValue(durationMs), "outcome": .string(outcome),
        ]
        if let status { o["status"] = JSONValue(status) }
        if let response { o["response"] = (try? JSONValue.parse(response)) ?? .string(response) }
        if let error { o["error"] = .string(error) }
        if let journey { o["journey"] = .string(journey) }
        return .object(o)
    }
}

/// The tenant's callouts, in memory (the last 500).
final class CalloutLog: Sendable {
    private let records = NIOLockedValueBox<[CalloutRecord]>([])

    func append(_ r: CalloutRecord) { records.withLockedValue { $0 = Array(($0 + [r]).suffix(500)) } }
    var all: [CalloutRecord] { records.withLockedValue { $0 } }
    func clear() { records.withLockedValue { $0 = [] } }
}

/// A JSON POST (or a GET) to the developer's endpoint with B2C's patience: a timeout per attempt, and a retry when no answer came
/// (a timeout or no connection) — never after an answer, whatever its status.
enum CalloutHTTP {
    struct Answer {
        var status: Int
        var reason = ""
        var contentType: String?
        var body: Data
    }

    enum Failure: Error {
        case timedOut
        /// The answer was larger than the 1 MiB the tenant reads.
        case tooLarge
        case unreachable(String)
        case misconfigured(String)
    }

    struct Outcome {
        var answer: Result<Answer, Failure>
        var attempts: Int
        var durationMs: Int
    }

    static func post(
        _ url: String, json body: JSONValue, headers: [(String, String)], tls: TLSConfiguration?, timeout: TimeAmount, retries: Int
    ) async -> Outcome {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body.serialized()))
        return await send(request, tls: tls, timeout: timeout, retries: retries)
    }

    /// A GET without a body (a custom policy's REST API asked with `SendClaimsIn` `QueryString`), with the same patience.
    static func get(_ url: String, headers: [(String, String)], tls: TLSConfiguration?, timeout: TimeAmount) async -> Outcome {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return await send(request, tls: tls, timeout: timeout, retries: 0)
    }

    private static func send(_ request: HTTPClientRequest, tls: TLSConfiguration?, timeout: TimeAmount, retries: Int) async -> Outcome {
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Int { Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000) }
        // A client of its own: no redirects (a 307 would carry the claims elsewhere), and its own TLS when it needs one.
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.timeout.read = timeout
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var attempts = 0
        var last = Failure.timedOut
        var answer: Answer?
        while attempts <= retries, answer == nil {
            attempts += 1
            do {
                // The deadline covers the whole answer, body included (the request's own timeout ends at its headers).
                let deadline = NIODeadline.now() + timeout
                let response = try await client.execute(request, deadline: deadline)
                let data = Data(buffer: try await Self.collect(response.body, before: deadline))
                answer = Answer(
                    status: Int(response.status.code), reason: response.status.reasonPhrase,
                    contentType: response.headers.first(name: "content-type"), body: data)
            } catch let e as HTTPClientError where e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout {
                last = .timedOut
            } catch is NIOTooManyBytesError {
                last = .tooLarge
                break  // an answer came: no retry
            } catch {
                last = .unreachable(String(describing: error).prefix(200).description)
            }
        }
        try? await client.shutdown()
        return Outcome(answer: answer.map { .success($0) } ?? .failure(last), attempts: attempts, durationMs: elapsed())
    }

    /// An answer's body, at most `limit` bytes, read before `deadline` (an endpoint that sends headers and then waits is a timeout).
    static func collect(
        _ body: HTTPClientResponse.Body, upTo limit: Int = 1 << 20, before deadline: NIODeadline
    ) async throws
        -> ByteBuffer
    {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(0, (deadline - .now()).nanoseconds)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else { throw HTTPClientError.deadlineExceeded }
            return buffer
        }
    }

    /// The TLS a connector needs beyond the defaults: its client certificate, a private CA.
    static func tls(certificateFile: String?, keyFile: String?, caFile: String?) throws(Failure) -> TLSConfiguration? {
        guard certificateFile != nil || caFile != nil else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            if let certificateFile, let keyFile {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            }
        } catch {
            throw .misconfigured("the client certificate '\(certificateFile ?? "")' or its key '\(keyFile ?? "")' cannot be read as PEM")
        }
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else { throw .misconfigured("the CA file '\(caFile)' cannot be read") }
            tls.additionalTrustRoots = [.file(caFile)]
        }
        return tls
    }
}

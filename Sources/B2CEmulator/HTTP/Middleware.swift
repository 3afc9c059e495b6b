import B2CProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The request log: method, path without the query, status — queries and bodies carry codes and tokens.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let started = ContinuousClock.now
            let response = try await next(request, context)
            logger.info(
                "\(request.method.rawValue) \(request.uri.path) → \(response.status.code)",
                metadata: [
                    "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                    "ms": "\(Int((ContinuousClock.now - started) / .milliseconds(1)))",
                ])
            return response
        } catch {
            logger.info(
                "\(request.method.rawValue) \(request.uri.path) → dropped",
                metadata: ["method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "dropped"])
            throw error
        }
    }
}

/// Injected faults (`POST /_admin/faults`) on the next requests of an endpoint; the admin surface is never faulted.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let emulator: B2CEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.endpoint != "admin", let fault = emulator.takeFault(for: context.endpoint) else {
            return try await next(request, context)
        }
        switch fault.kind {
        case .delay:
            try? await Task.sleep(nanoseconds: UInt64(fault.delayMilliseconds) * 1_000_000)
            return try await next(request, context)
        case .status429:
            // Throttled, as Graph and the token endpoints say it: 429 with Retry-After (seconds).
            if context.endpoint == "graph" {
                return GraphEndpoint.error(429, "TooManyRequests", "Too many requests (injected fault); retry after 2 seconds.")
                    .withHeader("Retry-After", "2")
            }
            return .json(
                ["error": "temporarily_unavailable", "error_description": "Injected fault: HTTP 429, retry after 2 seconds."], status: 429
            ).withHeader("Retry-After", "2")
        case .status500:
            return .json(["error": "server_error", "error_description": "Injected fault: HTTP 500."], status: 500)
        case .status503:
            return .text("Service Unavailable (injected)", status: 503).withHeader("Retry-After", "1")
        case .malformedJSON:
            return .empty(200, headers: [("Content-Type", "application/json; charset=utf-8")]).withBody("{\"access_token\": \"eyJ0eXAi")
        case .wrongContentType:
            return .html("<html><body>Injected fault: an HTML page where JSON was expected.</body></html>")
        case .drop:
            try? await context.channel.close()
            throw CancellationError()
        }
    }
}

/// B2C's answers for what an endpoint throws: OAuth errors as B2C JSON, native-auth errors as AAD JSON, page errors as
/// the error page, and anything else as B2C's internal error (never a crash).
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let emulator: B2CEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let f as OAuthFailure {
            return f.response(at: emulator.clock.date)
        } catch let f as AADFailure {
            return f.response(at: emulator.clock.date)
        } catch let e as PageError {
            return emulator.pages.errorPage(e)
        } catch let e as HTTPError {
            throw e
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return OAuthFailure(
                error: "server_error", code: "AADB2C90085",
                message: "The service has encountered an internal error. Please reauthenticate and try again. (\(type(of: error)))",
                status: 500
            ).response(at: emulator.clock.date)
        }
    }
}

/// The admin surface answers loopback peers only (an address, never a name from a header), and never a browser: a
/// browser on this machine is a loopback peer too, and a script on one of the tenant's own pages is same-origin. A
/// request a browser made says so — `Sec-Fetch-Site` other than `none` (every fetch, form and subresource of a page;
/// `none` is a URL typed into the address bar), or an `Origin` (every cross-origin request and every same-origin POST) —
/// and is refused, whatever its origin. A write must say `Content-Type: application/json`, which no page can send to
/// another origin without a CORS preflight, which this surface never answers. The pages' Content-Security-Policy keeps
/// injected script from running at all (`HTML.contentSecurityPolicy`); this is the second wall.
struct AdminGuardMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let emulator: B2CEmulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // Another machine's request needs the admin token, when the tenant was started with one (a container's host);
        // with --admin-token-required (the image's default), a loopback peer's does too.
        let trustedPeer = context.peerIsLoopback && !emulator.adminTokenRequired
        guard trustedPeer || emulator.adminTokenMatches(request.headers[.authorization]) else {
            let message =
                switch (emulator.adminIsOpen, emulator.adminTokenRequired) {
                case (true, true):
                    "The admin surface answers every client only with its token (Authorization: Bearer <the token file's content>)."
                case (true, false):
                    "The admin surface answers other machines only with its token (Authorization: Bearer <the token file's content>)."
                case (false, true):
                    "The admin surface is closed: the tenant requires a token and has none (start it with --admin-token-file FILE, "
                        + "then send Authorization: Bearer <that file's content>)."
                case (false, false):
                    "The admin surface answers loopback clients only (start the tenant with --admin-token-file FILE to open it to "
                        + "others that present the token it writes there)."
                }
            return .json(["error": "forbidden", "message": .string(message)], status: 403)
        }
        if let problem = Self.madeByABrowser(request) {
            return .json(["error": "forbidden", "message": .string(problem)], status: 403)
        }
        if request.method == .post, !Self.isJSON(request.headers[.contentType]) {
            return .json(
                [
                    "error": "unsupported_media_type",
                    "message": "Admin writes take a JSON body with Content-Type: application/json (even an empty one: {}).",
                ], status: 415)
        }
        return try await next(request, context)
    }

    /// Why the request looks like a web page's (the tenant's own pages included), or nil. Test clients and curl send
    /// neither header.
    static func madeByABrowser(_ request: Request) -> String? {
        let remedy = "read it from a test or curl, not from a web page"
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site.lowercased() != "none" {
            return "The admin surface does not answer web pages, its own origin's included (Sec-Fetch-Site: \(site)): \(remedy)."
        }
        if let from = request.headers[HTTPField.Name("Origin")!] {
            return "The admin surface does not answer web pages, its own origin's included (Origin: \(from)): \(remedy)."
        }
        return nil
    }

    static func isJSON(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first else { return false }
        return type.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }
}

extension Response {
    func withHeader(_ name: String, _ value: String) -> Response {
        var r = self
        if let n = HTTPField.Name(name) { r.headers[n] = value }
        return r
    }

    func withBody(_ text: String) -> Response {
        var r = self
        r.body = ResponseBody(byteBuffer: ByteBuffer(string: text))
        return r
    }
}

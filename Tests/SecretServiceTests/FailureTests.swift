import Foundation
import Testing
@testable import SecretService

/// The ways the Secret Service can be unusable. Each must give its own typed
/// error quickly: a CLI that hangs or crashes here is worse than no keyring.
@Suite("Failure paths")
struct FailureTests {
    let attributes = ["application": "b2c", "store": "/tmp/failure-test"]

    /// Runs a read against `address` and returns the error and how long it took.
    private func failingRead(_ address: String?, timeout: Duration = .seconds(2)) -> (SecretServiceError?, Double) {
        let store = SecretServiceKeyStore(address: address, timeout: timeout)
        let (ms, error) = milliseconds { _ = try store.read(attributes: attributes) }
        return (error as? SecretServiceError, ms)
    }

    @Test("a socket path that does not exist is noBus, at once")
    func missingSocket() {
        let (error, ms) = failingRead("unix:path=/nonexistent/dbus-socket")
        guard case .noBus(let reason)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(reason.contains("No such file"))
        #expect(ms < 200)
    }

    @Test("an abstract socket nobody listens on is noBus")
    func missingAbstractSocket() {
        let (error, ms) = failingRead("unix:abstract=b2c-no-such-bus-\(UUID().uuidString)")
        guard case .noBus? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(ms < 200)
    }

    @Test("an address with no unix: transport is noBus")
    func unsupportedTransport() {
        let (error, _) = failingRead("tcp:host=127.0.0.1,port=1")
        guard case .noBus(let reason)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(reason.contains("no usable"))
    }

    @Test("a bus without org.freedesktop.secrets is noService, quickly (abstract socket)")
    func busWithoutService() throws {
        let bus = try PrivateBus(listen: "unix:abstract=b2c-test-\(UUID().uuidString)")
        defer { bus.stop() }
        #expect(bus.address.hasPrefix("unix:abstract="))
        let (error, ms) = failingRead(bus.address)
        #expect(error == .noService)
        #expect(ms < 500)
        let store = SecretServiceKeyStore(address: bus.address)
        #expect(throws: SecretServiceError.noService) { try store.write(Data([1]), label: "x", attributes: attributes) }
        #expect(throws: SecretServiceError.noService) { try store.delete(attributes: attributes) }
        #expect(throws: SecretServiceError.noService) { try store.checkAvailable() }
    }

    @Test("addresses are tried in order until one connects")
    func addressFallback() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (error, _) = failingRead("unix:path=/nonexistent/a;tcp:host=x;unix:abstract=b2c-none-\(UUID().uuidString);" + bus.address)
        #expect(error == .noService)
    }

    @Test("a socket that accepts but never answers times out within the bound")
    func silentSocket() throws {
        let fake = try FakeBus()
        defer { fake.stop() }
        let (error, ms) = failingRead(fake.address, timeout: .milliseconds(300))
        guard case .timeout(let step)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(step.contains("authenticating"))
        #expect(ms >= 290 && ms < 800)
    }

    @Test("a bus that authenticates and then goes quiet times out on Hello")
    func quietAfterAuth() throws {
        let fake = try FakeBus(answer: Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
        defer { fake.stop() }
        let (error, ms) = failingRead(fake.address, timeout: .milliseconds(300))
        guard case .timeout(let step)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(step.contains("Hello"))
        #expect(ms < 1000)
    }

    @Test("a peer that rejects authentication is a protocol error")
    func rejectedAuth() throws {
        let fake = try FakeBus(answer: Array("REJECTED EXTERNAL\r\n".utf8))
        defer { fake.stop() }
        let (error, _) = failingRead(fake.address, timeout: .milliseconds(500))
        guard case .protocol(let detail)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(detail.contains("rejected"))
    }

    @Test("garbage instead of a D-Bus message is a protocol error")
    func garbageReply() throws {
        let fake = try FakeBus(answer: Array("OK 0123\r\n".utf8) + Array(repeating: UInt8(ascii: "X"), count: 64))
        defer { fake.stop() }
        let (error, _) = failingRead(fake.address, timeout: .milliseconds(500))
        guard case .protocol? = error else { Issue.record("got \(String(describing: error))"); return }
    }

    /// Security finding 9 (docs/security.md): a bus answered Hello with a 16 MiB `ay`; b2c read it whole, boxed every
    /// byte and decoded it outside the deadline (seconds and gigabytes). A message over 1 MiB is refused as soon as its
    /// header says so.
    @Test("a bus answering with a huge message is refused at its header, within the deadline")
    func hugeMessage() throws {
        var reply = DBusMessage(kind: .methodReturn, serial: 1)
        reply.replySerial = 1
        reply.body = [.bytes(Data(count: 16 * 1024 * 1024))]
        let fake = try FakeBus(answer: Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8) + reply.encoded())
        defer { fake.stop() }
        let (error, ms) = failingRead(fake.address, timeout: .seconds(2))
        guard case .protocol(let detail)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(detail.contains("too large"))
        #expect(ms < 2000)
    }

    @Test("an ay decodes as bytes, not one boxed value per byte")
    func byteArraysAreBytes() throws {
        let message = DBusMessage(kind: .methodReturn, serial: 2, replySerial: 1, body: [.bytes(Data([1, 2, 3]))])
        let decoded = try #require(try DBusMessage.decode(message.encoded()))
        #expect(decoded.body == [.byteArray([1, 2, 3])])
        #expect(decoded.body.first?.byteData == Data([1, 2, 3]))
    }

    @Test("empty attributes are refused before touching the bus")
    func emptyAttributes() {
        let store = SecretServiceKeyStore(address: "unix:path=/nonexistent")
        #expect(throws: SecretServiceError.emptyAttributes) { try store.read(attributes: [:]) }
        #expect(throws: SecretServiceError.emptyAttributes) { try store.delete(attributes: [:]) }
        #expect(throws: SecretServiceError.emptyAttributes) { try store.write(Data(), label: "x", attributes: [:]) }
    }

    @Test("every error has its own plain-English description")
    func descriptions() {
        let all: [SecretServiceError] = [
            .noBus("r"), .noService, .locked, .noDefaultCollection, .timeout("t"),
            .protocol("p"), .dbusError(name: "a.b", message: "m"), .emptyAttributes,
        ]
        let texts = all.map(\.description)
        #expect(Set(texts).count == all.count)
        #expect(texts.allSatisfy { $0.count > 20 && $0.hasSuffix(".") })
    }
}

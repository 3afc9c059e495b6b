import Foundation
import Testing
@testable import SecretService

/// Wire-format checks that need no bus: layouts worked out by hand from the
/// D-Bus specification, round trips, and malformed input.
@Suite("D-Bus marshalling")
struct MarshallingTests {
    private func encode(_ value: DBusValue) -> [UInt8] {
        var writer = DBusWriter()
        writer.write(value)
        return writer.bytes
    }

    @Test("struct fields are aligned; array length excludes the padding before the first element")
    func arrayOfStructLayout() {
        let value = DBusValue.array(elementSignature: "(yu)", [.structure([.byte(1), .uint32(2)])])
        #expect(encode(value) == [8, 0, 0, 0, /* pad to 8 */ 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])
    }

    @Test("a variant carries its signature, then the aligned value")
    func variantLayout() {
        #expect(encode(.variant(.string("ab"))) == [1, 0x73, 0, /* pad */ 0, 2, 0, 0, 0, 0x61, 0x62, 0])
    }

    @Test("an empty array still writes its length and element padding")
    func emptyArrayLayout() {
        #expect(encode(.array(elementSignature: "{sv}", [])) == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(DBusValue.array(elementSignature: "{sv}", []).signature == "a{sv}")
    }

    @Test("signatures split into complete types")
    func splitSignatures() throws {
        #expect(try DBusSignature.split("sa{sv}(oayays)bao") == ["s", "a{sv}", "(oayays)", "b", "ao"])
        #expect(throws: SecretServiceError.self) { try DBusSignature.split("a{vs}") }
        #expect(throws: SecretServiceError.self) { try DBusSignature.split("(s") }
        #expect(throws: SecretServiceError.self) { try DBusSignature.split("a") }
        #expect(throws: SecretServiceError.self) { try DBusSignature.split(String(repeating: "a", count: 100) + "y") }
    }

    @Test("the Secret Service shapes survive a message round trip")
    func messageRoundTrip() throws {
        let body: [DBusValue] = [
            .variantDict([
                "org.freedesktop.Secret.Item.Label": .string("b2c key"),
                "org.freedesktop.Secret.Item.Attributes": .stringDict(["application": "b2c", "store": "/x"]),
            ]),
            .structure([
                .objectPath("/org/freedesktop/secrets/session/s1"), .bytes(Data()),
                .bytes(Data([0, 255, 1, 128])), .string("application/octet-stream"),
            ]),
            .bool(true), .objectPaths(["/a", "/b"]), .int32(-5), .uint64(.max), .double(1.5), .int16(-2),
        ]
        let message = DBusMessage(
            kind: .methodCall, serial: 7, path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Collection", member: "CreateItem",
            destination: "org.freedesktop.secrets", body: body)
        let bytes = message.encoded()
        #expect(try DBusMessage.frameLength(of: bytes) == bytes.count)
        let decoded = try #require(try DBusMessage.decode(bytes))
        #expect(decoded.kind == .methodCall)
        #expect(decoded.serial == 7)
        #expect(decoded.member == "CreateItem")
        #expect(decoded.interface == "org.freedesktop.Secret.Collection")
        #expect(decoded.destination == "org.freedesktop.secrets")
        #expect(decoded.path == "/org/freedesktop/secrets")
        #expect(decoded.body == body)
        #expect(decoded.bodySignature == "a{sv}(oayays)baoitdn")
    }

    @Test("big-endian peers are read correctly")
    func bigEndian() throws {
        var reader = DBusReader(bytes: [0, 0, 0, 5, 0, 0, 0, 2, 0x68, 0x69, 0], bigEndian: true)
        #expect(try reader.read(type: "u", depth: 0) == .uint32(5))
        #expect(try reader.read(type: "s", depth: 0) == .string("hi"))
    }

    @Test("truncated and corrupted messages give errors, never crashes")
    func malformedInput() throws {
        let valid = DBusMessage(
            kind: .methodReturn, serial: 3, replySerial: 2,
            body: [.objectPaths(["/a"]), .variant(.stringDict(["k": "v"]))]
        ).encoded()
        for length in 0..<valid.count {
            let prefix = Array(valid[..<length])
            _ = try? DBusMessage.frameLength(of: prefix)
            _ = try? DBusMessage.decode(prefix)
        }
        var rng = SplitMix64(seed: 42)
        for _ in 0..<5000 {
            var mutated = valid
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                mutated[Int.random(in: 0..<mutated.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try? DBusMessage.frameLength(of: mutated)
            _ = try? DBusMessage.decode(mutated)
        }
        #expect(throws: SecretServiceError.self) { try DBusMessage.decode(Array("XXXXXXXXXXXXXXXX".utf8)) }
    }

    @Test("bus address lists: order, escapes, unsupported transports")
    func addressParsing() {
        #expect(BusAddress.parseList("unix:path=/run/user/1000/bus") == [.path("/run/user/1000/bus")])
        #expect(
            BusAddress.parseList("tcp:host=x,port=1;unix:abstract=/tmp/dbus-a%2cb,guid=00ff;unix:path=/p%20q")
                == [.abstract("/tmp/dbus-a,b"), .path("/p q")])
        #expect(BusAddress.parseList("launchd:env=X;unix:tmpdir=/tmp").isEmpty)
        #expect(BusAddress.sessionBus(environment: [:]) == nil)
        #expect(BusAddress.sessionBus(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]) == "unix:path=/x")
        #expect(BusAddress.sessionBus(environment: ["XDG_RUNTIME_DIR": "/nonexistent"]) == nil)
    }

    @Test("the systemd user bus socket is the fallback when the variable is unset")
    func runtimeDirFallback() throws {
        let dir = try temporaryDirectory()
        let bus = try FakeBus(in: dir, name: "bus")
        defer {
            bus.stop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        #expect(BusAddress.sessionBus(environment: ["XDG_RUNTIME_DIR": dir]) == "unix:path=\(dir)/bus")
    }
}

/// Deterministic generator so the corruption test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

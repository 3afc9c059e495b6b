import B2CFastPath
import B2CProtocol
import Crypto
import Foundation
import Testing

@testable import B2CEmulator

/// The tenant's AES-256-GCM (`GCMKey`, libcrypto's EVP interface with the key's schedule made once) seals as the GCM
/// specification's known answer, as swift-crypto and as the client store's low-level `AES256GCM` do, for every length
/// around the block size; rejects what was altered; and gives the same answers from many tasks at once on one key (each
/// operation takes a context of its own from the key's pool).
@Suite struct GCMKeyTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var at = text.startIndex
        while at < text.endIndex {
            let next = text.index(at, offsetBy: 2)
            bytes.append(UInt8(text[at..<next], radix: 16)!)
            at = next
        }
        return bytes
    }

    /// McGrew and Viega, "The Galois/Counter Mode of Operation", test case 16 (AES-256, 96-bit IV, associated data).
    @Test func givesTheSpecificationsKnownAnswer() throws {
        let key = try #require(GCMKey(Self.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")))
        let nonce = Self.hex("cafebabefacedbaddecaf888")
        let aad = Self.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plain = Self.hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let (ciphertext, tag) = try #require(key.seal(plain, nonce: nonce, aad: aad))
        #expect(
            ciphertext
                == Self.hex(
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                ))
        #expect(tag == Self.hex("76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(key.open(ciphertext, tag: tag, nonce: nonce, aad: aad) == plain)
    }

    @Test func sealsAndOpensAsSwiftCryptoAndTheStoresCipherDo() throws {
        for length in 0...80 {
            let raw = Random.bytes(32), nonce = Random.bytes(12), aad = Random.bytes(length % 9), plain = Random.bytes(length)
            let key = try #require(GCMKey(raw))
            // Twice: the second operation runs on the context the first gave back to the pool.
            for round in 0..<2 {
                let (ciphertext, tag) = try #require(key.seal(plain, nonce: nonce, aad: aad))
                let theirs = try AES.GCM.seal(plain, using: SymmetricKey(data: raw), nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
                #expect(ciphertext == [UInt8](theirs.ciphertext) && tag == [UInt8](theirs.tag), "\(length) bytes, round \(round)")
                let stores = try #require(AES256GCM.seal(plain, key: raw, nonce: nonce, aad: aad))
                #expect(ciphertext == stores.ciphertext && tag == stores.tag)
                #expect(key.open(ciphertext, tag: tag, nonce: nonce, aad: aad) == plain)
                var altered = tag
                altered[length % 16] ^= 1
                #expect(key.open(ciphertext, tag: altered, nonce: nonce, aad: aad) == nil)
                #expect(key.open(ciphertext, tag: tag, nonce: nonce, aad: aad + [0]) == nil)
                #expect(key.open(ciphertext, tag: tag, nonce: Random.bytes(12), aad: aad) == nil)
                if length > 0 {
                    var changed = ciphertext
                    changed[length / 2] ^= 0x80
                    #expect(key.open(changed, tag: tag, nonce: nonce, aad: aad) == nil)
                }
            }
        }
        #expect(GCMKey(Random.bytes(16)) == nil)
        let key = try #require(GCMKey(Random.bytes(32)))
        #expect(key.seal([1], nonce: Random.bytes(8), aad: []) == nil)
        #expect(key.open([1], tag: Random.bytes(12), nonce: Random.bytes(12), aad: []) == nil)
    }

    /// Sixteen tasks (more than the pool's eight contexts) seal and open at once with one key; every answer is the store
    /// cipher's for the same input, and a failed open between them does not spoil the context that comes back.
    @Test func manyTasksAtOnceOnOneKeyGetTheSameAnswers() async throws {
        let raw = Random.bytes(32)
        let key = try #require(GCMKey(raw))
        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var wrong = 0
                    for i in 0..<300 {
                        let nonce = Random.bytes(12), aad = Random.bytes(task % 5), plain = Random.bytes((task * 31 + i) % 200)
                        guard let (ciphertext, tag) = key.seal(plain, nonce: nonce, aad: aad),
                            let stores = AES256GCM.seal(plain, key: raw, nonce: nonce, aad: aad),
                            ciphertext == stores.ciphertext, tag == stores.tag,
                            key.open(ciphertext, tag: Random.bytes(16), nonce: nonce, aad: aad) == nil,
                            key.open(ciphertext, tag: tag, nonce: nonce, aad: aad) == plain
                        else {
                            wrong += 1
                            continue
                        }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}

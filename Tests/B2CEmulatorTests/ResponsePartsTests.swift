import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import B2CEmulator

/// How the tenant's connection handler gathers an answer's body (TenantChannel.swift): every buffer in order with its
/// trailers, and a writer that throws marks the answer as failed, so that the connection is closed rather than left
/// waiting for bytes its head promised.
@Suite struct ResponsePartsTests {
    @Test func buffersAndTrailersAreKeptInOrder() async {
        let one = await ResponseParts.of(ResponseBody(byteBuffer: ByteBuffer(string: "whole")))
        #expect(one.buffers.map { String(buffer: $0) } == ["whole"] && !one.failed)
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "a"))
            try await writer.write(ByteBuffer(string: "b"))
            try await writer.finish([.init("X-Trailer")!: "t"])
        }
        let parts = await ResponseParts.of(body)
        #expect(parts.buffers.map { String(buffer: $0) } == ["a", "b"] && !parts.failed)
        #expect(parts.trailers?[.init("X-Trailer")!] == "t")
    }

    struct Broken: Error {}

    @Test func aWriterThatThrowsFailsTheAnswer() async {
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "half"))
            throw Broken()
        }
        #expect(await ResponseParts.of(body).failed)
    }
}

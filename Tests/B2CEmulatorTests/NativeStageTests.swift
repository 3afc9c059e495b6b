import B2CKit
import Foundation
import Testing

@testable import B2CEmulator

/// Native authentication's state machine: every stage reachable from a start, every stage on a way to tokens, and a flow
/// moved along its table only.
@Suite struct NativeStageTests {
    static func reachable(from starts: Set<NativeStage>) -> Set<NativeStage> {
        var seen = starts, queue = Array(starts)
        while let s = queue.popLast() { for n in s.next where seen.insert(n).inserted { queue.append(n) } }
        return seen
    }

    @Test func everyStageIsReachedFromAStartAndLeadsToTokens() {
        #expect(Self.reachable(from: NativeStage.starts) == Set(NativeStage.allCases))
        for stage in NativeStage.allCases {
            let ahead = Self.reachable(from: [stage])
            #expect(ahead.contains { !$0.grants.isEmpty }, "\(stage) leads to no token grant")
        }
        // No way back: a verified reset is not sent a code again, a made account is not signed up again.
        #expect(!NativeStage.resetVerified.next.contains(.resetOOB) && !NativeStage.signedUp.next.contains(.signUpOOB))
        #expect(NativeStage.registered.next.isEmpty && NativeStage.registered.grants == ["continuation_token"])
    }

    @Test func aFlowMovesAlongItsTableOnly() async throws {
        try await TestTenant.with(seed: NativeAuthTests.byCode) { t in
            let start = try await t.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/initiate",
                ["client_id": clientID, "challenge_type": "oob password redirect", "username": alice.email])
            let token = try #require(start.json["continuation_token"]?.stringValue, "\(start.body)")
            let native = t.emulator.nativeAuth
            var flow = try #require(try t.emulator.store.nativeFlows.flow(token))
            #expect(flow.stage == .initiated)
            // From `initiated` a flow goes to a password or a code, not to a finished reset or sign-up.
            for stage in [NativeStage.resetDone, .signedUp, .registered, .mfaOOB] {
                flow.stage = stage
                #expect(throws: AADFailure.self, "\(stage)") { try native.advanceFlow(flow, replacing: token) }
            }
            flow.stage = .oob
            let moved = try native.advanceFlow(flow, replacing: token)
            #expect(try t.emulator.store.nativeFlows.flow(moved)?.stage == .oob)
            // A new flow starts only at a start.
            flow.stage = .resetVerified
            #expect(throws: AADFailure.self) { try native.advanceFlow(flow, replacing: nil) }
        }
    }
}

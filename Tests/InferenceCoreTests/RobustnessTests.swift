import Foundation
import Testing
import InferenceCore
import TestSupport

/// Damaged model files must give a clean `ModelError` or a valid model, never a trap.
@Suite struct RobustnessTests {
    static let message = "needs ../shared/models (absent in a user's checkout)"

    /// Loads (parse + full validation) and, when `prepare`, also builds an interpreter (Prepare of
    /// every node + arena planning); any thrown ModelError is fine, a trap fails the whole run.
    static func loadOrReject(_ bytes: some Collection<UInt8>, prepare: Bool = true) -> Bool {
        guard let model = try? Model(bytes: bytes) else { return false }
        if !prepare { return true }
        return (try? Interpreter(model: model)) != nil
    }

    @Test(.enabled(if: TestPaths.moveNetAvailable, Comment(rawValue: RobustnessTests.message)))
    func everyTruncationOfMoveNetAtOneKibibyteStepsIsRejectedCleanly() throws {
        let bytes = try Array(Data(contentsOf: TestPaths.moveNet))
        var accepted = 0
        var attempts = 0
        for length in stride(from: 0, to: bytes.count, by: 1024) {
            if Self.loadOrReject(bytes[0..<length]) { accepted += 1 }
            attempts += 1
        }
        #expect(attempts > 2800)
        // A prefix can still be a complete flatbuffer only if nothing it needs lies beyond it.
        #expect(accepted == 0)
    }

    /// Random single-bit flips of MoveNet: every flipped file goes through the loader (parse and
    /// validation), every 10th also through Interpreter init (Prepare + arena); each ends loaded
    /// or rejected with a `ModelError` that says why, never a trap. 400 flips keep this within
    /// seconds of a debug build; the long search over damaged MoveNet files is the release-built
    /// libFuzzer target model-invoke (`Tests/Fuzz/run-fuzz.sh`, run by `.ci/run`), which edits any
    /// byte and also invokes. POSEWATCH_BIT_FLIPS overrides the count, POSEWATCH_PREPARE_EVERY=1
    /// prepares every flipped file.
    @Test(.enabled(if: TestPaths.moveNetAvailable, Comment(rawValue: RobustnessTests.message)))
    func randomBitFlipsInMoveNetLoadOrFailWithAMessage() throws {
        var bytes = try Array(Data(contentsOf: TestPaths.moveNet))
        let flips = Int(ProcessInfo.processInfo.environment["POSEWATCH_BIT_FLIPS"] ?? "") ?? 400
        var generator = SplitMix64(seed: 0x706f_7365_7761_7463)
        let prepareEvery = max(1, Int(ProcessInfo.processInfo.environment["POSEWATCH_PREPARE_EVERY"] ?? "") ?? 10)
        var accepted = 0, rejected = 0
        for flip in 0..<flips {
            let position = Int(generator.next() % UInt64(bytes.count))
            let bit = UInt8(1) << UInt8(generator.next() % 8)
            bytes[position] ^= bit
            do throws(ModelError) {
                let model = try Model(bytes: bytes)
                if flip % prepareEvery == 0 { _ = try Interpreter(model: model) }
                accepted += 1
            } catch {
                rejected += 1
                #expect(!error.message.isEmpty, "flip \(flip) (byte \(position)) was rejected without a message")
            }
            bytes[position] ^= bit
        }
        // Most flips land in weights, which stay loadable; some hit the structure and are refused.
        #expect(accepted > flips / 2)
        #expect(rejected > 0)
    }

    @Test func randomBytesAndTinyFilesAreRejectedWithAMessage() {
        var generator = SplitMix64(seed: 7)
        for length in [0, 1, 4, 7, 8, 16, 64, 1000] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            #expect(throws: ModelError.self) { _ = try Model(bytes: bytes) }
        }
        do {
            _ = try Model(bytes: [UInt8](repeating: 0, count: 4))
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.message.contains("too short"))
        }
    }
}


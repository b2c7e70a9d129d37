import Testing
import InferenceCore

/// Every optimised variant this CPU can run, against the reference kernels, bit-exact. The list
/// comes from the one registry of variants (`KernelVariant.allCases`) that `posewatch bench` uses.
@Suite struct OptimizedKernelTests {
    static let variants = KernelVariant.allCases.filter { $0 != .reference && $0.isSupported }

    static func firstMismatch(_ result: (reference: [Int8], optimized: [Int8])) -> String? {
        guard let index = result.reference.indices.first(where: { result.reference[$0] != result.optimized[$0] }) else {
            return nil
        }
        return "element \(index): reference \(result.reference[index]), optimised \(result.optimized[index])"
    }

    static func randomConvolution(_ random: inout KernelCheck.Random, depthwise: Bool, seed: UInt64) -> KernelCheck.Convolution {
        var c = KernelCheck.Convolution()
        c.seed = seed
        c.depthwise = depthwise
        c.batches = random.int(1...2)
        c.inputHeight = random.int(1...13)
        c.inputWidth = random.int(1...13)
        c.inputDepth = random.int(1...48)
        c.outputDepth = depthwise ? c.inputDepth : random.int(1...72)  // 8-row and 6x64 tiles, both operand orders
        switch random.int(0...3) {
        case 0:
            c.filterHeight = 1
            c.filterWidth = 1
        case 1:
            c.filterHeight = 3
            c.filterWidth = 3
        default:
            c.filterHeight = random.int(1...4)
            c.filterWidth = random.int(1...4)
        }
        c.strideHeight = random.int(1...2)
        c.strideWidth = random.int(1...2)
        if random.int(0...5) == 0 {
            c.dilationHeight = 2
            c.dilationWidth = random.int(1...2)
        }
        c.samePadding = random.int(0...3) != 0
        let extremes: [Int32] = [-128, 127, 0]
        c.inputZeroPoint = random.int(0...2) == 0 ? extremes[random.int(0...2)] : Int32(random.int(-128...127))
        c.outputZeroPoint = random.int(0...2) == 0 ? extremes[random.int(0...2)] : Int32(random.int(-128...127))
        let perChannel = random.int(0...3) != 0
        c.multipliers = (0..<(perChannel ? c.outputDepth : 1)).map { _ in
            // Mostly below 1 (right shifts), sometimes above (left shifts), sometimes tiny.
            switch random.int(0...5) {
            case 0: Double(random.next() % 1000 + 1) / 1e7
            case 1: 1 + Double(random.next() % 3000) / 1000
            default: Double(random.next() % 100_000 + 1) / 2e5
            }
        }
        if random.int(0...2) == 0 {
            c.activationMinimum = Int32(random.int(-128...0))
            c.activationMaximum = Int32(random.int(Int(c.activationMinimum)...127))
        }
        c.hasBias = random.int(0...4) != 0
        return c
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func convolutionsMatchTheReferenceOnRandomShapes(_ variant: KernelVariant) {
        var random = KernelCheck.Random(seed: 4)
        var checked = 0
        for index in 0..<300 {
            let c = Self.randomConvolution(&random, depthwise: false, seed: UInt64(index))
            guard let result = KernelCheck.convolution(c, variant: variant) else { continue }
            checked += 1
            if let mismatch = Self.firstMismatch(result) {
                Issue.record("\(variant) conv case \(index) \(c): \(mismatch)")
                return
            }
        }
        #expect(checked > 250)
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func pointwiseConvolutionsMatchTheReference(_ variant: KernelVariant) {
        var random = KernelCheck.Random(seed: 11)
        for index in 0..<100 {
            var c = Self.randomConvolution(&random, depthwise: false, seed: UInt64(1000 + index))
            c.filterHeight = 1
            c.filterWidth = 1
            c.strideHeight = 1
            c.strideWidth = 1
            c.dilationHeight = 1
            c.dilationWidth = 1
            c.inputDepth = 4 * random.int(1...24)
            c.outputDepth = random.int(1...130)  // up to 9 blocks of 16: every avx512vnni tile (6x4, 6x2, 6x1, 8xN)
            c.multipliers = [c.multipliers[0]]
            guard let result = KernelCheck.convolution(c, variant: variant) else { continue }
            if let mismatch = Self.firstMismatch(result) {
                Issue.record("\(variant) 1x1 case \(index) \(c): \(mismatch)")
                return
            }
        }
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func depthwiseConvolutionsMatchTheReferenceOnRandomShapes(_ variant: KernelVariant) {
        var random = KernelCheck.Random(seed: 7)
        var checked = 0
        for index in 0..<300 {
            var c = Self.randomConvolution(&random, depthwise: true, seed: UInt64(index))
            if index % 2 == 0 {  // MoveNet's shape: 3x3, stride 1 or 2
                c.filterHeight = 3
                c.filterWidth = 3
                c.strideWidth = c.strideHeight
                c.dilationHeight = 1
                c.dilationWidth = 1
            }
            guard let result = KernelCheck.convolution(c, variant: variant) else { continue }
            checked += 1
            if let mismatch = Self.firstMismatch(result) {
                Issue.record("\(variant) depthwise case \(index) \(c): \(mismatch)")
                return
            }
        }
        #expect(checked > 250)  // VALID padding with a filter larger than the input has no output
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func elementwiseAndBroadcastBinaryOperatorsMatchTheReference(_ variant: KernelVariant) {
        let shapes: [([Int], [Int])] = [
            ([1, 7, 9, 16], [1, 7, 9, 16]), ([4099], [4099]), ([1, 1, 3], [1, 1, 3]), ([2, 5, 5, 3], [3]),
            ([3], [2, 5, 5, 3]), ([1, 6, 6, 17], [1, 6, 6, 1]), ([1, 1], [1, 1]), ([2, 1, 4], [1, 3, 1]), ([5, 1], [1]),
            // long runs against a value or a short repeated operand (the 64-byte vpermi2b lookups)
            ([1, 25, 23, 3], [3]), ([2], [2, 700, 2]), ([3000], [1]), ([1], [1, 3000]),
        ]
        var seed: UInt64 = 1
        for operation in [KernelCheck.BinaryOperation.add, .sub, .mul] {
            for (a, b) in shapes {
                for _ in 0..<6 {
                    seed += 1
                    guard let result = KernelCheck.binary(operation, a: a, b: b, seed: seed, variant: variant) else {
                        Issue.record("\(variant) \(operation) \(a) \(b): no optimised kernel")
                        continue
                    }
                    if let mismatch = Self.firstMismatch(result) {
                        Issue.record("\(variant) \(operation) \(a) \(b) seed \(seed): \(mismatch)")
                        return
                    }
                }
            }
        }
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func resizeBilinearMatchesTheReference(_ variant: KernelVariant) {
        var random = KernelCheck.Random(seed: 3)
        for index in 0..<60 {
            let align = random.int(0...2) == 0
            let half = !align && random.int(0...1) == 0
            guard let result = KernelCheck.resizeBilinear(
                batches: random.int(1...2), inputHeight: random.int(1...9), inputWidth: random.int(1...9),
                depth: random.int(1...40), outputHeight: random.int(1...20), outputWidth: random.int(1...20),
                alignCorners: align, halfPixelCenters: half, seed: UInt64(index), variant: variant)
            else { continue }
            if let mismatch = Self.firstMismatch(result) {
                Issue.record("\(variant) resize case \(index): \(mismatch)")
                return
            }
        }
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func quantizeAndRequantizeMatchTheReference(_ variant: KernelVariant) throws {
        var random = KernelCheck.Random(seed: 5)
        var values: [Float] = [0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.5, -128.5, 1e10, -1e10, .infinity, -.infinity,
                               .nan, 0.49999997, -0.49999997, 8388607.5, 3e9, -3e9]
        for _ in 0..<2000 { values.append(Float(Int64(random.next() % 200_001) - 100_000) / 64) }
        for (scale, zeroPoint) in [(Float(1), Int32(0)), (0.25, -128), (0.0078125, 127), (0.37, 5), (3.1, -7)] {
            let result = try #require(KernelCheck.quantize(values, scale: scale, zeroPoint: zeroPoint, variant: variant))
            if let mismatch = Self.firstMismatch(result) { Issue.record("\(variant) quantize \(scale) \(zeroPoint): \(mismatch)") }
        }
        for index in 0..<40 {
            let multiplier = index % 4 == 0 ? 1 + Double(random.next() % 3000) / 1000 : Double(random.next() % 100_000 + 1) / 1e5
            let result = try #require(KernelCheck.requantizeAllBytes(
                inputZeroPoint: Int32(random.int(-128...127)), outputZeroPoint: Int32(random.int(-128...127)),
                multiplier: multiplier, variant: variant))
            if let mismatch = Self.firstMismatch(result) { Issue.record("\(variant) requantize case \(index): \(mismatch)") }
        }
    }

    @Test(arguments: OptimizedKernelTests.variants)
    func sqrtAndArgMaxMatchTheReference(_ variant: KernelVariant) throws {
        var random = KernelCheck.Random(seed: 13)
        var values: [Float] = [0, -0, 1, 2, -1, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        for _ in 0..<1000 { values.append(Float(bitPattern: UInt32(truncatingIfNeeded: random.next()) & 0x7FFF_FFFF)) }
        for count in [values.count, 37, 16, 15, 1] {
            let result = try #require(KernelCheck.sqrt(Array(values.prefix(count)), variant: variant))
            if let index = result.reference.indices.first(where: { result.reference[$0] != result.optimized[$0] }) {
                Issue.record("\(variant) sqrt count \(count) element \(index): \(result.reference[index]) vs \(result.optimized[index])")
            }
        }
        for index in 0..<60 {
            let outer = random.int(1...3), axis = random.int(1...300), inner = random.int(1...140)
            let result = try #require(KernelCheck.argMax(outer: outer, axis: axis, inner: inner, signed: index % 2 == 0,
                                                         int64Output: index % 3 == 0, seed: UInt64(index), variant: variant))
            #expect(result.reference == result.optimized, "\(variant) argmax \(outer)×\(axis)×\(inner)")
        }
    }

    @Test(.enabled(if: TestPaths.moveNetAvailable, "needs ../shared/models (absent in a user's checkout)"),
          arguments: OptimizedKernelTests.variants)
    func moveNetOutputsMatchTheReferenceKernelsExactly(_ variant: KernelVariant) throws {
        let model = try Model(contentsOf: TestPaths.moveNet.path)
        let reference = try Interpreter(model: model, registry: .reference)
        let optimized = try Interpreter(model: model, registry: KernelRegistry(preferredVariant: variant, threadCount: 2))
        #expect(optimized.kernelNames.filter { $0 != "reference" }.count >= 80)
        // The input's CAST → QUANTIZE and the head's DEQUANTIZE → SQRT → QUANTIZE run as fused
        // byte tables, so the comparison below covers ByteChainFusion too.
        #expect(optimized.kernelNames.filter { $0.hasPrefix("fused-into-") }.count >= 3)
        var random = KernelCheck.Random(seed: 9)
        for _ in 0..<2 {
            let a = reference.inputBytes(0), b = optimized.inputBytes(0)
            for i in 0..<a.count {
                let value = UInt8(truncatingIfNeeded: random.next())
                a[i] = value
                b[i] = value
            }
            try reference.invoke()
            try optimized.invoke()
            for index in 0..<reference.outputCount {
                #expect(Array(reference.outputBytes(index)) == Array(optimized.outputBytes(index)),
                        "\(variant): output \(index) differs from the reference kernels")
            }
        }
    }
}

import ArgumentParser
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif
import InferenceCore

/// `posewatch bench MODEL`: per-invoke latency of a model on the inference core, with the arena
/// size, peak RSS and heap allocations per invoke.
///
/// The input is a fixed pseudo-random pattern (byte i = ((i × 2654435761) mod 2^32) >> 24), the
/// same one Tests/Benchmarks/compare_litert.py feeds LiteRT. Heap allocations are counted by the
/// malloc-counting preload when it is loaded (LD_PRELOAD of Tests/Support/malloc-count-preload.c,
/// which compare_litert.py builds); without it the count is "n/a".
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure per-invoke latency of a TFLite model on posewatch's inference core.")

    @Argument(help: "The .tflite model file.")
    var model: String

    @Option(parsing: .unconditional, help: "Threads per invoke (default: one per online CPU; \(CommandLineLimits.threads.rangeText)).")
    var threads: CommandLineNumber<Int>?

    @Option(parsing: .unconditional, help: "Timed invokes (\(CommandLineLimits.benchIterations.rangeText)).")
    var iterations = CommandLineNumber<Int>(100)

    @Option(parsing: .unconditional, help: "Untimed invokes first (\(CommandLineLimits.benchWarmup.rangeText)).")
    var warmup = CommandLineNumber<Int>(10)

    @Option(help: "Kernel variant: reference, or an optimised one (\(KernelVariant.allCases.dropFirst().map(\.rawValue).joined(separator: ", "))); default: the best this CPU supports.")
    var variant: String?

    @Flag(help: "List the kernel each operator runs, with its median time per invoke, and the time per kernel.")
    var kernels = false

    func validate() throws {
        _ = try CommandLineLimits.threads.check(threads)
        _ = try CommandLineLimits.benchIterations.check(iterations)
        _ = try CommandLineLimits.benchWarmup.check(warmup)
    }

    func run() throws {
        let threads = try CommandLineLimits.threads.check(self.threads)
        let iterations = try CommandLineLimits.benchIterations.check(self.iterations)
        let warmup = try CommandLineLimits.benchWarmup.check(self.warmup)
        var registry = KernelRegistry(threadCount: threads)
        if let variant {
            guard let chosen = KernelVariant(rawValue: variant) else {
                throw failWithBadInput("unknown variant \(MessageExcerpt.quoted(variant))")
            }
            guard chosen.isSupported else { throw failWithBadInput("this CPU cannot run variant \(MessageExcerpt.quoted(variant))") }
            registry = chosen == .reference ? .reference : KernelRegistry(preferredVariant: chosen, threadCount: threads)
        }
        let interpreter: Interpreter
        do {
            interpreter = try Interpreter(model: Model(contentsOf: model), registry: registry)
        } catch {
            throw failWithBadInput("\(MessageExcerpt.path(model)): \(error)")
        }
        for index in 0..<interpreter.inputCount {
            let bytes = interpreter.inputBytes(index)
            for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: (UInt32(truncatingIfNeeded: i) &* 2_654_435_761) >> 24) }
        }
        let counter = MallocCounter()
        for _ in 0..<warmup { try interpreter.invoke() }
        var samples = [Double](repeating: 0, count: iterations)
        let before = counter.count()
        for index in 0..<iterations {
            let start = Self.now()
            try interpreter.invoke()
            samples[index] = Self.now() - start
        }
        let allocations = counter.count().map { c in before.map { c - $0 } ?? 0 }
        samples.sort()
        func ms(_ seconds: Double) -> String { String(format3(seconds * 1000)) }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let names = interpreter.kernelNames
        let optimizedCount = names.filter { $0 != "reference" }.count
        print("model: \(MessageExcerpt.path(model))")
        print("threads: \(interpreter.threadCount)  variant: \(registry.allowsOptimizedVariants ? (registry.preferredVariant ?? .best).rawValue : "reference")  optimised nodes: \(optimizedCount)/\(names.count)")
        print("latency ms: median \(ms(samples[samples.count / 2]))  p90 \(ms(samples[min(samples.count - 1, samples.count * 9 / 10)]))  min \(ms(samples[0]))  (\(iterations) invokes after \(warmup) warm-up)")
        print("arena bytes: \(interpreter.arenaByteCount)")
        print("peak RSS bytes: \(usage.ru_maxrss * 1024)")
        if let allocations {
            let perInvoke = Double(allocations) / Double(iterations)
            print("heap allocations per invoke: \(allocations % iterations == 0 ? String(allocations / iterations) : String(perInvoke)) (\(allocations) malloc calls in \(iterations) invokes)")
        } else {
            print("heap allocations per invoke: n/a (preload Tests/Support/malloc-count-preload.c, as Tests/Benchmarks/compare_litert.py does)")
        }
        if kernels {
            // A second series of invokes with a clock read after every node (kept out of the
            // latency figures above): each node's median time, and the totals per kernel.
            let operators = interpreter.kernelVariants.map(\.operatorName)
            let times = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: names.count)
            defer { times.deallocate() }
            var perNode = [[Double]](repeating: [], count: names.count)
            for _ in 0..<iterations {
                times.initialize(repeating: 0)
                try interpreter.invoke(addingNodeTimesTo: times)
                for index in names.indices { perNode[index].append(Double(times[index]) / 1000) }
            }
            let medians = perNode.map { $0.sorted()[$0.count / 2] }
            let total = medians.reduce(0, +)
            print("per node (median µs over \(iterations) invokes, clock read after every node; sum \(format1(total)) µs):")
            for (index, name) in names.enumerated() {
                print("  \(index)\t\(operators[index])\t\(name)\t\(format1(medians[index]))")
            }
            var byKernel: [String: (count: Int, micros: Double)] = [:]
            for (index, name) in names.enumerated() {
                let key = name == "reference" ? "\(operators[index]) reference" : name
                byKernel[key, default: (0, 0)].count += 1
                byKernel[key, default: (0, 0)].micros += medians[index]
            }
            print("per kernel (nodes, µs, share):")
            for (name, entry) in byKernel.sorted(by: { $0.value.micros > $1.value.micros }) {
                print("  \(name)\t\(entry.count)\t\(format1(entry.micros))\t\(format1(100 * entry.micros / max(total, 1)))%")
            }
        }
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// One decimal without Foundation.
private func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}

/// Three decimals without Foundation.
private func format3(_ value: Double) -> String {
    let thousandths = Int((value * 1000).rounded())
    let fraction = String(thousandths % 1000)
    return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}

/// The allocation counter of the malloc-counting preload (`Tests/Support/malloc-count-preload.c`,
/// `pw_allocation_count`), found with dlsym; nil without the preload.
struct MallocCounter {
    typealias Function = @convention(c) () -> UInt64
    let function: Function?

    init() {
        function = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pw_allocation_count").map {
            unsafeBitCast($0, to: Function.self)
        }
    }

    func count() -> Int? { function.map { Int($0()) } }
}

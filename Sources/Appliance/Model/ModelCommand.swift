import ArgumentParser
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif
import InferenceCore
import LinuxSystem

/// `posewatch model`: inspect and run TFLite models on posewatch's own inference core.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Inspect or run a TFLite model on posewatch's inference core.",
        subcommands: [ModelInspectCommand.self, ModelRunCommand.self])
}

/// Loads and prepares a model for a `model` subcommand; a bad file is one line and exit status 2.
func loadForCommand(_ path: String) throws -> (Model, Interpreter) {
    do {
        let loaded = try Model(contentsOf: path)
        return (loaded, try Interpreter(model: loaded))
    } catch {
        throw failWithBadInput("\(MessageExcerpt.path(path)): \(error)")
    }
}

extension TensorInfo {
    /// `name  int8[1,192,192,3]  scale=0.0078 zero_point=-1` (the name, from the file, escaped).
    var summary: String {
        let shapeText = "[" + shape.map(String.init).joined(separator: ",") + "]"
        var text = "\(name.isEmpty ? "#\(index)" : MessageExcerpt.plain(name))  \(elementType)\(shapeText)"
        if let quantization {
            if quantization.isPerChannel {
                text += "  per-channel(\(quantization.scales.count)) axis=\(quantization.quantizedDimension)"
            } else {
                text += "  scale=\(quantization.scale) zero_point=\(quantization.zeroPoint)"
            }
        }
        return text
    }
}

/// `posewatch model inspect MODEL`.
struct ModelInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a model's inputs, outputs, operators, arena size and metadata.",
        discussion: "Exit status: 0 on success, 2 when the model cannot be loaded or prepared.")

    @Argument(help: "Path of the .tflite model.")
    var model: String

    func run() throws {
        let (loaded, interpreter) = try loadForCommand(model)
        // One line per field: the path and every string from the file (description, tensor and
        // metadata names) escaped, so a hostile model cannot add lines or drive the terminal.
        print("model: \(MessageExcerpt.path(model))")
        if let description = loaded.modelDescription {
            print("description: \(MessageExcerpt.plain(description, limit: MessageExcerpt.maximumPathLength))")
        }
        print("inputs:")
        for info in loaded.inputs { print("  \(info.summary)") }
        print("outputs:")
        for info in loaded.outputs { print("  \(info.summary)") }
        print("operators: \(loaded.operatorCount) nodes, \(loaded.tensors.count) tensors")
        for entry in loaded.operatorHistogram { print("  \(entry.name) ×\(entry.count)") }
        print("arena: \(interpreter.arenaByteCount) bytes")
        if interpreter.copiedConstantByteCount > 0 {
            print("copied misaligned constants: \(interpreter.copiedConstantByteCount) bytes")
        }
        print("metadata: \(loaded.metadataNames.isEmpty ? "(none)" : loaded.metadataNames.map { MessageExcerpt.plain($0) }.joined(separator: ", "))")
    }
}

/// `posewatch model run MODEL --input IN.npy … (--output OUT.npy | --output-dir DIR)`.
struct ModelRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a model once on NumPy .npy inputs and write its outputs as .npy files.",
        discussion: """
            Inputs are given in the model's input order; each must match its input's dtype and shape.
            --output writes output 0; --output-dir writes every output as DIR/output_<i>.npy.
            Exit status: 0 on success, 2 for a bad model or input, 1 when inference fails.
            """)

    @Argument(help: "Path of the .tflite model.")
    var model: String

    @Option(name: .customLong("input"), help: "An input .npy file (repeat for each model input, in order).")
    var inputs: [String] = []

    @Option(help: "Where to write output 0 as .npy.")
    var output: String?

    @Option(help: "A directory to write every output to, as output_<i>.npy.")
    var outputDir: String?

    @Option(name: .customLong("repeat"), parsing: .unconditional,
            help: "Run this many times (the outputs of the last run are written); reports the mean time (\(CommandLineLimits.modelRepetitions.rangeText)).")
    var repetitions = CommandLineNumber<Int>(1)

    func validate() throws {
        // Bad command lines exit with ExitStatus.usage (2) like bad input files, in one line.
        if (output == nil) == (outputDir == nil) {
            throw failWithBadInput("model run: give exactly one of --output OUT.npy and --output-dir DIR")
        }
        _ = try CommandLineLimits.modelRepetitions.check(repetitions)
    }

    func run() throws {
        let repetitions = try CommandLineLimits.modelRepetitions.check(self.repetitions)
        let (_, interpreter) = try loadForCommand(model)
        // Every output checked before anything runs: none may be the model or an input.
        var targets: [(index: Int, file: OutputFile)] = []
        do throws(SystemCallError) {
            if let output { targets.append((0, try OutputFile(path: output, notOverwriting: [model] + inputs))) }
            if let outputDir {
                for index in 0..<interpreter.outputCount {
                    targets.append((index, try OutputFile(path: "\(outputDir)/output_\(index).npy", notOverwriting: [model] + inputs)))
                }
            }
        } catch {
            throw failWithBadInput(error.description)
        }
        guard inputs.count == interpreter.inputCount else {
            throw failWithBadInput("the model has \(interpreter.inputCount) inputs but \(inputs.count) --input files were given")
        }
        for (index, path) in inputs.enumerated() {
            let array: NumPyArray
            do {
                array = try NumPyArray.read(contentsOf: path)
            } catch {
                throw failWithBadInput(error.description)
            }
            let expected = interpreter.input(index)
            guard array.elementType == expected.elementType, array.shape == expected.shape else {
                throw failWithBadInput(
                    "\(MessageExcerpt.path(path)): \(array.elementType)\(array.shape) does not match input \(index) (\(MessageExcerpt.plain(expected.name))): \(expected.elementType)\(expected.shape)")
            }
            let destination = interpreter.inputBytes(index)
            array.bytes.withUnsafeBytes { destination.copyMemory(from: $0) }
        }
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let start = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        for _ in 0..<repetitions {
            do {
                try interpreter.invoke()
            } catch {
                printError("posewatch: \(MessageExcerpt.path(model)): \(error)")
                throw ExitCode(ExitStatus.failure)
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let elapsed = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 - start
        if repetitions > 1 {
            var standardError = StandardError()
            print("mean invoke time: \(Int(elapsed / Double(repetitions) * 1e6)) µs over \(repetitions) runs", to: &standardError)
        }
        for (index, file) in targets {
            let info = interpreter.output(index)
            let array = NumPyArray(elementType: info.elementType, shape: info.shape, bytes: Array(interpreter.outputBytes(index)))
            do throws(SystemCallError) {
                try file.write(array.encoded())
            } catch {
                // The output's place (a full disk, a missing directory) is the command's input too.
                throw failWithBadInput(error.description)
            }
        }
    }
}

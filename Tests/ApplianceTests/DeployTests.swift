import Foundation
import Testing
@testable import Appliance

/// The repository's root, found from this file's path.
private let repository = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

private let systemdAnalyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite struct DeployTests {
    @Test(.enabled(if: systemdAnalyze != nil, "needs systemd-analyze (apt-get install systemd)"))
    func theServiceUnitScoresAtMostTwoInSystemdAnalyzeSecurity() throws {
        let unit = repository.appendingPathComponent("deploy/posewatch.service").path
        let result = try run(systemdAnalyze!, ["security", "--offline=true", "--no-pager", unit])
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(result.output)")
        print(line)
        let score = try #require(line.split(separator: " ").compactMap { Double($0) }.first, "no score in \(line)")
        #expect(score <= 2.0)
    }

    @Test func theUnitDoesNotRestartOnTheConfigurationExitStatus() throws {
        let unit = try String(contentsOf: repository.appendingPathComponent("deploy/posewatch.service"), encoding: .utf8)
        #expect(unit.contains("\nRestartPreventExitStatus=\(ExitStatus.configuration)\n"))
        #expect(unit.contains("\nType=notify\n"))
        #expect(unit.contains("\nRestart=on-failure\n"))
        #expect(unit.contains("\nWatchdogSec="))
    }

    @Test func installModelKeepsACorrectFileAndRejectsAWrongOne() throws {
        let model = repository.deletingLastPathComponent().appendingPathComponent("shared/models/\(KnownModels.moveNetFileName)")
        let script = repository.appendingPathComponent("deploy/install-model").path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("posewatch-model-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let installed = directory.appendingPathComponent(KnownModels.moveNetFileName)
        let environment = ["POSEWATCH_MODEL_DIR": directory.path, "POSEWATCH_MODEL_URL": "file:///nonexistent"]

        if FileManager.default.fileExists(atPath: model.path) {
            try FileManager.default.copyItem(at: model, to: installed)
            let kept = try run("/bin/sh", [script], environment: environment)
            #expect(kept.status == 0, "\(kept.output)")
            #expect(kept.output.contains("sha256 matches"))
            try FileManager.default.removeItem(at: installed)
        }

        try Data("not a model".utf8).write(to: installed)
        let checked = try run("/bin/sh", [script, "--check"], environment: environment)
        #expect(checked.status == 1)
        #expect(checked.output.contains("wrong sha256"))
        let replaced = try run("/bin/sh", [script], environment: environment)
        #expect(replaced.status == 1, "no download is possible, so nothing may be installed")
        #expect(!FileManager.default.fileExists(atPath: installed.path))
        #expect(FileManager.default.fileExists(atPath: installed.path + ".rejected"))
    }

    @Test func theInstallScriptAndThePackageAgreeOnTheModelsDigest() throws {
        let script = try String(contentsOf: repository.appendingPathComponent("deploy/install-model"), encoding: .utf8)
        #expect(script.contains("SHA256=\(KnownModels.moveNetLightningInt8SHA256)\n"))
        #expect(script.contains("NAME=\(KnownModels.moveNetFileName)\n"))
    }
}

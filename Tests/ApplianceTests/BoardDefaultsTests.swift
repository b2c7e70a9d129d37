import Testing
@testable import Appliance

@Suite struct BoardDefaultsTests {
    private func parse(_ text: String) throws(ConfigurationError) -> ApplianceConfiguration {
        try ApplianceConfiguration.parse(Array(text.utf8), path: "/etc/posewatch/posewatch.toml")
    }

    @Test func boardsAreToldApartByTheirDeviceTreeModel() {
        #expect(BoardDefaults(model: "Raspberry Pi 5 Model B Rev 1.0") == .pi5)
        #expect(BoardDefaults(model: "Raspberry Pi 4 Model B Rev 1.4") == .pi4)
        #expect(BoardDefaults(model: "Raspberry Pi 400 Rev 1.0") == .pi4)
        #expect(BoardDefaults(model: "Raspberry Pi Compute Module 4 Rev 1.1") == .pi4)
        #expect(BoardDefaults(model: "Raspberry Pi 3 Model B Plus Rev 1.3") == .pi3)
        #expect(BoardDefaults(model: "Raspberry Pi Zero 2 W Rev 1.0") == .zero2W)
        #expect(BoardDefaults(model: "") == .other)
        #expect(BoardDefaults(model: "Pine64 RockPro64 v2.1") == .other)
    }

    @Test func everyPiHasAThreadDefaultAndOtherMachinesUseEveryCPU() {
        for board in [BoardDefaults.pi5, .pi4, .pi3, .zero2W] {
            let threads = try! #require(board.inferenceThreads)
            #expect((1...4).contains(threads))
        }
        #expect(BoardDefaults.other.inferenceThreads == nil)
        #expect(BoardDefaults.readModel(path: "/nonexistent/model") == "")
    }

    @Test func poseThreadsIsAConfigKeyFrom1To8() throws {
        #expect(try parse("").inferenceThreads == nil)
        #expect(try parse("[pose]\nthreads = 2\n").inferenceThreads == 2)
        #expect(try parse("[pose]\nthreads = 2\n") != ApplianceConfiguration())
        #expect(throws: ConfigurationError.self) { try parse("[pose]\nthreads = 0\n") }
        #expect(throws: ConfigurationError.self) { try parse("[pose]\nthreads = 9\n") }
        #expect(throws: ConfigurationError.self) { try parse("[pose]\nthreads = \"2\"\n") }
    }
}

import Testing
import Outputs
@testable import Appliance
import TestSupport

/// A config file's text parsed as /etc/posewatch/posewatch.toml (shared by the configuration suites).
func parse(_ text: String) throws(ConfigurationError) -> ApplianceConfiguration {
    try ApplianceConfiguration.parse(Array(text.utf8), path: "/etc/posewatch/posewatch.toml")
}

/// The message parsing `text` fails with, or nil when it parses.
func failure(_ text: String) -> String? {
    do {
        _ = try parse(text)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct ConfigurationTests {
    @Test func anEmptyFileGivesTheDocumentedDefaults() throws {
        let configuration = try parse("")
        #expect(configuration == ApplianceConfiguration())
        #expect(configuration.confidenceThreshold == 0.6)
        #expect(configuration.summaryIntervalSeconds == 60)
        #expect(configuration.allLEDLines == ["GPIO17", "GPIO27", "GPIO22", "GPIO23", "GPIO24", "GPIO25"])
    }

    @Test func theShippedDefaultFileParsesToTheDefaults() throws {
        let text = try #require(try ApplianceConfiguration.readFile(String("\(#filePath)".dropLast("Tests/ApplianceTests/ConfigurationTests.swift".count)) + "deploy/posewatch.toml"))
        #expect(try ApplianceConfiguration.parse(text, path: "posewatch.toml") == ApplianceConfiguration())
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try parse("""
            # a full file
            [camera]
            device = "/dev/posewatch-camera"   # stable name from udev
            width = 1_280
            height = 720
            buffers = 6
            auto_controls = false
            [models]
            pose = '/opt/models/movenet.tflite'
            classifier = "/opt/models/actions.tflite"
            [classifier]
            confidence_threshold = 0.75
            smoothing = 5
            [pose]
            smart_cropping = false
            smoothing = true
            smoothing_min_cutoff = 1.5
            smoothing_beta = 4
            [leds]
            backend = "console"
            status = "GPIO5"
            [leds.actions]
            squats = "GPIO6"
            "push_ups" = "GPIO13"
            [journal]
            summary_interval = 30
            level = "debug"
            [watchdog]
            enabled = false
            max_stall = 20
            """)
        #expect(configuration.cameraDevice == "/dev/posewatch-camera")
        #expect(configuration.cameraSize?.width == 1280 && configuration.cameraSize?.height == 720)
        #expect(configuration.cameraBufferCount == 6)
        #expect(!configuration.cameraAutoControls)
        #expect(configuration.poseModelPath == "/opt/models/movenet.tflite")
        #expect(configuration.classifierModelPath == "/opt/models/actions.tflite")
        #expect(configuration.confidenceThreshold == 0.75)
        #expect(configuration.smoothing == 5)
        #expect(!configuration.smartCropping)
        #expect(configuration.keypointSmoothing)
        #expect(configuration.smoothingMinimumCutoff == 1.5 && configuration.smoothingBeta == 4)
        #expect(configuration.pipelineSettings.smoothing?.minimumCutoff == 1.5)
        #expect(configuration.pipelineSettings.smoothing?.beta == 4)
        #expect(configuration.pipelineSettings.confirmations == 5)
        #expect(configuration.ledBackend == .console)
        #expect(configuration.statusLEDLine == "GPIO5")
        #expect(configuration.actionLEDLines.map(\.action) == ["squats", "push_ups"])
        #expect(configuration.actionLEDLines.map(\.line) == ["GPIO6", "GPIO13"])
        #expect(configuration.summaryIntervalSeconds == 30)
        #expect(configuration.logLevel == .debug)
        #expect(!configuration.watchdogEnabled)
        #expect(configuration.watchdogMaxStallSeconds == 20)
    }

    @Test func dottedKeysAtTheTopLevelWorkLikeTables() throws {
        let configuration = try parse("camera.buffers = 3\nleds.actions.squats = \"GPIO6\"\n")
        #expect(configuration.cameraBufferCount == 3)
        #expect(configuration.actionLEDLines.map(\.line) == ["GPIO6"])
    }

    @Test func anUnknownKeyNamesTheFileTheLineAndTheKeysThatExist() {
        #expect(failure("[camera]\n\nfps = 30\n")
            == "/etc/posewatch/posewatch.toml:3: camera.fps: unknown key (known in [camera]: device, width, height, buffers, rotation, flip, auto_controls)")
        #expect(failure("verbose = true")
            == "/etc/posewatch/posewatch.toml:1: verbose: unknown key (settings go in the tables camera, models, classifier, pose, leds, journal, watchdog)")
    }

    @Test func anUnknownTableIsNamedWithItsLine() {
        #expect(failure("# comment\n[cameras]\n")
            == "/etc/posewatch/posewatch.toml:2: unknown table [cameras] (known tables: camera, models, classifier, pose, leds, journal, watchdog, leds.actions)")
    }

    @Test func aValueOfTheWrongTypeSaysWhatWasExpectedAndWhatItGot() {
        #expect(failure("[camera]\nwidth = \"640\"\nheight = 480\n")
            == "/etc/posewatch/posewatch.toml:2: camera.width: expected an integer from 16 to 8192, got \"640\"")
        #expect(failure("[watchdog]\nenabled = \"yes\"")
            == "/etc/posewatch/posewatch.toml:2: watchdog.enabled: expected true or false, got \"yes\"")
        #expect(failure("[models]\npose = [\"a\", \"b\"]")
            == "/etc/posewatch/posewatch.toml:2: models.pose: expected a string, got [\"a\", \"b\"]")
    }

    @Test func aValueOutOfRangeIsABadValue() {
        #expect(failure("[classifier]\nconfidence_threshold = 1.5")
            == "/etc/posewatch/posewatch.toml:2: classifier.confidence_threshold: expected a number from 0 to 1, got 1.5")
        #expect(failure("[classifier]\nconfidence_threshold = nan")
            == "/etc/posewatch/posewatch.toml:2: classifier.confidence_threshold: expected a number from 0 to 1, got nan")
        #expect(failure("[pose]\nsmoothing_min_cutoff = 0")
            == "/etc/posewatch/posewatch.toml:2: pose.smoothing_min_cutoff: expected a number from 0.01 to 30 (Hz), got 0")
        #expect(failure("[pose]\nsmart_cropping = 1")
            == "/etc/posewatch/posewatch.toml:2: pose.smart_cropping: expected true or false, got 1")
        #expect(failure("[journal]\nsummary_interval = 0")
            == "/etc/posewatch/posewatch.toml:2: journal.summary_interval: expected an integer from 1 to 86400 seconds, got 0")
        #expect(failure("[leds]\nbackend = \"neopixel\"")
            == "/etc/posewatch/posewatch.toml:2: leds.backend: expected \"gpio\" or \"console\", got \"neopixel\"")
        #expect(failure("[journal]\nlevel = \"loud\"")
            == "/etc/posewatch/posewatch.toml:2: journal.level: expected one of trace, debug, info, notice, warning, error, critical, got \"loud\"")
        #expect(failure("[models]\npose = \"movenet.tflite\"")
            == "/etc/posewatch/posewatch.toml:2: models.pose: expected an absolute path, got \"movenet.tflite\"")
    }

    @Test func widthWithoutHeightIsRefused() {
        #expect(failure("[camera]\nwidth = 640") == "/etc/posewatch/posewatch.toml:2: camera.width: camera.width needs camera.height too")
    }

    @Test func oneLineCannotDriveTwoLEDs() {
        #expect(failure("[leds.actions]\nsquats = \"GPIO6\"\nlunges = \"GPIO6\"")
            == "/etc/posewatch/posewatch.toml:3: leds.actions.lunges: line GPIO6 is already used by leds.actions.squats")
        #expect(failure("[leds.actions]\nsquats = \"GPIO25\"")
            == "/etc/posewatch/posewatch.toml:2: leds.actions.squats: line GPIO25 is already used by leds.status")
        #expect(failure("[leds]\nstatus = \"GPIO17\"")
            == "/etc/posewatch/posewatch.toml:2: leds.status: line GPIO17 is already used by the default leds.actions.jumping_jacks")
    }

    @Test func asManyActionLEDsAsTheControllerDrivesAreAcceptedAndOneMoreIsAConfigurationError() throws {
        let maximum = LEDController.maximumActionCount
        func file(actions: Int) -> String {
            "[leds.actions]\n" + (0..<actions).map { "action\($0) = \"GPIO\($0 + 100)\"\n" }.joined()
        }
        let most = try parse(file(actions: maximum))
        #expect(most.actionLEDLines.count == maximum)
        // The layout `run` builds from it is one LEDController accepts.
        #expect(try LEDLayout(actions: most.actionLEDLines, statusLine: most.statusLEDLine).actionCount == maximum)
        #expect(failure(file(actions: maximum + 1))
            == "/etc/posewatch/posewatch.toml:66: leds.actions.action64: more than 64 action LEDs, the most posewatch can drive; remove some from [leds.actions]")
    }

    @Test func syntaxErrorsCarryTheirLineAndKey() {
        #expect(failure("[camera]\nwidth 640") == "/etc/posewatch/posewatch.toml:2: camera.width: expected = after the key camera.width")
        #expect(failure("[camera\n") == "/etc/posewatch/posewatch.toml:1: expected ] to close the table header [camera")
        #expect(failure("a = \"open\n") == "/etc/posewatch/posewatch.toml:1: a: unterminated string")
        #expect(failure("[camera]\nbuffers = 4 5") == "/etc/posewatch/posewatch.toml:2: unexpected \"5\" after the value; one key = value per line")
        #expect(failure("[camera]\nbuffers = 4\nbuffers = 5") == "/etc/posewatch/posewatch.toml:3: camera.buffers: defined twice (first on line 2)")
        #expect(failure("[camera]\n[camera]") == "/etc/posewatch/posewatch.toml:2: camera: table [camera] is defined twice (first on line 1)")
        #expect(failure("x = {a = 1}") == "/etc/posewatch/posewatch.toml:1: x: inline tables ({…}) are not supported; use a [table]")
        #expect(failure("x = 1979-05-27") == "/etc/posewatch/posewatch.toml:1: x: dates and times are not supported")
        #expect(failure("x = 99999999999999999999") == "/etc/posewatch/posewatch.toml:1: x: integer 99999999999999999999 is out of range")
        #expect(failure("x = gpio") == "/etc/posewatch/posewatch.toml:1: x: unexpected value gpio; strings need quotes")
        #expect(failure("\n\nx = \"\\q\"") == "/etc/posewatch/posewatch.toml:3: x: invalid escape \\\"q\"")
        #expect(failure("ok = 1\n\u{1}") == "/etc/posewatch/posewatch.toml:2: expected a key, found byte 0x1")
    }

    @Test func invalidUTF8IsRefusedWithItsLine() {
        var bytes = Array("[camera]\ndevice = \"".utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array("\"\n".utf8)
        do {
            _ = try ApplianceConfiguration.parse(bytes, path: "p.toml")
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.description == "p.toml:2: the file is not valid UTF-8")
        }
    }

    @Test func aMissingDefaultFileMeansDefaultsButANamedMissingFileIsAnError() throws {
        do {
            _ = try ApplianceConfiguration.load(path: "/nonexistent/posewatch.toml")
            Issue.record("loaded a file that does not exist")
        } catch {
            #expect(error.description == "/nonexistent/posewatch.toml: cannot read: No such file or directory")
        }
    }
}

@Suite struct TOMLParserTests {
    func document(_ text: String) -> TOMLDocument? { try? TOMLParser.parse(Array(text.utf8)).get() }

    @Test func valuesOfEveryTypeParse() throws {
        let parsed = try #require(document("""
            s = "tab\\there \\u00e9 \\U0001F600 \\"q\\""
            l = 'C:\\path'
            i = -42
            h = 0xff
            o = 0o17
            b = 0b101
            f = 6.02e23
            g = -0.5
            inf1 = +inf
            t = true
            a = [1, 2.5, "x", [true],
                 # a comment inside an array
                 "trailing",]
            e = []
            """))
        let values = Dictionary(uniqueKeysWithValues: parsed.entries.map { ($0.dottedKey, $0.value) })
        #expect(values["s"] == .string("tab\there é 😀 \"q\""))
        #expect(values["l"] == .string("C:\\path"))
        #expect(values["i"] == .integer(-42))
        #expect(values["h"] == .integer(255))
        #expect(values["o"] == .integer(15))
        #expect(values["b"] == .integer(5))
        #expect(values["f"] == .float(6.02e23))
        #expect(values["g"] == .float(-0.5))
        #expect(values["inf1"] == .float(.infinity))
        #expect(values["t"] == .boolean(true))
        #expect(values["a"] == .array([.integer(1), .float(2.5), .string("x"), .array([.boolean(true)]), .string("trailing")]))
        #expect(values["e"] == .array([]))
        #expect(parsed.entries.first { $0.dottedKey == "e" }?.line == 14)
    }

    @Test func aKeyIsNeverDefinedTwiceWhetherAsAValueATableOrAPrefix() throws {
        func error(_ text: String) -> TOMLError? {
            if case .failure(let error) = TOMLParser.parse(Array(text.utf8)) { return error }
            return nil
        }
        #expect(error("a = 1\na.b = 2") == TOMLError(line: 2, key: "a.b", message: "a is already a value (line 1)"))
        #expect(error("a = 1\n[a.b]") == TOMLError(line: 2, key: "a.b", message: "a is already a value (line 1)"))
        #expect(error("a.b = 1\na = 2") == TOMLError(line: 2, key: "a", message: "is already a table (line 1)"))
        #expect(error("[a]\n[b]\na = 1") == nil)  // b.a
        #expect(error("[a]\n[b]\n[a]") == TOMLError(line: 3, key: "a", message: "table [a] is defined twice (first on line 1)"))
        // Parts are compared as parts: a quoted dot is not a separator.
        #expect(try TOMLParser.parse(Array("\"a.b\" = 1\na.b = 2".utf8)).get().entries.map(\.key) == [["a.b"], ["a", "b"]])
    }

    @Test func malformedNumbersAreRefused() {
        for text in ["x = 1__0", "x = _1", "x = 1.", "x = .5", "x = 1e", "x = 01", "x = 0x", "x = -0xff", "x = 1.2.3", "x = +-1", "x = 0b102"] {
            #expect(document(text) == nil, "\(text) parsed")
        }
    }


    @Test func randomBytesAndMutatedConfigsNeverCrashAndErrorsPointAtARealLine() throws {
        let seed = Array("""
            [camera]
            device = "/dev/video0" # c
            width = 640
            height = 480
            [leds.actions]
            squats = 'GPIO23'
            a = [1, 2.5e3, "x", [true, false]]
            [journal]
            summary_interval = 60
            """.utf8)
        let alphabet = Array("[]{}=\"'#.,\\\n\r\t 0123456789abcdefxnu_-+eE:".utf8) + [0, 0xC3, 0xA9, 0xFF]
        var random = SplitMix64(seed: 0x706F_7365)
        for iteration in 0..<20_000 {
            var bytes: [UInt8]
            if iteration % 2 == 0 {
                bytes = (0..<Int.random(in: 0...80, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            } else {
                bytes = seed
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let position = Int.random(in: 0...bytes.count, using: &random)
                    switch Int.random(in: 0...2, using: &random) {
                    case 0: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                    case 1: if position < bytes.count { bytes.remove(at: position) }
                    default: if position < bytes.count { bytes[position] = alphabet.randomElement(using: &random)! }
                    }
                }
            }
            let lines = bytes.filter { $0 == UInt8(ascii: "\n") }.count + 1
            do {
                _ = try ApplianceConfiguration.parse(bytes, path: "fuzz.toml")
            } catch {
                let line = try #require(error.line, "iteration \(iteration): no line in \(error)")
                #expect((1...lines).contains(line), "iteration \(iteration): line \(line) of \(lines) in \(error)")
                #expect(!error.description.contains("\n"), "iteration \(iteration): multi-line message \(error)")
            }
        }
    }
}

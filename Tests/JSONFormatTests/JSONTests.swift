import Testing
@testable import JSONFormat
import TestSupport

@Suite struct JSONValueTests {
    @Test func stringsAreEscapedAsRFC8259Requires() {
        #expect(JSONValue.string("a\"b\\c\nd\u{1}").serialized() == #""a\"b\\c\nd\u0001""#)
    }

    @Test func numbersThatAreWholePrintWithoutAFraction() {
        #expect(JSONValue.array([.number(2), .number(0.5), .integer(-3), .null, .bool(true)]).serialized() == "[2,0.5,-3,null,true]")
    }
}

@Suite struct JSONParserTests {
    @Test func aMetadataLikeDocumentParsesIntoTypedValues() throws {
        let value = try JSONValue.parse(#"{"labels": ["squats", "other"], "frame_rate": 15.0, "window_length": 30, "q": {"scale": 0.5e-1, "zero_point": -128}, "ok": true, "none": null}"#)
        #expect(value["labels"]?.arrayValue?.compactMap(\.stringValue) == ["squats", "other"])
        #expect(value["frame_rate"]?.doubleValue == 15)
        #expect(value["window_length"]?.intValue == 30)
        #expect(value["q"]?["scale"]?.doubleValue == 0.05)
        #expect(value["q"]?["zero_point"]?.intValue == -128)
        #expect(value["ok"] == .bool(true) && value["none"] == .null)
    }

    @Test func escapesAndSurrogatePairsDecode() throws {
        #expect(try JSONValue.parse(#""a\"b\\c\n\u00e9\ud83d\ude00""#) == .string("a\"b\\c\n\u{e9}\u{1F600}"))
    }

    @Test func serialisingThenParsingGivesTheSameValue() throws {
        let value = JSONValue.object([("t", .number(1.25)), ("label", .string("no_person")), ("reps", .object([("squats", .integer(3))])), ("c", .null)])
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "tru", "[1] 2", "\"a\u{1}\""])
    func malformedTextIsRejectedWithAnOffset(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func deepNestingIsRejectedNotARecursionCrash() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(deep) }
    }

    /// 20,000 short random inputs drawn mostly from JSON's own characters (seeded: a failure
    /// reproduces). Each is either rejected with an error whose offset lies inside the input, or
    /// accepted as a value whose serialization parses back to the same value.
    @Test func randomBytesAreParsedOrRejectedAtAnOffsetInsideThem() {
        var generator = SplitMix64(seed: 0x6a73_6f6e)
        let alphabet = Array("{}[]\",:-+.eE0123456789tfnulrs\\ \u{1}ué".utf8)
        var accepted = 0, rejected = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<count).map { _ in Bool.random(using: &generator) ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator) }
            do {
                let value = try JSONValue.parse(bytes: bytes)
                accepted += 1
                let reparsed = try? JSONValue.parse(value.serialized())
                #expect(reparsed == value, "input \(bytes)")
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count, "input \(bytes): \(error)")
            }
        }
        // Both paths ran: short random texts include valid scalars ("1", "-2e3", "") and garbage.
        #expect(accepted > 0)
        #expect(rejected > accepted)
    }
}


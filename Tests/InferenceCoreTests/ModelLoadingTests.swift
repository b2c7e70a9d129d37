import Testing
import InferenceCore

@Suite struct ModelLoadingTests {
    @Test func aHandMadeReluModelLoadsAndRuns() throws {
        let model = try Model(bytes: TinyModel.make())
        #expect(model.inputs.map(\.name) == ["input"])
        #expect(model.outputs.map(\.shape) == [[1, 4]])
        #expect(model.modelDescription == "tiny")
        let interpreter = try Interpreter(model: model)
        let values: [Float] = [-1, 2, -3, 4]
        values.withUnsafeBytes { interpreter.inputBytes(0).copyMemory(from: $0) }
        try interpreter.invoke()
        #expect(Array(try #require(interpreter.outputFloats(0))) == [0, 2, 0, 4])
        #expect(interpreter.arenaByteCount >= 32)
    }

    @Test func metadataEntriesAreReadableByName() throws {
        let labels = Array("jumping_jacks\nsquats\n".utf8)
        let model = try Model(bytes: TinyModel.make(metadata: [("labels", labels), ("frame_rate", [30])]))
        #expect(model.metadataNames == ["labels", "frame_rate"])
        #expect(model.metadata(named: "labels") == labels)
        #expect(model.metadataString(named: "labels") == "jumping_jacks\nsquats\n")
        #expect(model.metadata(named: "frame_rate") == [30])
        #expect(model.metadata(named: "missing") == nil)
    }

    @Test func anUnsupportedOperatorIsNamedWithItsVersion() {
        // 101 = ABS.
        #expect {
            _ = try Model(bytes: TinyModel.make(operatorCode: 101, version: 2))
        } throws: { error in
            let error = error as? ModelError
            return error?.kind == .unsupported && error?.message.contains("ABS (version 2) is not supported") == true
        }
    }

    @Test func aTooNewOperatorVersionIsRejected() {
        #expect {
            _ = try Model(bytes: TinyModel.make(operatorCode: 19, version: 99))
        } throws: { error in
            (error as? ModelError)?.message.contains("RELU version 99 is not supported") == true
        }
    }

    @Test func anOperatorInputOutOfRangeNamesTheOperatorAndIndex() {
        #expect {
            _ = try Model(bytes: TinyModel.make(operatorInputs: [7]))
        } throws: { error in
            (error as? ModelError)?.message == "Operator[0] (RELU).inputs[0] = 7 is not a tensor index (0..<2)"
        }
    }

    @Test func aTensorNameFromTheFileIsEscapedInMessages() throws {
        // A name with a line break, what looks like doctor's verdict, an ESC sequence and a BEL.
        let hostile = "out\nverdict: ready (exit 0)\u{1b}[2J\u{07}"
        let model = try Model(bytes: TinyModel.make(outputShape: [1, 5], outputName: hostile))
        #expect(model.outputs.map(\.name) == [hostile], "the name itself is kept as the file has it")
        #expect {
            _ = try Interpreter(model: model)
        } throws: { error in
            let message = (error as? ModelError)?.message ?? ""
            return message.contains(#"output tensor 1 (out\nverdict: ready (exit 0)\u{1b}[2J\u{7}) has shape [1, 5]"#)
                && !message.unicodeScalars.contains { $0.value < 0x20 }
        }
    }

    @Test func aShapeMismatchIsReportedAtPrepare() throws {
        let model = try Model(bytes: TinyModel.make(outputShape: [1, 5]))
        #expect {
            _ = try Interpreter(model: model)
        } throws: { error in
            let message = (error as? ModelError)?.message ?? ""
            return message.contains("operator 0 (RELU v1)") && message.contains("shape [1, 5], expected [1, 4]")
        }
    }

    @Test func anEmptyTensorWithHugeDimensionsIsRefusedAtLoad() {
        // Found by the loader fuzzer: no elements, but Prepare's row products overflowed.
        #expect {
            _ = try Model(bytes: TinyModel.make(outputShape: [0, Int32.max, Int32.max, Int32.max]))
        } throws: { error in
            let error = error as? ModelError
            return error?.kind == .unsupported && error?.message.contains("is larger than the tensor size limit") == true
        }
    }

    @Test func aVtableOffsetPastTheEndIsMalformed() {
        var bytes = TinyModel.make()
        // The root table's soffset points 1 GB away.
        let root = Int(bytes[0]) | Int(bytes[1]) << 8
        bytes[root + 3] = 0x40
        #expect {
            _ = try Model(bytes: bytes)
        } throws: { error in
            let error = error as? ModelError
            return error?.kind == .malformed && error?.message.contains("Model: vtable") == true
        }
    }

    @Test func aWrongFileIdentifierSaysItIsNotATFLiteModel() {
        var bytes = TinyModel.make()
        bytes[4] = UInt8(ascii: "X")
        #expect {
            _ = try Model(bytes: bytes)
        } throws: { error in
            (error as? ModelError)?.message.contains("not a TFLite model") == true
        }
    }

    @Test func everyTruncationOfAHandMadeModelFailsCleanly() {
        let bytes = TinyModel.make(metadata: [("labels", Array("a\nb".utf8))])
        // The last byte is the NUL after the last string, which the reader does not need.
        for length in 0..<(bytes.count - 1) {
            #expect(throws: ModelError.self) { _ = try Model(bytes: bytes[0..<length]) }
        }
    }

    @Test func aMissingFileIsAnIOError() {
        #expect {
            _ = try Model(contentsOf: "/nonexistent/model.tflite")
        } throws: { error in
            (error as? ModelError)?.kind == .io
        }
    }
}

@Suite struct ShapeOperatorTests {
    @Test(arguments: [(Int32(43), [Int32(4)]), (Int32(70), [Int32(1), 1, 4]), (Int32(22), [Int32(2), 2])])
    func squeezeExpandDimsAndReshapeCopyTheData(_ code: Int32, _ shape: [Int32]) throws {
        let interpreter = try Interpreter(model: Model(bytes: TinyModel.make(operatorCode: code, outputShape: shape)))
        let values: [Float] = [-1, 2, -3, 4]
        values.withUnsafeBytes { interpreter.inputBytes(0).copyMemory(from: $0) }
        try interpreter.invoke()
        #expect(interpreter.output(0).shape == shape.map(Int.init))
        #expect(Array(try #require(interpreter.outputFloats(0))) == values)
    }
}

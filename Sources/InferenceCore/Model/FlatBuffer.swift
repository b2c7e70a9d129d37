// A bounds-checked, zero-copy reader for the FlatBuffers binary format, enough for the TFLite schema.
//
// Layout reminders (https://flatbuffers.dev/internals):
//   * All scalars are little-endian; the root is a uoffset (uint32) at byte 0, relative to byte 0.
//   * A table starts with an soffset (int32); its vtable lives at `table - soffset`.
//   * A vtable is: uint16 vtable byte size, uint16 table inline byte size, then one uint16 per field
//     (the field's offset from the table start; 0 = absent, use the default).
//   * Reference fields (tables, vectors, strings) hold a uoffset relative to the field's own position.
//   * A vector is a uint32 element count followed by the elements; a string is a byte vector
//     followed by a NUL we do not rely on. A vector of tables holds one uoffset per element.
//
// Every position is checked against the buffer before it is read, with overflow-checked
// arithmetic, and reads are unaligned loads, so a hostile file can only produce a `ModelError`.

/// A read-only byte range with bounds-checked little-endian loads.
struct FlatBuffer {
    let bytes: UnsafeRawBufferPointer

    var count: Int { bytes.count }

    /// Checks that `length` bytes starting at `position` lie inside the buffer.
    @inline(__always)
    func check(_ position: Int, _ length: Int, _ what: @autoclosure () -> String) throws(ModelError) {
        guard position >= 0, length >= 0, position <= count, length <= count - position else {
            throw .malformed(
                "\(what()): \(length) bytes at offset \(position) run past the end of the file (\(count) bytes)")
        }
    }

    @inline(__always)
    func load<T: FixedWidthInteger>(_ type: T.Type, at position: Int, _ what: @autoclosure () -> String)
        throws(ModelError) -> T
    {
        try check(position, MemoryLayout<T>.size, what())
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    /// The root table (the uoffset at byte 0), after checking the 4-byte file identifier.
    func rootTable(identifier: String) throws(ModelError) -> FlatTable {
        guard count >= 8 else {
            throw .malformed("file is \(count) bytes, too short for a TFLite flatbuffer (at least 8)")
        }
        let found = (4..<8).map { bytes[$0] }
        let expected = Array(identifier.utf8)
        guard found == expected else {
            let shown = found.map { (32...126).contains($0) ? String(UnicodeScalar($0)) : "?" }.joined()
            throw .malformed("file identifier is \"\(shown)\", expected \"\(identifier)\": not a TFLite model")
        }
        let rootOffset = Int(try load(UInt32.self, at: 0, "root offset"))
        return try table(at: rootOffset, name: "Model")
    }

    /// The table starting at `position`, with its vtable checked.
    func table(at position: Int, name: String) throws(ModelError) -> FlatTable {
        let soffset = Int(try load(Int32.self, at: position, "\(name): table start"))
        let (vtable, overflow) = position.subtractingReportingOverflow(soffset)
        guard !overflow else { throw .malformed("\(name): vtable offset \(soffset) overflows") }
        let vtableSize = Int(try load(UInt16.self, at: vtable, "\(name): vtable"))
        guard vtableSize >= 4, vtableSize % 2 == 0 else {
            throw .malformed("\(name): vtable at offset \(vtable) has invalid size \(vtableSize)")
        }
        try check(vtable, vtableSize, "\(name): vtable")
        let tableSize = Int(try load(UInt16.self, at: vtable + 2, "\(name): vtable"))
        guard tableSize >= 4 else {
            throw .malformed("\(name): table at offset \(position) has invalid inline size \(tableSize)")
        }
        try check(position, tableSize, "\(name): table")
        return FlatTable(buffer: self, position: position, vtable: vtable, fieldCount: (vtableSize - 4) / 2,
                         size: tableSize, name: name)
    }
}

/// One table: fields are looked up through its vtable; absent fields give their schema default.
struct FlatTable {
    let buffer: FlatBuffer
    let position: Int
    let vtable: Int
    let fieldCount: Int
    let size: Int
    let name: String

    /// The absolute position of field `id`, or nil when the field is absent.
    @inline(__always)
    func fieldPosition(_ id: Int, width: Int) throws(ModelError) -> Int? {
        guard id < fieldCount else { return nil }
        let offset = Int(try buffer.load(UInt16.self, at: vtable + 4 + 2 * id, "\(name): vtable"))
        if offset == 0 { return nil }
        guard offset + width <= size else {
            throw .malformed("\(name): field \(id) at table offset \(offset) lies outside the table (\(size) bytes)")
        }
        return position + offset
    }

    func scalar<T: FixedWidthInteger>(_ id: Int, _ field: String, default value: T) throws(ModelError) -> T {
        guard let at = try fieldPosition(id, width: MemoryLayout<T>.size) else { return value }
        return try buffer.load(T.self, at: at, "\(name).\(field)")
    }

    func float(_ id: Int, _ field: String, default value: Float) throws(ModelError) -> Float {
        let bits = try scalar(id, field, default: value.bitPattern)
        return Float(bitPattern: bits)
    }

    func bool(_ id: Int, _ field: String, default value: Bool = false) throws(ModelError) -> Bool {
        try scalar(id, field, default: UInt8(value ? 1 : 0)) != 0
    }

    /// Follows the uoffset stored in field `id`.
    private func reference(_ id: Int, _ field: String) throws(ModelError) -> Int? {
        guard let at = try fieldPosition(id, width: 4) else { return nil }
        let offset = Int(try buffer.load(UInt32.self, at: at, "\(name).\(field)"))
        return at + offset
    }

    func table(_ id: Int, _ field: String) throws(ModelError) -> FlatTable? {
        guard let target = try reference(id, field) else { return nil }
        return try buffer.table(at: target, name: "\(name).\(field)")
    }

    func vector(_ id: Int, _ field: String, elementSize: Int) throws(ModelError) -> FlatVector? {
        guard let target = try reference(id, field) else { return nil }
        return try FlatVector(buffer: buffer, at: target, elementSize: elementSize, name: "\(name).\(field)")
    }

    func string(_ id: Int, _ field: String) throws(ModelError) -> String? {
        guard let vector = try vector(id, field, elementSize: 1) else { return nil }
        return vector.string
    }
}

/// A vector: a uint32 count, then `count` elements of `elementSize` bytes, all inside the buffer.
struct FlatVector {
    let buffer: FlatBuffer
    let start: Int
    let count: Int
    let elementSize: Int
    let name: String

    init(buffer: FlatBuffer, at position: Int, elementSize: Int, name: String) throws(ModelError) {
        let count = Int(try buffer.load(UInt32.self, at: position, "\(name): vector length"))
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: elementSize)
        guard !overflow else { throw .malformed("\(name): vector of \(count) elements is too large") }
        try buffer.check(position + 4, byteCount, "\(name): vector of \(count) elements")
        self.buffer = buffer
        self.start = position + 4
        self.count = count
        self.elementSize = elementSize
        self.name = name
    }

    /// The elements' bytes (zero copy).
    var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer.bytes[start..<(start + count * elementSize)])
    }

    @inline(__always)
    func element<T: FixedWidthInteger>(_ index: Int, as type: T.Type) -> T {
        // The whole vector was bounds-checked at init.
        T(littleEndian: buffer.bytes.loadUnaligned(fromByteOffset: start + index * elementSize, as: T.self))
    }

    // FlatBuffers are little-endian and so are posewatch's targets (arm64, x86-64): elements are
    // copied as they are, in one memcpy.
    #if _endian(big)
    #error("InferenceCore reads little-endian flatbuffers by copying; add byte swapping for big-endian hosts")
    #endif

    private func copied<T>(as type: T.Type) -> [T] {
        [T](unsafeUninitializedCapacity: count) { destination, initialized in
            UnsafeMutableRawBufferPointer(destination).copyMemory(from: bytes)
            initialized = count
        }
    }

    func int32s() -> [Int32] { copied(as: Int32.self) }
    func int64s() -> [Int64] { copied(as: Int64.self) }
    func floats() -> [Float] { copied(as: Float.self) }

    /// Decodes the bytes as UTF-8 (invalid sequences become U+FFFD, never a failure).
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Element `index` of a vector of tables.
    func table(_ index: Int, name tableName: String) throws(ModelError) -> FlatTable {
        let at = start + index * 4
        let offset = Int(element(index, as: UInt32.self))
        return try buffer.table(at: at + offset, name: tableName)
    }
}

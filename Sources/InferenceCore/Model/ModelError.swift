/// Why a model could not be loaded, prepared or run: one clear line for a person to read.
///
/// Load and Prepare report everything they can check (malformed flatbuffers, unsupported operators,
/// dtype or shape mismatches); Eval only reports what depends on run-time data (an index out of
/// range, a division by zero).
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broad class of failure, for callers that react differently (exit codes, retries).
    public enum Kind: Sendable, Equatable {
        /// The file is not a well-formed TFLite flatbuffer (offsets, vtables, lengths, identifier).
        case malformed
        /// Well-formed, but uses something this runtime does not implement (operator, dtype, option).
        case unsupported
        /// Well-formed, but inconsistent (shapes or dtypes that do not fit the operator, bad indices).
        case invalidModel
        /// Above a configured resource limit (arena size, tensor size).
        case resourceLimit
        /// Run-time data the operator cannot handle (an index out of range, division by zero).
        case evaluation
        /// The file could not be opened or mapped.
        case io
    }

    /// The class of failure.
    public let kind: Kind
    /// The message, naming the table, field, offset, operator or tensor concerned.
    public let message: String

    /// A failure of `kind` described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    static func malformed(_ message: String) -> ModelError { ModelError(.malformed, message) }
    static func unsupported(_ message: String) -> ModelError { ModelError(.unsupported, message) }
    static func invalid(_ message: String) -> ModelError { ModelError(.invalidModel, message) }
}

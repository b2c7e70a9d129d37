/// Work the invoking thread does between two operators of one `Interpreter.invoke(servicing:)`.
///
/// One inference can take long (a slow board, a loaded machine, software emulation), and a program
/// with one loop and no other threads would otherwise keep nothing on time while it runs. The frame
/// loop passes a service point that keeps its deadlines there instead: LED blink and heartbeat
/// transitions, the watchdog ping. Keep it cheap (read a clock every few operators at most) and
/// allocation-free; it runs on the invoking thread while the worker pool is idle, and must not use
/// the interpreter that calls it.
public protocol InvokeServicePoint: ~Copyable {
    /// Operator `index` (execution order) has finished and operator `index + 1` runs next. Not
    /// called after the last operator: `invoke` returns then.
    mutating func operatorFinished(_ index: Int)
}

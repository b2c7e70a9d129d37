/// Plans one arena for all non-constant tensors from their lifetimes (first and last node that
/// touches them), greedily placing the largest tensors first at the lowest offset that does not
/// overlap any tensor alive at the same time (the idea of TFLite Micro's GreedyMemoryPlanner).
struct ArenaPlanner {
    struct Request {
        let tensor: Int
        let byteCount: Int
        let firstUse: Int
        let lastUse: Int
    }

    static let alignment = 64

    /// Offsets by tensor index, and the arena size.
    static func plan(_ requests: [Request]) -> (offsets: [Int: Int], byteCount: Int) {
        let order = requests.indices.sorted {
            let a = requests[$0], b = requests[$1]
            return a.byteCount != b.byteCount ? a.byteCount > b.byteCount : a.tensor < b.tensor
        }
        var placed: [(offset: Int, end: Int, first: Int, last: Int)] = []
        var offsets: [Int: Int] = [:]
        var total = 0
        for index in order {
            let request = requests[index]
            let size = (request.byteCount + alignment - 1) / alignment * alignment
            // Tensors alive at the same time as this one, by address.
            let conflicts = placed.filter { $0.first <= request.lastUse && request.firstUse <= $0.last }
                .sorted { $0.offset < $1.offset }
            var candidate = 0
            for conflict in conflicts {
                if candidate + size <= conflict.offset { break }
                candidate = max(candidate, conflict.end)
            }
            placed.append((candidate, candidate + size, request.firstUse, request.lastUse))
            offsets[request.tensor] = candidate
            total = max(total, candidate + size)
        }
        return (offsets, total)
    }
}

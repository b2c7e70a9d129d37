/// An 8-bit RGB image, row-major, no padding. Used for snapshots, not in the frame loop.
public struct RGBImage: Equatable, Sendable {
    public let width: Int
    public let height: Int
    /// `width × height × 3` bytes.
    public var pixels: [UInt8]

    /// A black image.
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0)
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 3)
    }

    /// An image from existing RGB bytes.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "RGB image needs width × height × 3 bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at (x, y), for tests.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let offset = (y * width + x) * 3
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2])
    }

    /// Paints a disc of `radius` around (x, y), clipped to the image.
    public mutating func fillDisc(x: Float, y: Float, radius: Float, color: (UInt8, UInt8, UInt8)) {
        let minX = max(0, Int((x - radius).rounded(.down))), maxX = min(width - 1, Int((x + radius).rounded(.up)))
        let minY = max(0, Int((y - radius).rounded(.down))), maxY = min(height - 1, Int((y + radius).rounded(.up)))
        guard minX <= maxX, minY <= maxY else { return }
        for row in minY...maxY {
            for column in minX...maxX {
                let dx = Float(column) - x, dy = Float(row) - y
                if dx * dx + dy * dy <= radius * radius {
                    let offset = (row * width + column) * 3
                    pixels[offset] = color.0
                    pixels[offset + 1] = color.1
                    pixels[offset + 2] = color.2
                }
            }
        }
    }

    /// Paints a line `thickness` pixels wide from (x0, y0) to (x1, y1), clipped to the image.
    public mutating func drawLine(from start: (x: Float, y: Float), to end: (x: Float, y: Float), thickness: Float, color: (UInt8, UInt8, UInt8)) {
        let length = ((end.x - start.x) * (end.x - start.x) + (end.y - start.y) * (end.y - start.y)).squareRoot()
        let steps = max(1, Int(length.rounded(.up)))
        for step in 0...steps {
            let t = Float(step) / Float(steps)
            fillDisc(x: start.x + (end.x - start.x) * t, y: start.y + (end.y - start.y) * t, radius: thickness / 2, color: color)
        }
    }

    /// Paints a rectangle's outline.
    public mutating func strokeRectangle(minX: Float, minY: Float, maxX: Float, maxY: Float, thickness: Float, color: (UInt8, UInt8, UInt8)) {
        drawLine(from: (minX, minY), to: (maxX, minY), thickness: thickness, color: color)
        drawLine(from: (maxX, minY), to: (maxX, maxY), thickness: thickness, color: color)
        drawLine(from: (maxX, maxY), to: (minX, maxY), thickness: thickness, color: color)
        drawLine(from: (minX, maxY), to: (minX, minY), thickness: thickness, color: color)
    }
}

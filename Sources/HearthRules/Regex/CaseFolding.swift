/// Simple case folding for the `i` flag: ASCII directly, other scalars through their
/// single-scalar Unicode case mappings.
enum CaseFolding {
    static func lower(_ scalar: UInt32) -> UInt32 {
        if scalar < 0x80 {
            return (0x41...0x5A).contains(scalar) ? scalar + 0x20 : scalar
        }
        return single(Unicode.Scalar(scalar)?.properties.lowercaseMapping) ?? scalar
    }

    static func upper(_ scalar: UInt32) -> UInt32 {
        if scalar < 0x80 {
            return (0x61...0x7A).contains(scalar) ? scalar - 0x20 : scalar
        }
        return single(Unicode.Scalar(scalar)?.properties.uppercaseMapping) ?? scalar
    }

    private static func single(_ mapping: String?) -> UInt32? {
        guard let mapping else { return nil }
        var iterator = mapping.unicodeScalars.makeIterator()
        guard let first = iterator.next(), iterator.next() == nil else { return nil }
        return first.value
    }
}

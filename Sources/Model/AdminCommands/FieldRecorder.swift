/// Every field a value's type writes, object by object: an encoder that writes nothing and records,
/// for each keyed container a value opens, the keys it is handed. An absent optional's key is
/// recorded too, because synthesized `encode(to:)` hands it to `encodeIfPresent`, which this
/// encoder implements for every type (the default implementation skips a nil without a word). So
/// the fields recorded for a request decoded by `JSONDecoder` are every field its verb could hold,
/// and a member of the request outside them is one `JSONDecoder` passed over.
final class FieldRecorder {
    private(set) var fields: [RequestPath: Set<String>] = [:]

    private init() {}

    /// The keys each object of `value`'s encoding is handed, by the object's path.
    static func fields(of value: some Encodable) -> [RequestPath: Set<String>] {
        let recorder = FieldRecorder()
        // The recording encoder throws nothing of its own; a value that refuses to encode leaves the
        // fields recorded so far, and the check then names a member it missed, never a wrong one.
        try? value.encode(to: RecordingEncoder(path: RequestPath(), recorder: recorder))
        return recorder.fields
    }

    fileprivate func opened(_ path: RequestPath) {
        if fields[path] == nil { fields[path] = [] }
    }

    fileprivate func record(_ key: String, at path: RequestPath) {
        fields[path, default: []].insert(key)
    }
}

private struct RecordingEncoder: Encoder {
    let path: RequestPath
    let recorder: FieldRecorder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        recorder.opened(path)
        return KeyedEncodingContainer(RecordingKeyedContainer<Key>(path: path, recorder: recorder))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RecordingUnkeyedContainer(path: path, recorder: recorder)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        RecordingSingleValueContainer(path: path, recorder: recorder)
    }
}

private struct RecordingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let path: RequestPath
    let recorder: FieldRecorder
    var codingPath: [any CodingKey] { [] }

    private func encoder(_ key: Key) -> RecordingEncoder {
        recorder.record(key.stringValue, at: path)
        return RecordingEncoder(path: path.appending(key.stringValue), recorder: recorder)
    }

    mutating func encodeNil(forKey key: Key) throws { recorder.record(key.stringValue, at: path) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try value.encode(to: encoder(key)) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try value.map { try $0.encode(to: encoder(key)) } ?? recorder.record(key.stringValue, at: path)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try present(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try present(value, key) }

    private func present(_ value: (some Encodable)?, _ key: Key) throws {
        try value.map { try $0.encode(to: encoder(key)) } ?? recorder.record(key.stringValue, at: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        recorder.record("super", at: path)
        return RecordingEncoder(path: path.appending("super"), recorder: recorder)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder(key) }
}

private struct RecordingUnkeyedContainer: UnkeyedEncodingContainer {
    let path: RequestPath
    let recorder: FieldRecorder
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    init(path: RequestPath, recorder: FieldRecorder) {
        self.path = path
        self.recorder = recorder
    }

    private mutating func next() -> RecordingEncoder {
        defer { count += 1 }
        return RecordingEncoder(path: path.appending(count), recorder: recorder)
    }

    mutating func encodeNil() throws { count += 1 }

    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}

/// A single value holds no fields: a primitive ends here, anything else encodes its own way.
private struct RecordingSingleValueContainer: SingleValueEncodingContainer {
    let path: RequestPath
    let recorder: FieldRecorder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}

    mutating func encode<T: Encodable>(_ value: T) throws {
        // A primitive handed over generically would encode itself back into this container.
        switch value {
        case is String, is Bool, is Double, is Float, is any BinaryInteger: return
        default: try value.encode(to: RecordingEncoder(path: path, recorder: recorder))
        }
    }
}

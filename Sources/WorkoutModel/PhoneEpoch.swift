/// A phone epoch on disk: phoned's `<state>/epoch.json` (this phone's) and watchd's
/// `<cache>/phone-epoch.json` (the newest the cache has applied). See docs/PROTOCOL.md, "Phone epochs".
///
/// JSON, version 1: `{"epoch":"2026-11-30T21:00:00.000000Z","schemaVersion":1}`.
package struct PhoneEpochRecord: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// When the phone's state began (a later one is a newer state: epochs are ordered).
    package var epoch: Timestamp

    package init(_ epoch: Timestamp) {
        schemaVersion = Self.currentSchemaVersion
        self.epoch = epoch
    }
}

/// A phone epoch on disk: phoned's `<state>/epoch.json` (this phone's) and watchd's
/// `<cache>/phone-epoch.json` (the newest the cache has applied). See docs/PROTOCOL.md, "Phone epochs".
///
/// JSON, version 1: `{"epoch":"2026-11-30T21:00:00.000000Z","schemaVersion":1}`; the watch's also
/// names the phone instance that sent that epoch and the instances it superseded (`sender`,
/// `retiredSenders`, absent in older files).
package struct PhoneEpochRecord: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    /// When the phone's state began (a later one is a newer state: epochs are ordered).
    package var epoch: Timestamp
    /// Watch only: the phone instance whose contexts carry this epoch.
    package var sender: String?
    /// Watch only: phone instances a newer phone replaced; their contexts are refused for good.
    package var retiredSenders: [String]?

    package init(_ epoch: Timestamp, sender: String? = nil, retiredSenders: [String]? = nil) {
        schemaVersion = Self.currentSchemaVersion
        self.epoch = epoch
        self.sender = sender
        self.retiredSenders = retiredSenders
    }
}

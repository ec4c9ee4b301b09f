/// One thing the merged sequence diagram draws, in no notation: `TraceDiagram` writes steps as
/// mermaid, `TracePlantUML` as PlantUML. Participants are `TraceDiagram.participants`' ids.
package enum TraceStep: Equatable, Sendable {
    /// An arrow from one participant to another (`from == to`: a step a participant takes alone).
    case arrow(from: String, to: String, style: ArrowStyle, label: String)
    /// A note over one participant, or spanning several.
    case note(over: [String], text: String)
    /// The link went down (as either side first saw it), with that side's reason: a partition begins.
    case linkDown(detail: String?)
    /// The link came up; `heal` when it had been down before (the partition ends).
    case linkUp(heal: Bool)

    /// How an arrow is drawn.
    package enum ArrowStyle: Equatable, Sendable {
        /// A send and its receipt, or a receipt whose send is in no journal (solid).
        case call
        /// An acknowledgement or reply (dotted).
        case answer
        /// A send whose receipt is in no journal: the peer died or the link was cut.
        case unanswered
        /// A message that failed (not reachable, timed out, link lost).
        case failed
    }
}

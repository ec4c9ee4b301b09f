import Nodes

extension PhoneNode: ShelledNode {
    package static func reported(_ report: ShellReport) -> Event { .reported(report) }

    package static func nodeAction(_ action: Action) -> NodeAction? {
        guard case .node(let shared) = action else { return nil }
        return shared
    }
}

extension WatchNode: ShelledNode {
    package static func reported(_ report: ShellReport) -> Event { .reported(report) }

    package static func nodeAction(_ action: Action) -> NodeAction? {
        guard case .node(let shared) = action else { return nil }
        return shared
    }
}

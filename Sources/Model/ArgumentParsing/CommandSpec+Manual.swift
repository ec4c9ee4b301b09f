/// A man page generated from the grammar, so it lists exactly the commands and options the tool has.
extension CommandSpec {
    /// The man page (roff, `man` macros) of this root: NAME and SYNOPSIS; DESCRIPTION from the abstract
    /// and discussion; OPTIONS the root declares; COMMANDS with every leaf's usage line, abstract,
    /// arguments and own options; EXIT STATUS from the discussion's part starting at "Exit codes:"
    /// (moved there from DESCRIPTION; no section when the discussion has none).
    package func manPage(section: Int = 1, manual: String) -> String {
        var description = Self.flowed(discussion)
        var exitStatus = ""
        if let start = description.firstRange(of: "Exit codes:") {
            exitStatus = String(description[start.lowerBound...])
            description = String(description[..<start.lowerBound].dropLast())  // the space before it
        }
        var lines = [
            ".TH \(Self.roff(name.uppercased())) \(section) \"\" \"\(manual)\" \"\(manual) Manual\"",
            ".SH NAME", "\(Self.roff(name)) \\- \(Self.roff(abstract))",
            ".SH SYNOPSIS", Self.roff(usageLine(chain: [self])),
            ".SH DESCRIPTION", Self.roff(abstract),
        ]
        if !description.isEmpty { lines += [".PP", Self.roff(description)] }
        lines += [".SH OPTIONS"] + Self.optionItems(options: options, flags: flags)
        lines += [".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "Show help information."]
        lines.append(".SH COMMANDS")
        for chain in allChains.dropFirst() where !chain[chain.count - 1].isGroup {
            let command = chain[chain.count - 1]
            lines += [".TP", "\\fB\(Self.roff(usageLine(chain: chain)))\\fR", Self.roff(command.abstract)]
            var items = command.arguments.map { [".TP", "\\fI<\(Self.roff($0.name))>\\fR", Self.roff($0.help)] }
                .flatMap { $0 }
            items += Self.optionItems(options: command.options, flags: command.flags)
            if !items.isEmpty { lines += [".RS"] + items + [".RE"] }
        }
        if !exitStatus.isEmpty { lines += [".SH EXIT STATUS", Self.roff(exitStatus)] }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `.TP` items for options (`-n, --name <name>`) and flags, each with its help.
    private static func optionItems(options: [OptionSpec], flags: [FlagSpec]) -> [String] {
        func label(_ name: String, _ shortName: Character?) -> String {
            (shortName.map { "\\fB\\-\(roff(String($0)))\\fR, " } ?? "") + "\\fB\\-\\-\(roff(name))\\fR"
        }
        return options.flatMap {
            [".TP", label($0.name, $0.shortName) + " \\fI<\(roff($0.valueName))>\\fR", roff($0.help)]
        }
            + flags.flatMap { [".TP", label($0.name, $0.shortName), roff($0.help)] }
    }

    /// `text` with its hard line breaks joined into one line (roff fills paragraphs itself).
    private static func flowed(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// `text` safe as roff text: backslashes and hyphens escaped, and a leading `.` or `'` (which
    /// would start a request) guarded.
    static func roff(_ text: String) -> String {
        let escaped = text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}

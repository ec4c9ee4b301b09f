/// Shell completion scripts generated from the grammar, so they can never list a verb the tool lacks.
///
/// Each script finds the command typed so far by walking the words before the cursor: a word that
/// names a subcommand of the current command descends, a word after an option that takes a value is
/// that value, anything else (flags, positionals) is skipped. It then offers that command's
/// subcommands, its own and inherited options and flags, and `-h`/`--help`.
extension CommandSpec {
    /// Every command in the tree with its chain from the root (the root first), depth first.
    package var allChains: [[CommandSpec]] {
        func walk(_ chain: [CommandSpec]) -> [[CommandSpec]] {
            [chain] + chain[chain.count - 1].subcommands.flatMap { walk(chain + [$0]) }
        }
        return walk([self])
    }

    /// The subcommand words below the root for `chain`, space-separated (`""` for the root).
    private static func pathKey(_ chain: [CommandSpec]) -> String {
        chain.dropFirst().map(\.name).joined(separator: " ")
    }

    /// What may follow the last command of `chain`: subcommand names, then `--long` and `-s` spellings
    /// of every option and flag it accepts (its own first, then inherited), then `-h`/`--help`.
    private static func candidates(_ chain: [CommandSpec]) -> [String] {
        var words = chain[chain.count - 1].subcommands.map(\.name)
        for declaring in chain.reversed() {
            for option in declaring.options { words += spellings(option.name, option.shortName) }
            for flag in declaring.flags { words += spellings(flag.name, flag.shortName) }
        }
        return words + ["-h", "--help"]
    }

    /// `--name` and, if there is one, `-s`.
    private static func spellings(_ name: String, _ shortName: Character?) -> [String] {
        ["--\(name)"] + (shortName.map { ["-\($0)"] } ?? [])
    }

    /// Every spelling of an option that takes a value anywhere in the tree: the word after it is its value.
    private var valueOptionSpellings: [String] {
        var spellings: [String] = []
        for chain in allChains {
            for option in chain[chain.count - 1].options {
                for spelling in Self.spellings(option.name, option.shortName) where !spellings.contains(spelling) {
                    spellings.append(spelling)
                }
            }
        }
        return spellings
    }

    /// A bash completion script: `source` it (or install it under bash-completion's completions
    /// directory as the tool's name) and `complete -p <tool>` shows it.
    package func bashCompletion() -> String {
        let function = "_" + name.replacing("-", with: "_")
        let known = allChains.dropFirst().map { Self.pathKey($0) }.joined(separator: "|")
        let cases = allChains.map { chain in
            "        \"\(Self.pathKey(chain))\") words=\"\(Self.candidates(chain).joined(separator: " "))\" ;;"
        }
        return """
            # bash completion for \(name), generated from its grammar (\(name) --generate-completion bash).
            \(function)() {
                local cur=${COMP_WORDS[COMP_CWORD]} cmdpath="" next word words="" i skip=false
                local known="|\(known)|"
                for ((i = 1; i < COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]}
                    if $skip; then skip=false; continue; fi
                    case "$word" in
                        \(valueOptionSpellings.joined(separator: " | "))) skip=true ;;
                        -*) ;;
                        *)
                            next="${cmdpath:+$cmdpath }$word"
                            if [[ $known == *"|$next|"* ]]; then cmdpath=$next; fi
                            ;;
                    esac
                done
                if $skip; then
                    COMPREPLY=($(compgen -f -- "$cur"))
                    return
                fi
                case "$cmdpath" in
            \(cases.joined(separator: "\n"))
                esac
                COMPREPLY=($(compgen -W "$words" -- "$cur"))
            }
            complete -F \(function) \(name)

            """
    }

    /// A zsh completion script (`#compdef`): install it as `_<tool>` on `$fpath`.
    package func zshCompletion() -> String {
        let known = allChains.dropFirst().map { Self.pathKey($0) }.joined(separator: "|")
        let cases = allChains.map { chain in
            "    (\"\(Self.pathKey(chain))\") candidates=(\(Self.candidates(chain).joined(separator: " "))) ;;"
        }
        return """
            #compdef \(name)
            # zsh completion for \(name), generated from its grammar (\(name) --generate-completion zsh).
            local cmdpath="" next word i skip=0
            local known="|\(known)|"
            local -a candidates
            for ((i = 2; i < CURRENT; i++)); do
                word=${words[i]}
                if (( skip )); then skip=0; continue; fi
                case $word in
                    (\(valueOptionSpellings.joined(separator: "|"))) skip=1 ;;
                    (-*) ;;
                    (*)
                        next="${cmdpath:+$cmdpath }$word"
                        if [[ $known == *"|$next|"* ]]; then cmdpath=$next; fi
                        ;;
                esac
            done
            if (( skip )); then _files; return; fi
            case $cmdpath in
            \(cases.joined(separator: "\n"))
            esac
            compadd -- $candidates

            """
    }

    /// A fish completion script: install it as `<tool>.fish` in a `vendor_completions.d` directory.
    /// Unlike bash and zsh, fish shows each subcommand's abstract and each option's help.
    package func fishCompletion() -> String {
        let helper = "__" + name.replacing("-", with: "_") + "_at"
        let known = allChains.dropFirst().map { Self.fishQuoted(Self.pathKey($0)) }.joined(separator: " ")
        var lines = [
            "# fish completion for \(name), generated from its grammar (\(name) --generate-completion fish).",
            "# \(helper) PATH: whether the subcommand words typed so far are exactly PATH.",
            "function \(helper)",
            "    set -l known \(known)",
            "    set -l cmdpath",
            "    set -l skip 0",
            "    set -l tokens (commandline -opc)",
            "    set -e tokens[1]",
            "    for word in $tokens",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $word",
            "            case \(valueOptionSpellings.joined(separator: " "))",
            "                set skip 1",
            "            case '-*'",
            "            case '*'",
            "                if contains -- (string join ' ' -- $cmdpath $word) $known",
            "                    set cmdpath $cmdpath $word",
            "                end",
            "        end",
            "    end",
            "    set -l joined (string join ' ' -- $cmdpath)",
            "    test \"$joined\" = \"$argv[1]\"",
            "end",
            "complete -c \(name) -f",
        ]
        for chain in allChains {
            let command = chain[chain.count - 1]
            let prefix =
                "complete -c \(name) -n " + Self.fishQuoted("\(helper) \(Self.fishQuoted(Self.pathKey(chain)))")
            for subcommand in command.subcommands {
                lines.append("\(prefix) -a \(subcommand.name) -d \(Self.fishQuoted(subcommand.abstract))")
            }
            for declaring in chain.reversed() {
                for option in declaring.options {
                    let short = option.shortName.map { " -s \($0)" } ?? ""
                    lines.append("\(prefix) -l \(option.name)\(short) -r -d \(Self.fishQuoted(option.help))")
                }
                for flag in declaring.flags {
                    let short = flag.shortName.map { " -s \($0)" } ?? ""
                    lines.append("\(prefix) -l \(flag.name)\(short) -d \(Self.fishQuoted(flag.help))")
                }
            }
        }
        lines.append("complete -c \(name) -s h -l help -d 'Show help information.'")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as one fish single-quoted word (only `\` and `'` are special inside).
    private static func fishQuoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}

extension CommandSpec {
    /// The hidden root options that print generated files instead of running a command:
    /// `--generate-completion bash|zsh|fish` and `--generate-manpage`, each the whole command line.
    /// Returns `.help` with the file (print it, exit 0), `.usageError` for an unknown shell, or nil
    /// when `arguments` are not such a request (parse them as usual). Hidden: not in help, so the
    /// grammar the completions describe stays the tool's real one.
    package func generatedFile(_ arguments: [String], manual: String) -> ParseResult? {
        let usage = "\(name) --generate-completion bash|zsh|fish"
        switch arguments {
        case ["--generate-manpage"]: return .help(manPage(manual: manual))
        case ["--generate-completion", "bash"]: return .help(bashCompletion())
        case ["--generate-completion", "zsh"]: return .help(zshCompletion())
        case ["--generate-completion", "fish"]: return .help(fishCompletion())
        case ["--generate-completion"]:
            return .usageError(message: "missing shell for --generate-completion", usage: usage)
        default:
            guard arguments.count == 2, arguments[0] == "--generate-completion" else { return nil }
            return .usageError(message: "unknown shell '\(arguments[1])' (bash, zsh or fish)", usage: usage)
        }
    }
}

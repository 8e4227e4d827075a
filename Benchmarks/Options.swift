/// The command line.
struct Options: Sendable {
  /// A short run (a few seconds) for CI smoke tests.
  var quick = false
  var format = OutputFormat.table
  /// The workloads to run, in report order; empty for all of them.
  var workloadIDs: [String] = []
  var registryFill = RegistryFill.types
  var listWorkloads = false
  var showHelp = false

  static let usage = """
    USAGE: strata-bench [--quick] [--format table|json] [--workload ID[,ID...]]...
                        [--registry-fill types|names] [--list] [--help]

    Measures Strata against hand-written construction (manual) and a naive locked-dictionary
    container (naive): median ns/op and allocations/op per workload.

    OPTIONS:
      --quick                 Few, short samples (a few seconds in all) instead of about a minute.
      --format table|json     Markdown tables (default) or one JSON object on standard output.
                              Progress always goes to standard error.
      --workload ID[,ID...]   Run only these workloads (repeatable). See --list.
      --registry-fill KIND    The 10,000 other keys of registry-10k, and the services of build-1k,
                              build-10k and validate-10k: 'types' (distinct service types,
                              default) or 'names' (one type under Int names).
      --list                  List the workloads and exit.
      -h, --help              Show this help and exit.
    """

  /// A command-line mistake, reported with the usage.
  struct UsageError: Error, CustomStringConvertible {
    let description: String
  }

  /// Parses the arguments after the program name.
  static func parse(_ arguments: [String]) throws(UsageError) -> Options {
    var options = Options()
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      // Accept both `--option value` and `--option=value`.
      var name = argument
      var inlineValue: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      func value() throws(UsageError) -> String {
        if let inlineValue { return inlineValue }
        guard let next = remaining.popFirst() else { throw UsageError(description: "\(name) needs a value") }
        return next
      }
      switch name {
      case "--quick": options.quick = true
      case "--format":
        let text = try value()
        guard let format = OutputFormat(rawValue: text) else {
          throw UsageError(description: "unknown format '\(text)' (use table or json)")
        }
        options.format = format
      case "--workload":
        for id in try value().split(separator: ",").map(String.init) {
          guard Workload.all.contains(where: { $0.id == id }) else {
            let known = Workload.all.map(\.id).joined(separator: ", ")
            throw UsageError(description: "unknown workload '\(id)' (known: \(known))")
          }
          if !options.workloadIDs.contains(id) { options.workloadIDs.append(id) }
        }
      case "--registry-fill":
        let text = try value()
        guard let fill = RegistryFill(rawValue: text) else {
          throw UsageError(description: "unknown registry fill '\(text)' (use types or names)")
        }
        options.registryFill = fill
      case "--list": options.listWorkloads = true
      case "--help", "-h": options.showHelp = true
      default: throw UsageError(description: "unknown argument '\(argument)'")
      }
    }
    return options
  }

  /// The selected workloads, in report order.
  var workloads: [Workload] {
    workloadIDs.isEmpty ? Workload.all : Workload.all.filter { workloadIDs.contains($0.id) }
  }
}

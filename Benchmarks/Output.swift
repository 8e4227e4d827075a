/// The formats the report can be printed in.
enum OutputFormat: String, CaseIterable, Sendable {
  /// Markdown tables for people.
  case table
  /// One JSON object for tools: `{"results": [...], "ratios": {...}, "config": {...}}`. Each
  /// result has the median ns/op per variant (`ns_per_op`) and the fastest sample's
  /// (`ns_per_op_minimum`).
  case json
}

/// A ratio the issue sets a target for: Strata on one workload over a reference measurement.
struct RatioTarget: Sendable {
  /// `transient/manual`, `named/strata-transient`, …
  let id: String
  /// The workload whose Strata time is the numerator.
  let workload: String
  /// The workload and variant whose time is the denominator.
  let referenceWorkload: String
  let referenceVariant: Variant
  /// The largest ratio that passes.
  let limit: Double

  /// Strata on `workload` over the same workload's `manual` variant.
  static func versusManual(_ workload: String, limit: Double) -> RatioTarget {
    RatioTarget(
      id: "\(workload)/manual", workload: workload, referenceWorkload: workload,
      referenceVariant: .manual, limit: limit)
  }

  /// Strata on `workload` over Strata on `transient`.
  static func versusStrataTransient(_ workload: String, limit: Double) -> RatioTarget {
    RatioTarget(
      id: "\(workload)/strata-transient", workload: workload, referenceWorkload: "transient",
      referenceVariant: .strata, limit: limit)
  }

  /// Strata on `workload` over Strata on `reference`: how a cost grows with size.
  static func versusStrata(_ workload: String, over reference: String, limit: Double) -> RatioTarget {
    RatioTarget(
      id: "\(workload)/\(reference)", workload: workload, referenceWorkload: reference,
      referenceVariant: .strata, limit: limit)
  }

  static let all: [RatioTarget] = [
    .versusManual("transient", limit: 1.5),
    .versusManual("singleton", limit: 2),
    .versusManual("graph", limit: 1.5),
    .versusManual("arguments", limit: 2),
    .versusStrataTransient("named", limit: 1.3),
    .versusStrataTransient("registry-10k", limit: 1.2),
    .versusStrataTransient("failed-resolve", limit: 20),
    .versusStrataTransient("concurrent-transient", limit: 0.63),
    .versusStrata("concurrent-server-request", over: "server-request", limit: 0.63),
    .versusManual("request-scope", limit: 3),
    .versusStrataTransient("scope-depth-8", limit: 1.3),
    .versusStrata("build-10k", over: "build-1k", limit: 12),
    .versusStrata("validate-10k", over: "build-10k", limit: 10),
  ]

  /// The measured ratio; `nil` unless both times were measured.
  ///
  /// A ratio to Strata on another workload uses that workload's operation interleaved with this
  /// one's samples when this one has it as a reference (see `Subjects.references`), and the other
  /// workload's own result otherwise.
  func measured(in measurements: [Measurement]) -> Double? {
    func measurement(_ id: String) -> Measurement? { measurements.first { $0.workload.id == id } }
    guard let subject = measurement(workload), let numerator = subject.nanosecondsPerOperation[.strata]
    else { return nil }
    let interleaved = referenceVariant == .strata ? subject.references[referenceWorkload] : nil
    guard
      let denominator = interleaved
        ?? measurement(referenceWorkload)?.nanosecondsPerOperation[referenceVariant],
      denominator > 0
    else { return nil }
    return numerator / denominator
  }
}

/// Everything that was measured, ready to print.
struct Report {
  let measurements: [Measurement]
  let plan: MeasurementPlan
  let options: Options
  let elapsedNanoseconds: UInt64

  /// Markdown: the results table, the ratio targets, notes.
  func markdown() -> String {
    var lines = [
      "| workload | strata ns/op | manual ns/op | naive ns/op | strata/manual "
        + "| strata allocs/op | manual allocs/op | naive allocs/op |",
      "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for measurement in measurements {
      let times = Variant.allCases.map { fixed(measurement.nanosecondsPerOperation[$0], decimals: 2) }
      let allocations = Variant.allCases.map { fixed(measurement.allocationsPerOperation[$0], decimals: 2) }
      let ratio = measurement.ratioVersusManual.map { fixed($0, decimals: 2) + "×" } ?? "n/a"
      lines.append(
        "| \(measurement.workload.id) | " + times.joined(separator: " | ") + " | \(ratio) | "
          + allocations.joined(separator: " | ") + " |")
    }
    lines += ["", "| ratio | measured | target | result |", "|---|--:|--:|---|"]
    for target in RatioTarget.all {
      let measured = target.measured(in: measurements)
      let verdict = measured.map { $0 <= target.limit ? "PASS" : "MISS" } ?? "n/a (not measured)"
      lines.append(
        "| \(target.id) | \(measured.map { fixed($0, decimals: 2) + "×" } ?? "n/a") "
          + "| ≤ \(fixed(target.limit, decimals: 2))× | \(verdict) |")
    }
    lines.append("")
    lines.append(
      "- Median of \(plan.samples) samples per variant (~\(plan.sampleNanoseconds / 1_000_000) ms each, "
        + "variants interleaved); mode \(options.quick ? "quick" : "standard"); "
        + "total \(fixed(Double(elapsedNanoseconds) / 1e9, decimals: 1)) s. A ratio to strata-transient "
        + "or to another workload (build-10k/build-1k, validate-10k/build-10k) divides by that operation "
        + "of Strata sampled alongside the workload's own samples.")
    for measurement in measurements {
      guard let floor = measurement.references[MinimalScope.referenceID],
        let strata = measurement.nanosecondsPerOperation[.strata],
        let manual = measurement.nanosecondsPerOperation[.manual], floor > 0, manual > 0
      else { continue }
      lines.append(
        "- \(measurement.workload.id): a minimal scope with Strata's guarantees (Benchmarks/MinimalScope.swift) "
          + "took \(fixed(floor, decimals: 1)) ns/op, \(fixed(floor / manual, decimals: 2))× manual; "
          + "Strata took \(fixed(strata / floor, decimals: 2))× the minimal scope.")
    }
    if let problem = AllocationCounter.problem {
      lines.append("- Allocations were not counted: \(problem).")
    }
    if let speedup = manualParallelSpeedup {
      var line =
        "- \(Workload.concurrentTransient.id): hand-written code ran \(fixed(speedup, decimals: 2))× as fast "
        + "on \(Workload.concurrentTransient.threads) threads as on one (\(onlineProcessors) CPUs online)"
      if speedup < 1.6 {
        line += "; other processes were probably using the CPUs, so its ratio is not trustworthy"
      }
      lines.append(line + ".")
    }
    for measurement in measurements where !measurement.residentGrowth.isEmpty {
      let growth = Variant.allCases.compactMap { variant in
        measurement.residentGrowth[variant].map {
          "\(variant.rawValue) \(fixed(Double($0) / 1_048_576, decimals: 1)) MiB"
        }
      }
      let during =
        measurement.workload.id == Workload.rootTransientChurn.id
        ? "resolving and dropping 1,000,000 disposable transients" : "building the containers"
      var line =
        "- \(measurement.workload.id): resident set growth while \(during): "
        + growth.joined(separator: ", ")
      if measurement.workload.id == Workload.registry10k.id {
        line +=
          " (other keys: \(options.registryFill.rawValue); Strata's figure includes the metadata the "
          + "runtime makes for its generic registration classes when a service type is first registered)"
      }
      lines.append(line + ".")
    }
    return lines.joined(separator: "\n")
  }

  /// One JSON object.
  func json() -> String {
    let results: [JSON] = measurements.map { measurement in
      var fields: [(String, JSON)] = [
        ("workload", .string(measurement.workload.id)),
        ("ns_per_op", .variants { measurement.nanosecondsPerOperation[$0].map(JSON.number) ?? .null }),
        ("ns_per_op_minimum", .variants { measurement.minimum[$0].map(JSON.number) ?? .null }),
        (
          "allocs_per_op",
          .variants { measurement.allocationsPerOperation[$0].map(JSON.number) ?? .null }
        ),
        ("ratio_vs_manual", measurement.ratioVersusManual.map(JSON.number) ?? .null),
        (
          "ns_per_op_quartiles",
          .variants { variant in
            measurement.quartiles[variant].map { .array([.number($0.0), .number($0.1)]) } ?? .null
          }
        ),
        ("iterations_per_sample", .variants { measurement.iterations[$0].map(JSON.integer) ?? .null }),
        ("samples", .integer(measurement.samples)),
        ("threads", .integer(measurement.workload.threads)),
        ("setup_s", .number(Double(measurement.setupNanoseconds) / 1e9)),
      ]
      if let registrations = measurement.workload.registrations {
        fields.append(("registrations", .integer(registrations)))
      }
      for (id, reference) in measurement.references.sorted(by: { $0.key < $1.key }) {
        // Strata on another workload, or a hand-written floor such as the minimal scope.
        let isWorkload = Workload.all.contains { $0.id == id }
        fields.append(((isWorkload ? "strata_" : "") + "\(id)_reference_ns_per_op", .number(reference)))
      }
      if measurement.workload.id == Workload.concurrentTransient.id, let speedup = manualParallelSpeedup {
        fields.append(("manual_parallel_speedup", .number(speedup)))
      }
      if !measurement.residentGrowth.isEmpty {
        fields.append(
          (
            "rss_growth_bytes",
            .object(
              measurement.residentGrowth.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { ($0.key.rawValue, .integer($0.value)) })
          ))
      }
      return .object(fields)
    }
    let ratios: [(String, JSON)] = RatioTarget.all.compactMap { target in
      guard let measured = target.measured(in: measurements) else { return nil }
      return (
        target.id,
        .object([
          ("measured", .number(measured)), ("target", .number(target.limit)),
          ("pass", .bool(measured <= target.limit)),
        ])
      )
    }
    let config: [(String, JSON)] = [
      ("mode", .string(options.quick ? "quick" : "standard")),
      ("samples", .integer(plan.samples)),
      ("sample_target_ns", .integer(Int(plan.sampleNanoseconds))),
      ("allocation_iterations", .integer(plan.allocationIterations)),
      ("allocations_counted", .bool(AllocationCounter.isAvailable)),
      ("registry_fill", .string(options.registryFill.rawValue)),
      ("cpus_online", .integer(onlineProcessors)),
      ("elapsed_s", .number(Double(elapsedNanoseconds) / 1e9)),
    ]
    let document = JSON.object([
      ("results", .array(results)), ("ratios", .object(ratios)), ("config", .object(config)),
    ])
    return document.rendered()
  }
}

extension Report {
  /// How much faster hand-written `transient` ran on several threads than on one: a check that
  /// the CPUs were really free for `concurrent-transient`. `nil` unless both were measured.
  var manualParallelSpeedup: Double? {
    func manual(_ workload: Workload) -> Double? {
      measurements.first { $0.workload.id == workload.id }?.nanosecondsPerOperation[.manual]
    }
    guard let single = manual(.transient), let parallel = manual(.concurrentTransient), parallel > 0
    else { return nil }
    return single / parallel
  }
}

extension Measurement {
  /// Strata's time over the hand-written time.
  var ratioVersusManual: Double? {
    guard let strata = nanosecondsPerOperation[.strata], let manual = nanosecondsPerOperation[.manual],
      manual > 0
    else { return nil }
    return strata / manual
  }
}

/// A JSON value, rendered with two-space indentation. Non-finite numbers become `null`.
enum JSON {
  case object([(String, JSON)])
  case array([JSON])
  case number(Double)
  case integer(Int)
  case string(String)
  case bool(Bool)
  case null

  /// An object with one member per variant, in variant order.
  static func variants(_ value: (Variant) -> JSON) -> JSON {
    .object(Variant.allCases.map { ($0.rawValue, value($0)) })
  }

  func rendered(indent: String = "") -> String {
    let inner = indent + "  "
    switch self {
    case .object(let members):
      guard !members.isEmpty else { return "{}" }
      let body = members.map { inner + JSON.quoted($0.0) + ": " + $0.1.rendered(indent: inner) }
      return "{\n" + body.joined(separator: ",\n") + "\n" + indent + "}"
    case .array(let elements):
      guard !elements.isEmpty else { return "[]" }
      if elements.allSatisfy(\.isScalar) {
        return "[" + elements.map { $0.rendered() }.joined(separator: ", ") + "]"
      }
      return "[\n" + elements.map { inner + $0.rendered(indent: inner) }.joined(separator: ",\n") + "\n"
        + indent + "]"
    case .number(let value): return value.isFinite ? fixed(value, decimals: 3) : "null"
    case .integer(let value): return String(value)
    case .string(let value): return JSON.quoted(value)
    case .bool(let value): return value ? "true" : "false"
    case .null: return "null"
    }
  }

  private var isScalar: Bool {
    switch self {
    case .object, .array: false
    default: true
    }
  }

  private static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}

/// `value` with exactly `decimals` digits after the point (no Foundation needed); `n/a` for `nil`.
func fixed(_ value: Double?, decimals: Int) -> String {
  guard let value else { return "n/a" }
  guard value.isFinite else { return "\(value)" }
  var scale = 1
  for _ in 0..<decimals { scale *= 10 }
  let scaled = (value.magnitude * Double(scale)).rounded()
  guard scaled < 1e15 else { return "\(value)" }
  let units = Int(scaled)
  var text = (value < 0 && units != 0 ? "-" : "") + String(units / scale)
  if decimals > 0 {
    let fraction = String(units % scale)
    text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
  }
  return text
}

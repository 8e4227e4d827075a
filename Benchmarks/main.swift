#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// strata-bench: Strata against hand-written construction and a naive container.
// Run `strata-bench --help` for the options; the report goes to standard output, progress to
// standard error.

let options: Options
do {
  options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  printError("strata-bench: \(error)\nRun 'strata-bench --help' for the options.")
  exit(2)
}
if options.showHelp {
  print(Options.usage)
  exit(0)
}
if options.listWorkloads {
  for workload in Workload.all { print("\(workload.id)\t\(workload.summary)") }
  exit(0)
}

AllocationCounter.install()
if let problem = AllocationCounter.problem {
  printError("strata-bench: warning: allocations will not be counted: \(problem)")
}

let plan: MeasurementPlan = options.quick ? .quick : .standard
let harness = Harness(plan: plan, options: SetupOptions(registryFill: options.registryFill))
let workloads = options.workloads
let started = monotonicNanoseconds()
var measurements: [Measurement] = []
var failures = 0
for (index, workload) in workloads.enumerated() {
  printError("[\(index + 1)/\(workloads.count)] \(workload.id): \(workload.summary)")
  let workloadStarted = monotonicNanoseconds()
  do {
    let measurement = try harness.measure(workload)
    measurements.append(measurement)
    let times = Variant.allCases.map {
      "\($0.rawValue) \(fixed(measurement.nanosecondsPerOperation[$0], decimals: 2))"
    }
    let seconds = Double(monotonicNanoseconds() - workloadStarted) / 1e9
    let setup = Double(measurement.setupNanoseconds) / 1e9
    printError(
      "    ns/op: " + times.joined(separator: ", ")
        + " (setup \(fixed(setup, decimals: 2)) s, total \(fixed(seconds, decimals: 1)) s)")
  } catch {
    failures += 1
    printError("strata-bench: error: workload \(workload.id) failed: \(error)")
  }
}

let report = Report(
  measurements: measurements, plan: plan, options: options,
  elapsedNanoseconds: monotonicNanoseconds() - started)
print(options.format == .json ? report.json() : report.markdown())
printError("strata-bench: done in \(fixed(Double(report.elapsedNanoseconds) / 1e9, decimals: 1)) s")
exit(failures == 0 ? 0 : 1)

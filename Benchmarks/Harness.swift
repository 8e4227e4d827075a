import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The three implementations every workload compares.
enum Variant: String, CaseIterable, Sendable {
  /// Strata's `Container`.
  case strata
  /// Hand-written construction: the physical limit.
  case manual
  /// ``NaiveContainer``: a locked dictionary of factories with `as!` casts.
  case naive
}

/// Performs an operation `iterations` times; throws if an operation fails in a way it should not.
typealias Body = @Sendable (_ iterations: Int) throws -> Void

/// What a workload's setup produces: one body per variant, plus facts measured while setting up.
struct Subjects: Sendable {
  var strata: Body
  var manual: Body
  var naive: Body
  /// Strata's operation of other workloads, by workload id, for targets that are a ratio to it
  /// (Strata's plain `transient` resolve; `build-1k` for `build-10k`): measured on one thread,
  /// interleaved with the variants' samples so that both see the same conditions. A ratio of
  /// two workloads measured one after the other also measures how the machine drifted between
  /// them: `build-10k/build-1k` read 9.5–17.8× in seven runs of one build on a quiet machine.
  var references: [String: Body] = [:]
  /// Growth of the resident set while each variant's setup ran, for workloads about memory.
  var residentGrowth: [Variant: Int] = [:]

  func body(for variant: Variant) -> Body {
    switch variant {
    case .strata: strata
    case .manual: manual
    case .naive: naive
    }
  }
}

/// One row of the report: an operation, and how to set it up for each variant.
///
/// To add a workload, append one to ``Workload/all``.
struct Workload: Sendable {
  /// The identifier used by `--workload` and in the JSON output.
  let id: String
  /// One line on what is measured.
  let summary: String
  /// How many threads run the operation at once; ns/op is then wall time over all operations.
  var threads = 1
  /// At most this many operations are counted for allocations, for workloads whose one
  /// operation is long (building a container); `nil` for the plan's count.
  var allocationIterations: Int? = nil
  /// How many registrations the workload's container holds, for workloads about building one;
  /// reported in the JSON output.
  var registrations: Int? = nil
  /// Builds containers and returns the bodies; runs once, before any measurement.
  let setup: @Sendable (SetupOptions) throws -> Subjects
}

/// Choices that change how workloads are set up.
struct SetupOptions: Sendable {
  /// How `registry-10k` makes its 10,000 other keys.
  var registryFill: RegistryFill = .types
}

/// How many samples to take and how long each lasts.
struct MeasurementPlan: Sendable {
  /// Samples per variant; the median is reported.
  var samples: Int
  /// The target duration of one sample; iterations are calibrated to reach it.
  var sampleNanoseconds: UInt64
  /// Operations counted (after the timed samples) to work out allocations per operation.
  var allocationIterations: Int

  /// About 3 seconds in all.
  static let quick = MeasurementPlan(
    samples: 9, sampleNanoseconds: 8_000_000, allocationIterations: 2000)
  /// About a minute in all.
  static let standard = MeasurementPlan(
    samples: 51, sampleNanoseconds: 50_000_000, allocationIterations: 20_000)
}

/// The outcome of measuring one workload.
struct Measurement: Sendable {
  let workload: Workload
  /// Median ns per operation.
  var nanosecondsPerOperation: [Variant: Double] = [:]
  /// Fastest sample's ns per operation.
  var minimum: [Variant: Double] = [:]
  /// First and third quartiles of ns per operation.
  var quartiles: [Variant: (Double, Double)] = [:]
  /// Median ns per operation of each of the workload's references (see `Subjects.references`).
  var references: [String: Double] = [:]
  /// Allocations per operation; empty if allocations cannot be counted.
  var allocationsPerOperation: [Variant: Double] = [:]
  /// Operations per sample, as calibrated.
  var iterations: [Variant: Int] = [:]
  var samples = 0
  /// How long the workload's setup (all variants) took.
  var setupNanoseconds: UInt64 = 0
  var residentGrowth: [Variant: Int] = [:]
}

/// A failure that stops the benchmark: a setup that could not be built, or an operation that
/// threw or returned something it should not have.
struct BenchmarkError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// Throws a ``BenchmarkError`` saying `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
  if !condition { throw BenchmarkError(message()) }
}

/// Runs a workload's variants in interleaved samples and summarizes them.
struct Harness {
  let plan: MeasurementPlan
  let options: SetupOptions

  func measure(_ workload: Workload) throws -> Measurement {
    let setupStarted = monotonicNanoseconds()
    let subjects = try workload.setup(options)
    let runner = Runner(threads: workload.threads)
    var measurement = Measurement(
      workload: workload, setupNanoseconds: monotonicNanoseconds() - setupStarted,
      residentGrowth: subjects.residentGrowth)

    // Every series: the three variants, and the references if there are any.
    var series = Variant.allCases.map {
      Series(of: .variant($0), body: subjects.body(for: $0), runner: runner)
    }
    for (id, body) in subjects.references.sorted(by: { $0.key < $1.key }) {
      series.append(Series(of: .reference(id), body: body, runner: Runner(threads: 1)))
    }

    // Calibrate, then warm up with one full-length sample, per series.
    var iterations: [Int] = []
    for entry in series {
      let count = try calibrate(entry.body, runner: entry.runner)
      _ = try entry.runner.run(entry.body, iterations: count)
      iterations.append(count)
    }

    // Interleave the series, rotating which goes first, so that drift hits all alike. Each sample
    // runs at another stack depth (see `Runner.stackShift(forSample:)`).
    var perOperation = [[Double]](repeating: [], count: series.count)
    for sample in 0..<plan.samples {
      let shift = Runner.stackShift(forSample: sample)
      for offset in series.indices {
        let index = (sample + offset) % series.count
        let result = try series[index].runner.run(
          series[index].body, iterations: iterations[index], stackShift: shift)
        perOperation[index].append(Double(result.nanoseconds) / Double(iterations[index]))
      }
    }
    for (index, entry) in series.enumerated() {
      let sorted = perOperation[index].sorted()
      let variant: Variant
      switch entry.subject {
      case .variant(let measured): variant = measured
      case .reference(let id):
        measurement.references[id] = quantile(sorted, 0.5)
        continue
      }
      measurement.nanosecondsPerOperation[variant] = quantile(sorted, 0.5)
      measurement.minimum[variant] = sorted.first
      measurement.quartiles[variant] = (quantile(sorted, 0.25), quantile(sorted, 0.75))
      measurement.iterations[variant] = iterations[index]
    }
    measurement.samples = plan.samples

    if AllocationCounter.isAvailable {
      for variant in Variant.allCases {
        let count = max(
          min(plan.allocationIterations, workload.allocationIterations ?? .max), workload.threads)
        AllocationCounter.start()
        defer { AllocationCounter.stop() }
        let result = try runner.run(subjects.body(for: variant), iterations: count)
        measurement.allocationsPerOperation[variant] = Double(result.allocations) / Double(count)
      }
    }
    return measurement
  }

  /// The iteration count that makes one sample last about `plan.sampleNanoseconds`.
  private func calibrate(_ body: @escaping Body, runner: Runner) throws -> Int {
    var count = max(1, runner.threads)
    while true {
      let elapsed = try runner.run(body, iterations: count).nanoseconds
      if elapsed >= plan.sampleNanoseconds / 8 || count >= 1 << 40 {
        let perOperation = max(Double(elapsed), 1) / Double(count)
        return max(runner.threads, Int(Double(plan.sampleNanoseconds) / perOperation))
      }
      count *= elapsed < plan.sampleNanoseconds / 256 ? 16 : 2
    }
  }
}

/// A body to sample, what it measures, and how to run it.
private struct Series {
  enum Subject {
    /// One of the workload's variants.
    case variant(Variant)
    /// Strata's operation of the workload with this id (see `Subjects.references`).
    case reference(String)
  }

  let subject: Subject
  let body: Body
  let runner: Runner

  init(of subject: Subject, body: @escaping Body, runner: Runner) {
    self.subject = subject
    self.body = body
    self.runner = runner
  }
}

/// The `fraction` quantile of sorted values, interpolating between neighbours.
func quantile(_ sorted: [Double], _ fraction: Double) -> Double {
  guard !sorted.isEmpty else { return .nan }
  let position = fraction * Double(sorted.count - 1)
  let lower = Int(position.rounded(.down))
  let upper = min(lower + 1, sorted.count - 1)
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
}

/// One timed run: wall time, and allocations counted meanwhile (0 unless counting is on).
struct RunResult {
  var nanoseconds: UInt64
  var allocations: Int
}

/// Runs a body on one thread, or splits its iterations over several threads started together.
struct Runner {
  let threads: Int

  /// How many bytes deeper than usual sample `sample` runs its body: a different multiple of 16
  /// for each of the first 256 samples, spread over 4 KiB.
  ///
  /// Why: where the stack sits relative to the heap objects a loop touches changes its speed
  /// (loads and stores whose addresses agree in their low 12 bits stall on each other, "4K
  /// aliasing"). Where it sits depends on the size of the environment and the executable's path,
  /// so the same build ran `request-scope` at 106–122 ns depending on the length of one
  /// environment variable (0–120 bytes), and at 106–113 ns once samples moved like this. Moving
  /// every variant's samples over many depths makes the median a typical figure instead of one
  /// process's luck, for all variants alike.
  static func stackShift(forSample sample: Int) -> Int {
    (sample * 49 % 256) * 16  // 49 is coprime with 256: distinct shifts
  }

  func run(_ body: @escaping Body, iterations: Int, stackShift: Int = 0) throws -> RunResult {
    if threads <= 1 {
      // `withUnsafeTemporaryAllocation` takes its bytes from the stack when there is room.
      return try withUnsafeTemporaryAllocation(byteCount: stackShift + 16, alignment: 16) { bytes in
        bytes[0] = 0  // touch it, so that it is not dropped
        let allocationsBefore = AllocationCounter.count
        let start = monotonicNanoseconds()
        try body(iterations)
        let end = monotonicNanoseconds()
        return RunResult(nanoseconds: end - start, allocations: AllocationCounter.count - allocationsBefore)
      }
    }
    return try runConcurrently(body, iterations: iterations)
  }

  /// Starts the threads, releases them at once, and times from the release until the last one
  /// finishes (thread creation and joining are not timed).
  private func runConcurrently(_ body: @escaping Body, iterations: Int) throws -> RunResult {
    let race = Race()
    var spawned: [pthread_t] = []
    for index in 0..<threads {
      let share = iterations / threads + (index < iterations % threads ? 1 : 0)
      let thread = spawnThread { [threads] in
        race.ready.add(1, ordering: .releasing)
        while !race.go.load(ordering: .acquiring) { sched_yield() }
        do {
          try body(share)
        } catch {
          race.failure.withLock { $0 = $0 ?? "\(error)" }
        }
        if race.finished.add(1, ordering: .acquiringAndReleasing).newValue == threads {
          race.end.store(monotonicNanoseconds(), ordering: .relaxed)
          race.endAllocations.store(AllocationCounter.count, ordering: .relaxed)
        }
      }
      guard let thread else {
        race.go.store(true, ordering: .releasing)
        for thread in spawned { join(thread) }
        throw BenchmarkError("could not start a thread")
      }
      spawned.append(thread)
    }
    while race.ready.load(ordering: .acquiring) < threads { sched_yield() }
    let allocationsBefore = AllocationCounter.count
    let start = monotonicNanoseconds()
    race.go.store(true, ordering: .releasing)
    for thread in spawned { join(thread) }
    if let failure = race.failure.withLock({ $0 }) { throw BenchmarkError(failure) }
    return RunResult(
      nanoseconds: race.end.load(ordering: .relaxed) - start,
      allocations: race.endAllocations.load(ordering: .relaxed) - allocationsBefore)
  }
}

/// What the threads of one concurrent run share.
private final class Race: Sendable {
  let ready = Atomic<Int>(0)
  let go = Atomic<Bool>(false)
  let finished = Atomic<Int>(0)
  let end = Atomic<UInt64>(0)
  let endAllocations = Atomic<Int>(0)
  let failure = Mutex<String?>(nil)
}

/// A dependency resolved on first use and then kept.
///
/// Ask for `Lazy<Service>` to defer an expensive service, or to break a circular dependency: the
/// cycle is closed only when ``value`` is first read, after both objects exist.
///
/// ```swift
/// final class ReportController {
///   let generator: Lazy<ReportGenerator>
///   init(generator: Lazy<ReportGenerator>) { self.generator = generator }
///   func export() throws -> Data { try generator.value.render() }
/// }
/// registry.register(ReportController.self, ReportController.init)   // Lazy is built for you
/// ```
///
/// The resolve runs as a top-level resolve in the scope the `Lazy` was made in, which it keeps
/// alive. Reading ``value`` from several threads at once resolves once.
///
/// `@unchecked Sendable`: `cached` is read and written only under `lock`.
public final class Lazy<Value>: @unchecked Sendable {
  private let scope: Scope
  private let make: @Sendable (Scope) throws -> Value
  private let lock = Lock()
  private var cached: Value?

  init(scope: Scope, make: @escaping @Sendable (Scope) throws -> Value) {
    self.scope = scope
    self.make = make
  }

  /// The resolved instance, resolved on the first read.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails; the next read tries again.
  public var value: Value {
    get throws {
      try lock.withLock {
        if let cached { return cached }
        let value = try make(scope)
        cached = value
        return value
      }
    }
  }

  /// Whether ``value`` has been resolved.
  public var isResolved: Bool { lock.withLock { cached != nil } }
}

/// A dependency resolved anew each time it is called: a factory for instances of `Value`.
///
/// ```swift
/// final class JobRunner {
///   let makeJob: Provider<Job>
///   init(makeJob: Provider<Job>) { self.makeJob = makeJob }
///   func runTwice() throws { try makeJob().run(); try makeJob().run() }
/// }
/// registry.register(JobRunner.self, JobRunner.init)   // Provider is built for you
/// ```
///
/// Each call is a top-level resolve in the scope the provider was made in, which it keeps alive;
/// the registration's lifetime decides whether calls share an instance.
public struct Provider<Value>: Sendable {
  private let scope: Scope
  private let make: @Sendable (Scope) throws -> Value

  init(scope: Scope, make: @escaping @Sendable (Scope) throws -> Value) {
    self.scope = scope
    self.make = make
  }

  /// Resolves an instance.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails.
  public func get() throws -> Value { try make(scope) }

  /// Resolves an instance: `try provider()`.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails.
  public func callAsFunction() throws -> Value { try make(scope) }
}

/// A type Strata builds by itself when asked for and not registered: ``Lazy`` and ``Provider``.
protocol ImplicitDependency {
  init(implicitIn scope: Scope)
}

extension Lazy: ImplicitDependency {
  convenience init(implicitIn scope: Scope) {
    self.init(scope: scope) { try $0.resolve(Value.self) }
  }
}

extension Provider: ImplicitDependency {
  init(implicitIn scope: Scope) {
    self.init(scope: scope) { try $0.resolve(Value.self) }
  }
}

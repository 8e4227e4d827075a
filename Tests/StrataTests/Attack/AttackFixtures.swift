import Strata

// The services and helpers of the attack suites (`Attack*Tests`), where `Support/` has no
// equivalent.

/// What a factory's own resolve ended with, handed back as the factory's product.
struct Probe: Sendable {
  let outcome: Outcome
}

/// A holder of what its factory resolved, so that the test can see which instance that was.
final class Holding<Held: Sendable>: Sendable {
  let held: Held

  init(_ held: Held) {
    self.held = held
  }
}

/// A disposable whose disposer logs `dispose <label>` and then runs `body`: it closes a scope,
/// meets another thread, or takes its time.
final class DisposerHook: Disposable, Sendable {
  let label: String
  private let log: Collector<String>
  private let body: @Sendable () throws -> Void

  init(_ label: String, log: Collector<String>, body: @escaping @Sendable () throws -> Void = {}) {
    self.label = label
    self.log = log
    self.body = body
  }

  func dispose() throws {
    log.append("dispose \(label)")
    try body()
  }
}

/// An asynchronous disposable that takes 20 ms before it logs `dispose <label>`, so that a close
/// that does not await it returns first.
final class SlowAsyncDisposer: AsyncDisposable, Sendable {
  static let duration = Duration.milliseconds(20)

  let label: String
  private let log: Collector<String>

  init(_ label: String, log: Collector<String>) {
    self.label = label
    self.log = log
  }

  func dispose() async throws {
    try? await Task.sleep(for: Self.duration)
    log.append("dispose \(label)")
  }
}

/// One of ten distinct disposable types, `Numbered<0>` to `Numbered<9>`: more scoped instances
/// than a scope keeps in its inline slots (four), so that the rest take the overflow path.
final class Numbered<let index: Int>: Disposable, Sendable {
  private let disposed: Counter

  init(disposed: Counter) {
    self.disposed = disposed
  }

  func dispose() throws {
    disposed.increment()
  }
}

/// Registers `Numbered<0>` to `Numbered<9>` as `scoped(.request)`; each factory run counts in
/// `made` (after a pause of `pauseMicroseconds`, if any), each disposal in `disposed`.
func registerNumbered(
  _ registry: Registrar, made: Counter, disposed: Counter, pauseMicroseconds: UInt32 = 0
) {
  func register<let index: Int>(_: Numbered<index>.Type) {
    registry.register(Numbered<index>.self, lifetime: .scoped(.request)) { _ in
      if pauseMicroseconds > 0 { pause(microseconds: pauseMicroseconds) }
      made.increment()
      return Numbered<index>(disposed: disposed)
    }
  }
  register(Numbered<0>.self)
  register(Numbered<1>.self)
  register(Numbered<2>.self)
  register(Numbered<3>.self)
  register(Numbered<4>.self)
  register(Numbered<5>.self)
  register(Numbered<6>.self)
  register(Numbered<7>.self)
  register(Numbered<8>.self)
  register(Numbered<9>.self)
}

/// Resolves `Numbered<index>` (0 to 9) from `scope`.
func resolveNumbered(_ index: Int, from scope: Scope) throws -> AnyObject {
  switch index {
  case 0: try scope.resolve(Numbered<0>.self)
  case 1: try scope.resolve(Numbered<1>.self)
  case 2: try scope.resolve(Numbered<2>.self)
  case 3: try scope.resolve(Numbered<3>.self)
  case 4: try scope.resolve(Numbered<4>.self)
  case 5: try scope.resolve(Numbered<5>.self)
  case 6: try scope.resolve(Numbered<6>.self)
  case 7: try scope.resolve(Numbered<7>.self)
  case 8: try scope.resolve(Numbered<8>.self)
  default: try scope.resolve(Numbered<9>.self)
  }
}

extension Outcome {
  /// What `body` ended with, for a body that returns no object (an array, an optional, nothing);
  /// a success carries the identity of the returned type.
  init<Value>(discarding body: () throws -> Value) {
    do {
      _ = try body()
      self = .success(ObjectIdentifier(Value.self))
    } catch let error as ResolutionError {
      self = .failure(error.code)
    } catch {
      self = .otherError(String(describing: error))
    }
  }

  /// Whether the body returned.
  var isSuccess: Bool {
    if case .success = self { return true }
    return false
  }
}

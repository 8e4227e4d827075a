#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The states of ``Scope/lifecycle``: open → closing → closed, never back.
///
/// | state | resolves | what a `close()` does |
/// |---|---|---|
/// | `open` | yes | moves it to `closing` and closes it |
/// | `closing` | no (`scopeClosed`) | waits until it is `closed` (unless it is the closer itself) |
/// | `closed` | no (`scopeClosed`) | returns |
@usableFromInline
enum ScopeLifecycle {
  @usableFromInline static var open: UInt8 { 0 }
  @usableFromInline static var closing: UInt8 { 1 }
  @usableFromInline static var closed: UInt8 { 2 }
}

/// The scopes whose asynchronous close is running in the current task, innermost first: a
/// disposer that closes one of them must not wait for the close that runs it.
final class ClosingChain: Sendable {
  let scope: ObjectIdentifier
  let next: ClosingChain?

  init(scope: Scope, next: ClosingChain?) {
    self.scope = ObjectIdentifier(scope)
    self.next = next
  }

  func contains(_ scope: Scope) -> Bool {
    var link: ClosingChain? = self
    while let current = link {
      if current.scope == ObjectIdentifier(scope) { return true }
      link = current.next
    }
    return false
  }
}

extension Scope {
  /// The scopes being closed asynchronously by the current task (see ``ClosingChain``).
  @TaskLocal static var closingChain: ClosingChain?

  /// Whether this scope's close has run to its end.
  var isFullyClosed: Bool { lifecycle.load(ordering: .acquiring) == ScopeLifecycle.closed }

  /// Whether the caller is the close of this scope itself (a disposer closing its own scope, or a
  /// child's disposer closing this parent while this close waits for the child): waiting would
  /// wait forever.
  private var isClosedByCaller: Bool {
    if Scope.closingChain?.contains(self) == true { return true }
    return withStateIfMade { $0?.synchronousCloser } == currentThreadID()
  }

  /// Blocks until another close of this scope has run to its end.
  func waitUntilClosed() {
    guard !isFullyClosed, !isClosedByCaller else { return }
    var pause: UInt32 = 20
    while !isFullyClosed {
      usleep(pause)
      pause = min(pause * 2, 1_000)
    }
  }

  /// Suspends until another close of this scope has run to its end. Cancellation does not end the
  /// wait early: the caller relies on everything being disposed.
  func waitUntilClosed() async {
    guard !isFullyClosed, !isClosedByCaller else { return }
    var pause = 20
    while !isFullyClosed {
      if Task.isCancelled {
        usleep(UInt32(pause))
      } else {
        try? await Task.sleep(for: .microseconds(pause))
      }
      pause = min(pause * 2, 1_000)
    }
  }
}
